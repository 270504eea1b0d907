"""Play-time search never misses a one-move win and never allows a one-move loss that a move prevents.

Checked on tactical positions from random play, both seats, ConnectFour and
Othello, for the shipped baselines' whole agents and for a network that knows
nothing, so the network's prior cannot be what saves it.
"""

from __future__ import annotations

import random
from functools import cache
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers.board_reference import connect_four_drop, has_line
from helpers.compile_flags import DEFAULT_COMPILE_OPTIONS

import parallax_zoo
from parallax_zoo.agents.search import SearchPlayer
from parallax_zoo.policies.loading import load_folder

BASELINES = Path(__file__).resolve().parents[3] / "baselines"


def mover_reward(state: Any, mover: jax.Array) -> jax.Array:
    return jnp.where(mover == 0, state.agents.reward[..., 0], state.agents.reward[..., 1])


def mover_mask(state: Any) -> jax.Array:
    mask = state.agents.action_mask
    return jnp.where((state.env_state.to_move == 0)[..., None], mask[..., 0, :], mask[..., 1, :])


@cache
def classify(env: Any, considered: int) -> Any:
    """For one state: the mover's legal winning moves, and its legal moves after which the opponent can win at once
    (or that lose themselves), by stepping the env over every move and every reply to its first `considered` legal
    moves (and whether it has more legal moves than that)."""
    moves = jnp.arange(env.num_actions)

    def after(state: Any, move: jax.Array) -> Any:
        return env.step(state, jnp.stack([move, move]))

    def one(state: Any) -> tuple[jax.Array, jax.Array, jax.Array]:
        mover, legal = state.env_state.to_move, mover_mask(state)
        children = jax.vmap(lambda move: after(state, move))(moves)
        reward = mover_reward(children, mover)
        first = jnp.argsort(~legal, stable=True)[:considered]
        grandchildren = jax.vmap(lambda move: jax.vmap(lambda reply: after(after(state, move), reply))(moves))(first)
        reply_wins = (mover_reward(grandchildren, 1 - mover) > 0) & jax.vmap(mover_mask)(
            jax.tree_util.tree_map(lambda leaf: leaf[first], children)
        )
        opponent_wins = jnp.zeros(env.num_actions, jnp.bool_).at[first].set(jnp.any(reply_wins, axis=-1))
        losing = legal & ((reward < 0) | (opponent_wins & ~children.termination))
        return legal & (reward > 0), losing, jnp.sum(legal) > considered

    return jax.jit(jax.vmap(one))


def tactical_positions(
    env_id: str, games: int, plies: int, skip: int, seed: int, considered: int
) -> dict[str, np.ndarray]:
    """Positions from uniformly random play (ply `skip` onwards, at most `considered` legal moves) where the mover
    can win at once, or must block: some legal move lets the opponent win at once and some other does not.
    Cells, mover, wins, losing moves and legal moves."""
    env = parallax_zoo.make(env_id).unwrapped

    @jax.jit
    def playout(key: jax.Array) -> Any:
        def body(state: Any, key: jax.Array) -> tuple[Any, Any]:
            action = jax.random.categorical(key, jnp.where(state.agents.action_mask, 0.0, -jnp.inf)).astype(jnp.int32)
            return jax.vmap(env.step)(state, action), state

        start = jax.vmap(lambda k: env.reset(key=k))(jax.random.split(key, games))
        return jax.lax.scan(body, start, jax.random.split(key, plies))[1]

    states = playout(jax.random.key(seed))
    states = jax.tree_util.tree_map(lambda leaf: leaf[skip:].reshape(-1, *leaf.shape[2:]), states)
    states = jax.tree_util.tree_map(lambda leaf: leaf[np.asarray(~states.termination)], states)
    wins, losing, crowded = (np.asarray(x) for x in classify(env, considered)(states))
    legal = np.asarray(mover_mask(states))
    must_block = losing.any(-1) & (legal & ~losing).any(-1)
    keep = (wins.any(-1) | must_block) & ~crowded
    return {
        "cells": np.asarray(states.env_state.board)[keep],
        "mover": np.asarray(states.env_state.to_move)[keep],
        "wins": wins[keep],
        "losing": losing[keep],
        "legal": legal[keep],
    }


