"""Evaluation's compiled programs, reused: one per (env, episodes, max steps, mesh, kind of player).

Evaluating a policy, or playing a match of the leaderboard's round robin,
compiles a whole batch of episodes. The players go into the program as
arguments (their arrays as inputs, everything else as part of the program's
identity), so a second policy of the same networks, or the same scripted
player again, runs the program already compiled. Envs are immutable and
hashed by identity: the one env object `registry.resolve` gives for an id
serves every evaluation of it, and so does its program.

A job over many ids in one process (a batch, re-measuring, the random scores) lets go of every program after each
id with `release_programs`: XLA keeps a compiled program's machine code mapped into the process while JAX caches
it, and a Linux process may hold 65,530 memory maps by default (`vm.max_map_count`), about 25 Playground ids'
worth; past that the compiler crashes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable
from typing import Any

import jax
from jax.sharding import Mesh
from jaxtyping import Array, PRNGKeyArray

from parallax.core import AnyEnv
from parallax_zoo.agents.array_leaves import join_arrays, split_arrays
from parallax_zoo.agents.player import Player
from parallax_zoo.agents.rollout import play_episodes
from parallax_zoo.agents.selfplay import Results, head_to_head

CACHE_SIZE = 64
"""Programs kept; the least recently used go first."""


def play(
    env: AnyEnv, player: Player, key: PRNGKeyArray, episodes: int, max_steps: int, mesh: Mesh | None = None
) -> tuple[Array, Array]:
    """`rollout.play_episodes` on `env`, compiled once per kind of player."""
    return _run("episodes", env, (player,), key, episodes, max_steps, mesh)


def match(
    env: AnyEnv,
    player: Player,
    opponent: Player,
    key: PRNGKeyArray,
    episodes: int,
    max_steps: int,
    mesh: Mesh | None = None,
) -> Results:
    """`selfplay.head_to_head` on `env`, compiled once per kind of player and opponent."""
    return _run("match", env, (player, opponent), key, episodes, max_steps, mesh)


def _run(
    kind: str,
    env: AnyEnv,
    players: tuple[Player, ...],
    key: PRNGKeyArray,
    episodes: int,
    max_steps: int,
    mesh: Mesh | None,
) -> Any:
    arrays, structure = split_arrays(players)
    compile_ = _compile_cached if _hashable((env, structure)) else _compile  # something unhashable: compile afresh
    return compile_(kind, env, episodes, max_steps, mesh, structure)(arrays, key)


def _compile(
    kind: str, env: AnyEnv, episodes: int, max_steps: int, mesh: Mesh | None, structure: Hashable
) -> Callable[[list[Array], PRNGKeyArray], Any]:
    def run(arrays: list[Array], key: PRNGKeyArray) -> Any:
        players = join_arrays(arrays, structure)
        if kind == "episodes":
            return play_episodes(env, players[0], key, episodes, max_steps, mesh)
        return head_to_head(env, players[0], players[1], key, episodes, max_steps, mesh)

    return jax.jit(run)


_compile_cached = functools.lru_cache(maxsize=CACHE_SIZE)(_compile)


def release_programs() -> None:
    """Let go of every compiled program, evaluation's and JAX's own (module docstring: why a long job must)."""
    _compile_cached.cache_clear()
    jax.clear_caches()


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True
