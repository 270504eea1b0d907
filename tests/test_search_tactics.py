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
from board_reference import connect_four_drop, has_line

import parallax_zoo
from parallax_zoo.agents.search import SearchPlayer
from parallax_zoo.scoring.loading import load_folder

BASELINES = Path(__file__).resolve().parents[1] / "baselines"


def mover_reward(state: Any, mover: jax.Array) -> jax.Array:
    return jnp.where(mover == 0, state.agents.reward[..., 0], state.agents.reward[..., 1])


def mover_mask(state: Any) -> jax.Array:
    mask = state.agents.action_mask
    return jnp.where((state.env_state.to_move == 0)[..., None], mask[..., 0, :], mask[..., 1, :])


@cache
def classify(env: Any) -> Any:
    """For one state: the mover's legal winning moves, and its legal moves after which the opponent can win at once
    (or that lose themselves), by stepping the env two plies over every move pair."""
    moves = jnp.arange(env.num_actions)

    def after(state: Any, move: jax.Array) -> Any:
        return env.step(state, jnp.stack([move, move]))

    def one(state: Any) -> tuple[jax.Array, jax.Array]:
        mover, legal = state.env_state.to_move, mover_mask(state)
        children = jax.vmap(lambda move: after(state, move))(moves)
        reward = mover_reward(children, mover)
        grandchildren = jax.vmap(lambda child: jax.vmap(lambda move: after(child, move))(moves))(children)
        reply_wins = (mover_reward(grandchildren, 1 - mover) > 0) & jax.vmap(mover_mask)(children)
        opponent_wins = jnp.any(reply_wins, axis=-1) & ~children.termination
        return legal & (reward > 0), legal & ((reward < 0) | opponent_wins)

    return jax.jit(jax.vmap(one))


def tactical_positions(env_id: str, games: int, plies: int, skip: int, seed: int) -> dict[str, np.ndarray]:
    """Positions from uniformly random play (ply `skip` onwards) where the mover can win at once, or must block:
    some legal move lets the opponent win at once and some other does not. Cells, mover, wins and losing moves."""
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
    wins, losing = (np.asarray(x) for x in classify(env)(states))
    legal = np.asarray(mover_mask(states))
    must_block = losing.any(-1) & (legal & ~losing).any(-1)
    keep = wins.any(-1) | must_block
    return {
        "cells": np.asarray(states.env_state.board)[keep],
        "mover": np.asarray(states.env_state.to_move)[keep],
        "wins": wins[keep],
        "losing": losing[keep],
        "legal": legal[keep],
    }


def misses(agent: SearchPlayer, positions: dict[str, np.ndarray], batch: int = 512) -> dict[str, int]:
    """How often the agent's searched move misses a win, or allows a one-move loss it could prevent."""
    search = jax.jit(agent.search)
    moves = np.concatenate(
        [
            np.asarray(search(jnp.asarray(positions["cells"][i : i + batch]), jnp.asarray(positions["mover"][i : i + batch]),
                              jax.random.key(i)))
            for i in range(0, len(positions["cells"]), batch)
        ]
    )
    rows = np.arange(len(moves))
    can_win = positions["wins"].any(-1)
    missed_win = can_win & ~positions["wins"][rows, moves]
    allowed_loss = ~can_win & positions["losing"][rows, moves]
    return {"missed_win": int(missed_win.sum()), "allowed_loss": int(allowed_loss.sum()), "positions": len(moves)}


@cache
def positions_of(env_id: str) -> dict[str, np.ndarray]:
    if env_id == "ConnectFour-v0":
        return tactical_positions(env_id, games=192, plies=42, skip=4, seed=0)
    return tactical_positions(env_id, games=256, plies=64, skip=48, seed=0)


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
        elif any((reply := connect_four_drop(after, c, -mark)) is not None and has_line(reply, 6, 7, -mark, 4) for c in range(7)):
            losing.add(col)
    return wins, losing


def test_the_connect_four_tactical_set_agrees_with_plain_python_rules_and_covers_both_seats() -> None:
    positions = positions_of("ConnectFour-v0")
    assert len(positions["cells"]) >= 2000
    assert set(positions["mover"].tolist()) == {0, 1}
    assert positions["wins"].any(-1).sum() > 300 and (~positions["wins"].any(-1)).sum() > 300, "wins and must-blocks"
    for i in random.Random(0).sample(range(len(positions["cells"])), 150):
        wins, losing = c4_reference(positions["cells"][i].tolist(), int(positions["mover"][i]))
        assert wins == set(np.flatnonzero(positions["wins"][i]).tolist())
        assert losing == set(np.flatnonzero(positions["losing"][i]).tolist())


@pytest.mark.parametrize("env_id", ["ConnectFour-v0", "Othello-v0"])
def test_the_shipped_agent_and_a_blank_network_never_miss_a_one_move_tactic(env_id: str) -> None:
    env = parallax_zoo.make(env_id)
    agent = load_folder(BASELINES / env_id, env)
    assert isinstance(agent, SearchPlayer)
    positions = positions_of(env_id)
    assert len(positions["cells"]) >= 1000 and set(positions["mover"].tolist()) == {0, 1}
    assert positions["wins"].any(-1).sum() > 100 and (~positions["wins"].any(-1)).sum() > 100
    for player in (agent, blank(agent)):
        assert misses(player, positions) == {"missed_win": 0, "allowed_loss": 0, "positions": len(positions["cells"])}
