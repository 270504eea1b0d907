"""Helpers for the board-game tests: play scripted moves, run random playouts in bulk, check turn invariants."""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from parallax import MARLState, VmapWrapper


def turn_action(env: Any, state: MARLState, move: int, waiting: int | None = None) -> jax.Array:
    """The joint action where the player to move plays `move` and the waiting player `waiting` (default: the no-op)."""
    to_move = int(state.env_state.to_move)
    action = [env.no_op, env.no_op] if waiting is None else [waiting, waiting]
    action[to_move] = move
    return jnp.asarray(action, jnp.int32)


def assert_same_state(a: MARLState, b: MARLState) -> None:
    """Two states are equal leaf by leaf (keys compared by their data)."""
    a, b = (dataclasses.replace(s, key=jax.random.key_data(s.key)) for s in (a, b))
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True):
        np.testing.assert_array_equal(x, y)


def play(env: Any, moves: list[int], state: MARLState | None = None) -> list[MARLState]:
    """The states after each of `moves`, each played by whoever is to move, from reset or `state`."""
    step = jax.jit(env.step)
    states = [env.reset(key=jax.random.key(0)) if state is None else state]
    for move in moves:
        states.append(step(states[-1], turn_action(env, states[-1], move)))
    return states


def random_playout(env: Any, num_envs: int, num_steps: int, seed: int = 0) -> tuple[MARLState, MARLState]:
    """(state before, state after) for every step of `num_envs` games of random legal moves, stacked `[step, env]`.

    Finished games are reset selectively, so a trajectory holds many games.
    The waiting slot gets a random action (which the env must ignore).
    """
    venv = VmapWrapper(env, num_envs)

    @jax.jit
    def run(key: jax.Array) -> tuple[MARLState, MARLState]:
        key, reset_key = jax.random.split(key)
        state = venv.reset(key=reset_key)

        def body(state: MARLState, key: jax.Array) -> tuple[MARLState, tuple[MARLState, MARLState]]:
            move_key, noise_key, reset_key = jax.random.split(key, 3)
            legal = jnp.asarray(state.agents.action_mask)
            chosen = jax.random.categorical(move_key, jnp.where(legal, 0.0, -jnp.inf)).astype(jnp.int32)
            noise = jax.random.randint(noise_key, chosen.shape, -3, env.num_actions + 3)
            mover = jnp.arange(2)[None, :] == state.env_state.to_move[:, None]
            action = jnp.where(mover, chosen, noise)
            after = venv.step(state, action)
            return venv.reset(key=reset_key, state=after, done=after.done), (state, after)

        _, pairs = jax.lax.scan(body, state, jax.random.split(key, num_steps))
        return pairs

    return run(jax.random.key(seed))


def check_turn_invariants(env: Any, before: MARLState, after: MARLState) -> None:
    """The two-player bookkeeping every board game keeps, checked on stacked `[step, env]` transitions."""
    reward = np.asarray(after.agents.reward)
    ended = np.asarray(after.termination)
    mask = np.asarray(after.agents.action_mask)
    to_move = np.asarray(after.env_state.to_move)
    assert np.asarray(before.agents.active).all() and np.asarray(after.agents.active).all()
    assert not np.asarray(after.truncation).any()
    np.testing.assert_array_equal(reward.sum(axis=-1), 0.0)
    assert (reward[~ended] == 0).all(), "no reward before the end"
    outcomes = {tuple(r) for r in reward[ended].tolist()}
    assert outcomes <= {(1.0, -1.0), (-1.0, 1.0), (0.0, 0.0)}, outcomes
    np.testing.assert_array_equal(to_move, 1 - np.asarray(before.env_state.to_move))
    np.testing.assert_array_equal(np.asarray(after.step_count), np.asarray(before.step_count) + 1)
    no_op_only = np.zeros(env.num_actions, bool)
    no_op_only[env.no_op] = True
    waiting = 1 - to_move
    waiting_rows = np.take_along_axis(mask, waiting[..., None, None], axis=-2)[..., 0, :]
    mover_rows = np.take_along_axis(mask, to_move[..., None, None], axis=-2)[..., 0, :]
    assert (waiting_rows == no_op_only).all(), "the waiting player may only pass the no-op"
    assert (mover_rows[ended] == no_op_only).all(), "a finished game leaves only the no-op"
    assert not mover_rows[~ended][:, env.no_op].any(), "the mover may not play the no-op"
    assert mover_rows[~ended].any(axis=-1).all(), "the mover always has a legal move"
    game_over_reward = reward[ended]
    winners = np.asarray(after.env_state.winner)[ended]
    expected = np.where(winners[:, None] < 0, 0.0, np.where(np.arange(2)[None, :] == winners[:, None], 1.0, -1.0))
    np.testing.assert_array_equal(game_over_reward, expected)
    check_observations(env, after)


def check_observations(env: Any, state: MARLState) -> None:
    """Each player's int8 view is the board times its mark (+1 slot 0, -1 slot 1), plus a my-turn plane where
    the env has one; the global observation is slot 0's board then whose turn it is."""
    cells = np.asarray(state.env_state.board).astype(np.int64)
    to_move = np.asarray(state.env_state.to_move)
    board = cells.reshape(cells.shape[:-1] + (env.height, env.width))
    observation = np.asarray(state.agents.observation)
    assert observation.dtype == np.int8
    views = observation[..., 0] if env.turn_plane else observation
    np.testing.assert_array_equal(views[..., 0, :, :], board)
    np.testing.assert_array_equal(views[..., 1, :, :], -board)
    if env.turn_plane:
        my_turn = np.arange(2) == to_move[..., None]
        np.testing.assert_array_equal(observation[..., 1], np.broadcast_to(my_turn[..., None, None], views.shape))
    global_observation = np.asarray(state.global_observation)
    assert global_observation.dtype == np.int8
    np.testing.assert_array_equal(global_observation, np.concatenate([cells, to_move[..., None]], axis=-1))