def misses(agent: SearchPlayer, positions: dict[str, np.ndarray], batch: int = 512) -> dict[str, int]:
    """How often the agent's searched move misses a win, or allows a one-move loss it could prevent. The search
    compiles as users', since its root tactics check (`tactics_depth`) is the costly part to run."""
    search = jax.jit(agent.search, compiler_options=DEFAULT_COMPILE_OPTIONS)
    count = len(positions["cells"])
    size = -(-count // batch) * batch  # whole batches, so one compiled search serves them all
    cells = np.resize(positions["cells"], (size, positions["cells"].shape[1]))
    mover = np.resize(positions["mover"], size)
    moves = np.concatenate(
        [
            np.asarray(search(jnp.asarray(cells[i : i + batch]), jnp.asarray(mover[i : i + batch]), jax.random.key(i)))
            for i in range(0, size, batch)
        ]
    )[:count]
    rows = np.arange(count)
    can_win = positions["wins"].any(-1)
    missed_win = can_win & ~positions["wins"][rows, moves]
    allowed_loss = ~can_win & positions["losing"][rows, moves]
    return {"missed_win": int(missed_win.sum()), "allowed_loss": int(allowed_loss.sum()), "positions": len(moves)}


@cache
def positions_of(env_id: str, games: int) -> dict[str, np.ndarray]:
    if env_id == "ConnectFour-v0":
        return tactical_positions(env_id, games=games, plies=42, skip=4, seed=0, considered=7)
    return tactical_positions(env_id, games=games, plies=66, skip=50, seed=0, considered=12)


def blank(agent: SearchPlayer) -> SearchPlayer:
    """The agent's search over a network that knows nothing: zero weights, a uniform prior and a value of 0."""
    return SearchPlayer(jax.tree_util.tree_map(jnp.zeros_like, agent.policy), agent.game, agent.settings)


def c4_reference(cells: list[int], mover: int) -> tuple[set[int], set[int]]:
    """Plain-Python ConnectFour: the mover's winning columns and the columns after which the opponent wins at once."""
    mark = 1 if mover == 0 else -1
    wins, losing = set(), set()
    for col in range(7):
        after = connect_four_drop(cells, col, mark)
        if after is None:
            continue
        if has_line(after, 6, 7, mark, 4):
            wins.add(col)
        else:
            replies = [connect_four_drop(after, c, -mark) for c in range(7)]
            if any(reply is not None and has_line(reply, 6, 7, -mark, 4) for reply in replies):
                losing.add(col)
    return wins, losing


def test_the_connect_four_tactical_set_agrees_with_plain_python_rules_and_covers_both_seats() -> None:
    positions = positions_of("ConnectFour-v0", 320)
    assert len(positions["cells"]) >= 2000
    assert set(positions["mover"].tolist()) == {0, 1}
    assert positions["wins"].any(-1).sum() > 300 and (~positions["wins"].any(-1)).sum() > 300, "wins and must-blocks"
    for i in random.Random(0).sample(range(len(positions["cells"])), 150):
        wins, losing = c4_reference(positions["cells"][i].tolist(), int(positions["mover"][i]))
        assert wins == set(np.flatnonzero(positions["wins"][i]).tolist())
        assert losing == set(np.flatnonzero(positions["losing"][i]).tolist())


def assert_never_misses(env_id: str, games: int, least: int, blank_too: bool) -> None:
    env = parallax_zoo.make(env_id)
    agent = load_folder(BASELINES / env_id, env)
    assert isinstance(agent, SearchPlayer)
    positions = positions_of(env_id, games)
    assert len(positions["cells"]) >= least and set(positions["mover"].tolist()) == {0, 1}
    assert positions["wins"].any(-1).sum() > least // 20 and (~positions["wins"].any(-1)).sum() > least // 20
    for player in (agent, blank(agent)) if blank_too else (agent,):
        assert misses(player, positions) == {"missed_win": 0, "allowed_loss": 0, "positions": len(positions["cells"])}


def test_the_shipped_connect_four_agent_never_misses_a_one_move_tactic() -> None:
    assert_never_misses("ConnectFour-v0", 320, least=2000, blank_too=False)


@pytest.mark.slow
@pytest.mark.parametrize(("env_id", "games", "least"), [("ConnectFour-v0", 320, 2000), ("Othello-v0", 3072, 2000)])
def test_the_shipped_agents_and_a_blank_network_never_miss_a_one_move_tactic(
    env_id: str, games: int, least: int
) -> None:
    assert_never_misses(env_id, games, least, blank_too=True)
