"""Every leaf of every batched board step, checked against plain-Python rules, thousands of transitions per game.

The transitions come from jitted `VmapWrapper` playouts with illegal moves,
noise in the waiting slot, finished boards stepped again (absorbing) and
selective resets; each one is recomputed from its `before` state by the loops
of `board_reference`, so the batched step may change how it computes, never what.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers.board_reference import connect_four_drop, has_line, othello_legal, othello_play

from parallax import MARLState, VmapWrapper
from parallax_zoo.envs.connect_four import ConnectFour
from parallax_zoo.envs.othello import Othello
from parallax_zoo.envs.tictactoe import TicTacToe


def transitions(env: Any, num_envs: int, num_steps: int, seed: int) -> tuple[MARLState, jax.Array, MARLState]:
    """(before, joint action, after) of every step, stacked `[step, env]`; finished games are reset with chance 1/2."""
    venv = VmapWrapper(env, num_envs)

    def body(state: MARLState, key: jax.Array) -> tuple[MARLState, tuple[MARLState, jax.Array, MARLState]]:
        move_key, noise_key, illegal_key, reset_key, coin_key = jax.random.split(key, 5)
        mask = jnp.asarray(state.agents.action_mask)
        chosen = jax.random.categorical(move_key, jnp.where(mask, 0.0, -jnp.inf)).astype(jnp.int32)
        noise = jax.random.randint(noise_key, chosen.shape, -3, env.num_actions + 3)
        mover = jnp.arange(2) == state.env_state.to_move[:, None]
        honest = mover & ~jax.random.bernoulli(illegal_key, 0.05, chosen.shape)
        action = jnp.where(honest, chosen, noise)
        after = venv.step(state, action)
        reset = after.done & jax.random.bernoulli(coin_key, 0.5, after.done.shape)
        return venv.reset(reset_key, state=after, done=reset), (state, action, after)

    def run(key: jax.Array) -> tuple[MARLState, jax.Array, MARLState]:
        before, action, after = jax.lax.scan(body, venv.reset(key), jax.random.split(key, num_steps))[1]
        before, after = (dataclasses.replace(s, key=jax.random.key_data(s.key)) for s in (before, after))
        return before, action, after

    return jax.device_get(jax.jit(run)(jax.random.key(seed)))


def tic_tac_toe_moves(cells: list[int], mark: int) -> tuple[list[bool], Any]:
    """The mover's legal actions (no-op excluded) and how to play one: a cell, win on three in a row, draw when full."""

    def play(move: int) -> tuple[list[int], bool, bool]:
        after = list(cells)
        after[move] = mark
        won = has_line(after, 3, 3, mark, 3)
        return after, won, won or all(after)

    return [v == 0 for v in cells], play


def connect_four_moves(cells: list[int], mark: int) -> tuple[list[bool], Any]:
    """The mover's legal columns and how to drop into one: win on four in a row, draw when full."""

    def play(move: int) -> tuple[list[int], bool, bool]:
        after = connect_four_drop(cells, move, mark)
        assert after is not None
        won = has_line(after, 6, 7, mark, 4)
        return after, won, won or all(after)

    return [connect_four_drop(cells, column, mark) is not None for column in range(7)], play


def othello_moves(cells: list[int], mark: int) -> tuple[list[bool], Any]:
    """The mover's placements plus the pass (legal only without a placement), and how to play one (over: nobody can
    place)."""
    placements = othello_legal(cells, mark)

    def play(move: int) -> tuple[list[int], bool, bool]:
        after = cells if move == 64 else othello_play(cells, move, mark)
        over = not any(othello_legal(after, 1)) and not any(othello_legal(after, -1))
        return after, False, over

    return [*placements, not any(placements)], play


GAMES = {
    "tic_tac_toe": (TicTacToe(), tic_tac_toe_moves, 256, 24),
    "connect_four": (ConnectFour(), connect_four_moves, 128, 40),
    "othello": (Othello(), othello_moves, 48, 40),
}


