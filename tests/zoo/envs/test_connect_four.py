"""ConnectFour: protocol conformance, the rules on hand-worked games, and random playouts in bulk."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers.board_play import assert_same_state, check_turn_invariants, play, random_playout, turn_action
from helpers.board_reference import connect_four_drop, has_line
from hypothesis import given, settings
from hypothesis import strategies as st

from parallax import Box, Discrete, check_env, stack_space
from parallax_zoo.envs.connect_four import ConnectFour
from parallax_zoo.envs.rendering import BLUE, RED, WHITE, YELLOW

ENV = ConnectFour()
STEP = jax.jit(ENV.step)


def board_of(state) -> list[int]:
    return np.asarray(state.env_state.board).tolist()


def pair(first: int, second: int) -> list[int]:
    """Twelve moves filling column `first` bottom-up X, O, X, ... and column `second` O, X, O, ..., X starting."""
    return [first, second, second, first] * 3


def test_check_env_passes() -> None:
    check_env(ENV, num_steps=96)


def test_spaces() -> None:
    assert ENV.action_space == stack_space(Discrete(8), 2)
    assert ENV.observation_space == stack_space(Box(-1, 1, (6, 7), jnp.int8), 2)
    assert ENV.global_observation_space == Box(-1, 1, (43,), jnp.int8)


@pytest.mark.parametrize(
    "moves, winner",
    [
        ([0, 0, 1, 1, 2, 2, 3], 0),  # X across the bottom row
        ([0, 1, 0, 1, 0, 1, 0], 0),  # X up column 0
        ([0, 1, 1, 2, 2, 3, 2, 3, 3, 5, 3], 0),  # X on the rising diagonal (5,0)..(2,3)
        ([6, 5, 5, 4, 4, 3, 4, 3, 3, 1, 3], 0),  # X on the falling diagonal (2,3)..(5,6)
        ([0, 1, 0, 1, 2, 1, 6, 1], 1),  # O up column 1
    ],
)
def test_wins_pay_on_the_winning_move(moves: list[int], winner: int) -> None:
    states = play(ENV, moves)
    for state in states[:-1]:
        assert not bool(state.termination)
        np.testing.assert_array_equal(state.agents.reward, [0.0, 0.0])
    final = states[-1]
    assert bool(final.termination)
    np.testing.assert_array_equal(final.agents.reward, [1.0, -1.0] if winner == 0 else [-1.0, 1.0])
    assert has_line(board_of(final), 6, 7, 1 if winner == 0 else -1, 4)


def test_gravity_and_heights() -> None:
    state = play(ENV, [3, 3, 3])[-1]
    cells = np.asarray(state.env_state.board).reshape(6, 7)
    np.testing.assert_array_equal(cells[3:, 3], [1, -1, 1])
    assert not cells[:3].any() and not np.delete(cells, 3, axis=1).any()
    np.testing.assert_array_equal(state.env_state.heights, [0, 0, 0, 3, 0, 0, 0])


def test_full_board_without_a_line_is_a_draw() -> None:
    moves = pair(0, 2) + pair(1, 3) + pair(4, 6) + [5] * 6
    states = play(ENV, moves)
    assert not any(bool(s.termination) for s in states[:-1])
    final = states[-1]
    assert bool(final.termination)
    np.testing.assert_array_equal(final.agents.reward, [0.0, 0.0])
    cells = board_of(final)
    assert all(cells) and not has_line(cells, 6, 7, 1, 4) and not has_line(cells, 6, 7, -1, 4)
    np.testing.assert_array_equal(np.asarray(cells).reshape(6, 7)[5], [1, 1, -1, -1, 1, 1, -1])


def test_a_full_column_is_masked_and_playing_it_loses() -> None:
    states = play(ENV, [0] * 6)
    full = states[-1]
    assert not bool(full.termination)
    np.testing.assert_array_equal(np.asarray(full.agents.action_mask)[0], [False] + [True] * 6 + [False])
    final = STEP(full, turn_action(ENV, full, 0))
    assert bool(final.termination)
    np.testing.assert_array_equal(final.agents.reward, [-1.0, 1.0])
    assert board_of(final) == board_of(full)


@pytest.mark.parametrize("bad_move", [7, -1, 8, 1000])
def test_the_no_op_or_an_index_out_of_range_loses(bad_move: int) -> None:
    final = play(ENV, [3, bad_move])[-1]
    assert bool(final.termination)
    np.testing.assert_array_equal(final.agents.reward, [1.0, -1.0])


@settings(max_examples=20, deadline=None)
@given(
    moves=st.lists(st.integers(-1, 8), min_size=1, max_size=30),
    waiting=st.lists(st.integers(-(2**31), 2**31 - 1), min_size=30, max_size=30),
)
def test_random_sequences_match_the_reference_and_ignore_the_waiting_slot(moves: list[int], waiting: list[int]) -> None:
    state = ENV.reset(key=jax.random.key(1))
    cells, to_move = [0] * 42, 0
    for move, noise in zip(moves, waiting):
        quiet = STEP(state, turn_action(ENV, state, move))
        assert_same_state(quiet, STEP(state, turn_action(ENV, state, move, waiting=noise)))
        mark = 1 if to_move == 0 else -1
        after = connect_four_drop(cells, move, mark) if 0 <= move < 7 else None
        if after is None:
            assert bool(quiet.termination)
            np.testing.assert_array_equal(quiet.agents.reward, [-mark, mark])
            return
        cells = after
        assert board_of(quiet) == cells
        won, full = has_line(cells, 6, 7, mark, 4), all(cells)
        assert bool(quiet.termination) == (won or full)
        np.testing.assert_array_equal(quiet.agents.reward, [mark, -mark] if won else [0, 0])
        if won or full:
            return
        state, to_move = quiet, 1 - to_move


def test_random_playouts_keep_every_invariant() -> None:
    before, after = random_playout(ENV, num_envs=256, num_steps=60)
    check_turn_invariants(ENV, before, after)
    cells = np.asarray(after.env_state.board).reshape(*after.step_count.shape, 6, 7)
    ended = np.asarray(after.termination)
    assert ended.sum() > 300, "the playout should finish many games"
    filled = cells != 0
    np.testing.assert_array_equal(filled.sum(axis=-2), np.asarray(after.env_state.heights))
    assert not (filled[..., :-1, :] & ~filled[..., 1:, :]).any(), "a piece never floats above an empty cell"
    x_count, o_count = (cells == 1).sum((-1, -2)), (cells == -1).sum((-1, -2))
    np.testing.assert_array_equal(x_count + o_count, np.asarray(after.step_count))
    np.testing.assert_array_equal(x_count - o_count, np.asarray(after.env_state.to_move))
    live = ~ended
    mover_rows = np.asarray(after.agents.action_mask)[live, np.asarray(after.env_state.to_move)[live]]
    np.testing.assert_array_equal(mover_rows[:, :7], np.asarray(after.env_state.heights)[live] < 6)
    winners = np.asarray(after.env_state.winner).ravel()[::11]
    for board, done, winner in zip(cells.reshape(-1, 42)[::11].tolist(), ended.ravel()[::11], winners):
        x_line, o_line = has_line(board, 6, 7, 1, 4), has_line(board, 6, 7, -1, 4)
        assert done == (x_line or o_line or all(board))
        assert winner == (0 if x_line else 1 if o_line else -1)


def test_render_shapes_and_pieces() -> None:
    state = play(ENV, [0, 0])[-1]
    image = jax.jit(ENV.render)(state)
    assert image.shape == (192, 224, 3) and image.dtype == jnp.uint8
    np.testing.assert_array_equal(image[5 * 32 + 16, 16], RED)  # X at the bottom of column 0
    np.testing.assert_array_equal(image[4 * 32 + 16, 16], YELLOW)  # O on top of it
    np.testing.assert_array_equal(image[16, 16], WHITE)  # an empty hole
    np.testing.assert_array_equal(image[0, 0], BLUE)  # the frame


def test_render_text() -> None:
    state = play(ENV, [3, 3, 4])[-1]
    expected = "\n".join(
        [
            "  0 1 2 3 4 5 6",
            "0 . . . . . . .",
            "1 . . . . . . .",
            "2 . . . . . . .",
            "3 . . . . . . .",
            "4 . . . O . . .",
            "5 . . . X X . .",
            "O to move",
        ]
    )
    assert ENV.render_text(state) == expected


def test_line_cells_lists_every_four_in_a_row_once() -> None:
    from parallax_zoo.envs.board import line_cells

    lines = line_cells(6, 7, 4)
    assert len(lines) == 6 * 4 + 7 * 3 + 2 * 3 * 4  # across, down, both diagonals
    assert len({tuple(sorted(line)) for line in lines.tolist()}) == len(lines)
    for line in lines.tolist():
        cells = [0] * 42
        for cell in line:
            cells[cell] = 1
        assert has_line(cells, 6, 7, 1, 4), line


@settings(max_examples=200, deadline=None)
@given(st.lists(st.booleans(), min_size=42, max_size=42))
def test_column_bit_sets_find_four_in_a_row_like_the_reference(pieces: list[bool]) -> None:
    from parallax_zoo.envs.connect_four import _four_in_a_row

    columns = [sum(1 << (5 - row) for row in range(6) if pieces[row * 7 + col]) for col in range(7)]
    expected = has_line([int(p) for p in pieces], 6, 7, 1, 4)
    assert bool(_four_in_a_row(jnp.asarray(columns, jnp.int32))) == expected
