"""TicTacToe: protocol conformance, the rules on hand-worked games, and random playouts in bulk."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers.board_play import assert_same_state, check_turn_invariants, play, random_playout, turn_action
from helpers.board_reference import has_line
from hypothesis import given, settings
from hypothesis import strategies as st

from parallax import Box, Discrete, check_env, stack_space
from parallax_zoo.envs.rendering import BLUE, WHITE
from parallax_zoo.envs.tictactoe import TicTacToe

ENV = TicTacToe()
STEP = jax.jit(ENV.step)


def board_of(state) -> list[int]:
    return np.asarray(state.env_state.board).tolist()


def test_check_env_passes() -> None:
    check_env(ENV, num_steps=96)


def test_spaces() -> None:
    assert ENV.num_agents == 2
    assert ENV.action_space == stack_space(Discrete(10), 2)
    assert ENV.observation_space == stack_space(Box(-1, 1, (3, 3), jnp.int8), 2)
    assert ENV.global_observation_space == Box(-1, 1, (10,), jnp.int8)


def test_reset_masks_and_observation() -> None:
    state = ENV.reset(key=jax.random.key(0))
    mask = np.asarray(state.agents.action_mask)
    np.testing.assert_array_equal(mask[0], [True] * 9 + [False])
    np.testing.assert_array_equal(mask[1], [False] * 9 + [True])
    assert not np.asarray(state.agents.observation).any()
    np.testing.assert_array_equal(state.global_observation, np.zeros(10))


@pytest.mark.parametrize(
    "moves, winner",
    [
        ([0, 3, 1, 4, 2], 0),  # X across the top row
        ([0, 1, 3, 2, 6], 0),  # X down the left column
        ([0, 1, 4, 2, 8], 0),  # X along the diagonal
        ([2, 0, 4, 1, 6], 0),  # X along the anti-diagonal
        ([0, 3, 1, 4, 6, 5], 1),  # O across the middle row
        ([0, 2, 1, 4, 3, 6], 1),  # O along the anti-diagonal
    ],
)
def test_wins_pay_on_the_winning_move(moves: list[int], winner: int) -> None:
    states = play(ENV, moves)
    for state in states[:-1]:
        assert not bool(state.termination)
        np.testing.assert_array_equal(state.agents.reward, [0.0, 0.0])
    final = states[-1]
    assert bool(final.termination)
    expected = [1.0, -1.0] if winner == 0 else [-1.0, 1.0]
    np.testing.assert_array_equal(final.agents.reward, expected)
    assert int(final.env_state.winner) == winner
    np.testing.assert_array_equal(final.agents.active, [True, True])
    no_op_only = [False] * 9 + [True]
    np.testing.assert_array_equal(final.agents.action_mask, [no_op_only, no_op_only])


def test_full_board_without_a_line_is_a_draw() -> None:
    # X O X / X X O / O X O, hand-checked: no three in a row for either side.
    states = play(ENV, [0, 1, 2, 5, 3, 6, 4, 8, 7])
    assert not any(bool(s.termination) for s in states[:-1])
    assert bool(states[-1].termination)
    np.testing.assert_array_equal(states[-1].agents.reward, [0.0, 0.0])
    assert board_of(states[-1]) == [1, -1, 1, 1, 1, -1, -1, 1, -1]


@pytest.mark.parametrize("bad_move", [4, 9, 10, -1, 2**31 - 1])
def test_an_illegal_move_loses(bad_move: int) -> None:
    # X plays the centre, then O plays an occupied cell, the no-op or an index out of range.
    states = play(ENV, [4, bad_move])
    final = states[-1]
    assert bool(final.termination)
    np.testing.assert_array_equal(final.agents.reward, [1.0, -1.0])
    assert board_of(final) == board_of(states[1])


def test_the_no_op_on_your_own_turn_loses_for_slot_0() -> None:
    final = play(ENV, [9])[-1]
    assert bool(final.termination)
    np.testing.assert_array_equal(final.agents.reward, [-1.0, 1.0])


def test_masks_and_observations_follow_the_board() -> None:
    state = play(ENV, [4, 0])[-1]  # X centre, O top-left; X to move
    mask = np.asarray(state.agents.action_mask)
    np.testing.assert_array_equal(mask[0], [False, True, True, True, False, True, True, True, True, False])
    np.testing.assert_array_equal(mask[1], [False] * 9 + [True])
    obs = np.asarray(state.agents.observation)
    assert obs.dtype == np.int8
    np.testing.assert_array_equal(obs[0], [[-1, 0, 0], [0, 1, 0], [0, 0, 0]])  # X: own centre +1, O's corner -1
    np.testing.assert_array_equal(
        obs[1], [[1, 0, 0], [0, -1, 0], [0, 0, 0]]
    )  # O sees the same board with roles swapped
    global_observation = np.asarray(state.global_observation)
    assert global_observation.dtype == np.int8
    np.testing.assert_array_equal(global_observation, [-1, 0, 0, 0, 1, 0, 0, 0, 0, 0])


@settings(max_examples=25, deadline=None)
@given(
    moves=st.lists(st.integers(-2, 11), min_size=1, max_size=10),
    waiting=st.lists(st.integers(-(2**31), 2**31 - 1), min_size=10, max_size=10),
)
def test_random_sequences_match_the_reference_and_ignore_the_waiting_slot(moves: list[int], waiting: list[int]) -> None:
    state = ENV.reset(key=jax.random.key(1))
    cells, to_move = [0] * 9, 0
    for move, noise in zip(moves, waiting):
        quiet = STEP(state, turn_action(ENV, state, move))
        noisy = STEP(state, turn_action(ENV, state, move, waiting=noise))
        assert_same_state(quiet, noisy)
        mark = 1 if to_move == 0 else -1
        if not (0 <= move < 9 and cells[move] == 0):
            assert bool(quiet.termination)
            np.testing.assert_array_equal(quiet.agents.reward, [-mark, mark])
            return
        cells[move] = mark
        assert board_of(quiet) == cells
        won, full = has_line(cells, 3, 3, mark, 3), all(cells)
        assert bool(quiet.termination) == (won or full)
        np.testing.assert_array_equal(quiet.agents.reward, [mark, -mark] if won else [0, 0])
        if won or full:
            return
        state, to_move = quiet, 1 - to_move


def test_random_playouts_keep_every_invariant() -> None:
    before, after = random_playout(ENV, num_envs=256, num_steps=40)
    check_turn_invariants(ENV, before, after)
    cells = np.asarray(after.env_state.board)
    ended = np.asarray(after.termination)
    assert ended.sum() > 500, "the playout should finish many games"
    assert set(np.unique(cells)) <= {-1, 0, 1}
    x_count, o_count = (cells == 1).sum(-1), (cells == -1).sum(-1)
    np.testing.assert_array_equal(x_count + o_count, np.asarray(after.step_count))
    np.testing.assert_array_equal(x_count - o_count, np.asarray(after.env_state.to_move))  # X moved last iff O to move
    live = ~ended
    mover_rows = np.asarray(after.agents.action_mask)[live, np.asarray(after.env_state.to_move)[live]]
    np.testing.assert_array_equal(mover_rows[:, :9], cells[live] == 0)
    winners = np.asarray(after.env_state.winner).ravel()[::7]
    for board, done, winner in zip(cells.reshape(-1, 9)[::7].tolist(), ended.ravel()[::7], winners):
        x_line, o_line = has_line(board, 3, 3, 1, 3), has_line(board, 3, 3, -1, 3)
        assert done == (x_line or o_line or all(board))
        assert winner == (0 if x_line else 1 if o_line else -1)


def test_render_shapes_and_pieces() -> None:
    state = play(ENV, [4, 0])[-1]
    image = jax.jit(ENV.render)(state)
    assert image.shape == (96, 96, 3) and image.dtype == jnp.uint8
    np.testing.assert_array_equal(image[48, 48], BLUE)  # the centre of X's cross
    np.testing.assert_array_equal(image[16, 16], WHITE)  # the hole in O's ring
    batched = jax.vmap(ENV.render)(jax.tree.map(lambda x: jnp.stack([x, x]), state))
    assert batched.shape == (2, 96, 96, 3)


def test_render_text() -> None:
    state = play(ENV, [4, 0])[-1]
    assert ENV.render_text(state) == "  0 1 2\n0 O . .\n1 . X .\n2 . . .\nX to move"
    assert ENV.render_text(play(ENV, [0, 3, 1, 4, 2])[-1]).endswith("X wins")
    with pytest.raises(ValueError, match="unbatched"):
        ENV.render_text(jax.tree.map(lambda x: jnp.stack([x, x]), state))


def test_line_table_matches_the_reference_for_every_set_of_cells() -> None:
    from parallax_zoo.envs.board import line_cells
    from parallax_zoo.envs.tictactoe import _HAS_LINE

    assert len(line_cells(3, 3, 3)) == 8  # 3 rows, 3 columns, 2 diagonals
    for bits in range(1 << 9):
        cells = [(bits >> cell) & 1 for cell in range(9)]
        assert bool(_HAS_LINE[bits]) == has_line(cells, 3, 3, 1, 3), bits