def expected_after(
    env: Any, moves_of: Any, cells: list[int], to_move: int, winner: int, finished: bool, action: list[int]
) -> dict[str, Any]:
    """The reference's next position, masks, rewards and termination after one joint action, and whether it was
    illegal."""
    reward, illegal = [0.0, 0.0], False
    if finished:  # absorbing: nothing moves, nothing is paid
        ended = True
    else:
        mark = 1 - 2 * to_move
        legal, play = moves_of(cells, mark)
        move = action[to_move]
        if not (0 <= move < len(legal) and legal[move]):  # an illegal move loses on the spot
            winner, ended, illegal = 1 - to_move, True, True
        else:
            cells, won, ended = play(move)
            if won:
                winner = to_move
            elif ended and isinstance(env, Othello):
                balance = sum(cells)
                winner = 0 if balance > 0 else 1 if balance < 0 else -1
        to_move = 1 - to_move
        if ended and winner != -1:
            reward = [1.0 if slot == winner else -1.0 for slot in range(2)]
    mask = np.zeros((2, env.num_actions), bool)
    mask[:, -1] = True
    if not ended:
        mask[to_move, :-1] = moves_of(cells, 1 - 2 * to_move)[0]
        mask[to_move, -1] = False
    return {
        "cells": cells,
        "to_move": to_move,
        "winner": winner,
        "ended": ended,
        "reward": reward,
        "mask": mask,
        "illegal": illegal,
    }


@pytest.mark.parametrize("name", list(GAMES))
def test_every_batched_transition_matches_the_reference_rules(name: str) -> None:
    env, moves_of, num_envs, num_steps = GAMES[name]
    before, action, after = transitions(env, num_envs, num_steps, seed=7)
    wants = [
        expected_after(
            env,
            moves_of,
            before.env_state.board[t, e].tolist(),
            int(before.env_state.to_move[t, e]),
            int(before.env_state.winner[t, e]),
            bool(before.termination[t, e]),
            action[t, e].tolist(),
        )
        for t in range(num_steps)
        for e in range(num_envs)
    ]

    def want(field: str, dtype: Any) -> np.ndarray:
        return np.asarray([w[field] for w in wants], dtype).reshape(num_steps, num_envs, *np.shape(wants[0][field]))

    cells, to_move = want("cells", np.int8), want("to_move", np.int32)
    np.testing.assert_array_equal(after.env_state.board, cells)
    np.testing.assert_array_equal(after.env_state.to_move, to_move)
    np.testing.assert_array_equal(after.env_state.winner, want("winner", np.int32))
    np.testing.assert_array_equal(after.termination, want("ended", bool))
    np.testing.assert_array_equal(after.truncation, False)
    np.testing.assert_array_equal(after.agents.reward, want("reward", np.float32))
    np.testing.assert_array_equal(after.agents.action_mask, want("mask", bool))
    np.testing.assert_array_equal(after.agents.active, True)
    views = np.stack([cells, -cells], axis=2).reshape(num_steps, num_envs, 2, env.height, env.width)
    observation = after.agents.observation
    assert observation.dtype == np.int8 and after.global_observation.dtype == np.int8
    if env.turn_plane:  # Othello: the signed board, then 1 on the player's turn
        my_turn = (to_move[..., None] == np.arange(2)).astype(np.int8)[..., None, None]
        np.testing.assert_array_equal(observation[..., 0], views)
        np.testing.assert_array_equal(observation[..., 1], np.broadcast_to(my_turn, views.shape))
    else:
        np.testing.assert_array_equal(observation, views)
    np.testing.assert_array_equal(after.global_observation, np.concatenate([cells, to_move[..., None]], axis=-1))
    np.testing.assert_array_equal(after.step_count, before.step_count + 1)
    np.testing.assert_array_equal(after.key, before.key)
    absorbed, illegal = int(before.termination.sum()), sum(w["illegal"] for w in wants)
    assert absorbed > num_envs and illegal > 10, "the playouts should step finished boards and play illegal moves"
