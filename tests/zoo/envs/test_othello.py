"""Othello: protocol conformance, flips and passes on hand-built positions, and random playouts in bulk."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers.board_play import assert_same_state, check_turn_invariants, play, random_playout, turn_action
from helpers.board_reference import othello_flips, othello_legal, othello_play
from hypothesis import given, settings
from hypothesis import strategies as st

from parallax import Box, Discrete, check_env, stack_space
from parallax_zoo.envs.othello import Othello
from parallax_zoo.envs.rendering import BLACK, GREEN, WHITE

ENV = Othello()
STEP = jax.jit(ENV.step)
PASS, NO_OP = 64, 65
KEY = jax.random.key(0)


def board_of(state) -> list[int]:
    return np.asarray(state.env_state.board).tolist()


def position(pieces: dict[tuple[int, int], int], to_move: int):
    cells = np.zeros(64, np.int8)
    for (row, col), mark in pieces.items():
        cells[row * 8 + col] = mark
    return ENV.position(cells, to_move, key=KEY)


def legal_cells(state, player: int) -> set[int]:
    return set(np.flatnonzero(np.asarray(state.agents.action_mask)[player]).tolist())


def test_check_env_passes() -> None:
    check_env(ENV, num_steps=96)


def test_spaces() -> None:
    assert ENV.action_space == stack_space(Discrete(66), 2)
    assert ENV.observation_space == stack_space(Box(-1, 1, (8, 8, 2), jnp.int8), 2)
    assert ENV.global_observation_space == Box(-1, 1, (65,), jnp.int8)


def test_opening_position_and_first_move() -> None:
    state = ENV.reset(key=KEY)
    cells = np.asarray(state.env_state.board).reshape(8, 8)
    assert (cells[3, 3], cells[3, 4], cells[4, 3], cells[4, 4]) == (-1, 1, 1, -1)
    assert np.count_nonzero(cells) == 4
    assert legal_cells(state, 0) == {19, 26, 37, 44}
    assert legal_cells(state, 1) == {NO_OP}
    after = STEP(state, turn_action(ENV, state, 19))  # X on (2, 3) turns (3, 3) over
    expected = np.zeros((8, 8), int)
    expected[2, 3] = expected[3, 3] = expected[3, 4] = expected[4, 3] = 1
    expected[4, 4] = -1
    np.testing.assert_array_equal(np.asarray(after.env_state.board).reshape(8, 8), expected)
    assert legal_cells(after, 1) == {18, 20, 34}
    assert legal_cells(after, 0) == {NO_OP}
    obs = np.asarray(after.agents.observation)
    assert obs.dtype == np.int8
    np.testing.assert_array_equal(obs[1, :, :, 1], 1)  # O's turn plane
    np.testing.assert_array_equal(obs[0, :, :, 1], 0)
    np.testing.assert_array_equal(obs[0, :, :, 0], expected)  # X's view: own discs +1
    np.testing.assert_array_equal(obs[1, :, :, 0], -expected)  # O's view: the same board, signs swapped
    np.testing.assert_array_equal(
        after.global_observation, np.append(expected.reshape(64), 1)
    )  # slot 0's board, O to move


def test_flips_in_all_eight_directions() -> None:
    # X plays (4, 4); every direction holds a run of O closed by an X, of lengths 1 to 3.
    runs = {
        (-1, 0): 2,
        (-1, 1): 1,
        (0, 1): 2,
        (1, 1): 1,
        (1, 0): 1,
        (1, -1): 1,
        (0, -1): 3,
        (-1, -1): 1,
    }
    pieces: dict[tuple[int, int], int] = {}
    for (dr, dc), length in runs.items():
        for k in range(1, length + 1):
            pieces[(4 + k * dr, 4 + k * dc)] = -1
        pieces[(4 + (length + 1) * dr, 4 + (length + 1) * dc)] = 1
    state = position(pieces, to_move=0)
    assert 36 in legal_cells(state, 0)
    after = STEP(state, turn_action(ENV, state, 36))
    cells = np.asarray(after.env_state.board)
    assert (cells == -1).sum() == 0, "every O disc was on a closed run"
    assert (cells == 1).sum() == 1 + sum(runs.values()) + len(runs)
    assert board_of(after) == othello_play(board_of(state), 36, 1)


def test_open_runs_and_gaps_do_not_flip() -> None:
    pieces = {
        (4, 5): -1,
        (4, 6): -1,
        (4, 7): -1,  # east: O to the edge, never closed
        (4, 3): -1,
        (4, 1): 1,  # west: a gap after the O
        (3, 4): -1,
        (2, 4): 1,  # north: closed, flips
        (5, 4): 1,  # south: X right away, nothing between
    }
    state = position(pieces, to_move=0)
    after = STEP(state, turn_action(ENV, state, 36))
    expected = np.zeros(64, int)
    for (row, col), mark in pieces.items():
        expected[row * 8 + col] = mark
    expected[36] = expected[3 * 8 + 4] = 1
    np.testing.assert_array_equal(after.env_state.board, expected)
    assert sorted(othello_flips(board_of(state), 36, 1)) == [28]


def test_forced_pass_then_the_game_ends_with_empty_squares() -> None:
    state = position({(0, 0): 1, (0, 1): -1}, to_move=1)  # O cannot flank the corner disc
    assert legal_cells(state, 1) == {PASS}
    assert legal_cells(state, 0) == {NO_OP}
    passed = STEP(state, turn_action(ENV, state, PASS))
    assert not bool(passed.termination)
    np.testing.assert_array_equal(passed.agents.reward, [0.0, 0.0])
    assert board_of(passed) == board_of(state)
    assert legal_cells(passed, 0) == {2}
    final = STEP(passed, turn_action(ENV, passed, 2))
    assert bool(final.termination), "neither player can place, so the game is over"
    np.testing.assert_array_equal(final.agents.reward, [1.0, -1.0])
    assert (np.asarray(final.env_state.board) == 0).sum() == 61


def test_equal_discs_at_the_end_is_a_draw() -> None:
    state = position({(0, 0): 1, (0, 1): -1, (7, 5): -1, (7, 6): -1, (7, 7): -1}, to_move=0)
    final = STEP(state, turn_action(ENV, state, 2))
    assert bool(final.termination)
    np.testing.assert_array_equal(final.agents.reward, [0.0, 0.0])
    assert int(final.env_state.winner) == -1


def test_a_position_where_nobody_can_move_is_finished() -> None:
    state = position({(0, 0): 1, (7, 7): -1, (7, 6): -1}, to_move=0)
    assert bool(state.termination)
    assert int(state.env_state.winner) == 1


@pytest.mark.parametrize("bad_move", [PASS, NO_OP, 0, 27, 66, -1])
def test_an_illegal_move_loses(bad_move: int) -> None:
    # At the opening X can place, so passing is illegal too; 0 flanks nothing, 27 is occupied.
    final = play(ENV, [bad_move])[-1]
    assert bool(final.termination)
    np.testing.assert_array_equal(final.agents.reward, [-1.0, 1.0])
    assert board_of(final) == board_of(ENV.reset(key=KEY))


def test_playing_a_cell_when_only_a_pass_is_legal_loses() -> None:
    state = position({(0, 0): 1, (0, 1): -1}, to_move=1)
    final = STEP(state, turn_action(ENV, state, 2))
    np.testing.assert_array_equal(final.agents.reward, [1.0, -1.0])


def test_position_rejects_a_bad_board() -> None:
    with pytest.raises(ValueError, match="shape"):
        ENV.position(np.zeros((8, 8), np.int8), 0, key=KEY)
    with pytest.raises(ValueError, match="to_move"):
        ENV.position(np.zeros(64, np.int8), 2, key=KEY)


@settings(max_examples=8, deadline=None)
@given(
    choices=st.lists(st.integers(0, 2**20), min_size=1, max_size=70),
    waiting=st.lists(st.integers(-(2**31), 2**31 - 1), min_size=70, max_size=70),
)
def test_random_games_match_the_reference_and_ignore_the_waiting_slot(choices: list[int], waiting: list[int]) -> None:
    state = ENV.reset(key=KEY)
    cells, mark = board_of(state), 1
    for choice, noise in zip(choices, waiting):
        player = 0 if mark == 1 else 1
        legal = othello_legal(cells, mark)
        expected_row = legal + [not any(legal), False]
        np.testing.assert_array_equal(np.asarray(state.agents.action_mask)[player], expected_row)
        options = np.flatnonzero(expected_row)
        move = int(options[choice % len(options)])
        after = STEP(state, turn_action(ENV, state, move))
        assert_same_state(after, STEP(state, turn_action(ENV, state, move, waiting=noise)))
        if move < 64:
            cells = othello_play(cells, move, mark)
        assert board_of(after) == cells
        nobody = not any(othello_legal(cells, 1)) and not any(othello_legal(cells, -1))
        assert bool(after.termination) == nobody
        if nobody:
            balance = np.sign(sum(cells))
            np.testing.assert_array_equal(after.agents.reward, [balance, -balance])
            return
        state, mark = after, -mark


POSITION = jax.jit(lambda cells, to_move: ENV.position(cells, to_move, key=KEY))


@settings(max_examples=40, deadline=None)
@given(cells=st.lists(st.sampled_from([-1, 0, 0, 1]), min_size=64, max_size=64), to_move=st.integers(0, 1))
def test_any_position_matches_the_reference(cells: list[int], to_move: int) -> None:
    # Arbitrary boards reach every edge, corner and the cell 31/32 word boundary of the bitboards,
    # which games from the opening rarely do.
    mark = 1 if to_move == 0 else -1
    state = POSITION(np.array(cells, np.int8), to_move)
    legal = othello_legal(cells, mark)
    nobody = not any(legal) and not any(othello_legal(cells, -mark))
    assert bool(state.termination) == nobody
    if nobody:
        return
    np.testing.assert_array_equal(np.asarray(state.agents.action_mask)[to_move], legal + [not any(legal), False])
    for move in np.flatnonzero(legal)[:4].tolist():
        after = STEP(state, turn_action(ENV, state, move))
        assert board_of(after) == othello_play(cells, move, mark)


def test_random_playouts_keep_every_invariant() -> None:
    before, after = random_playout(ENV, num_envs=64, num_steps=140)
    check_turn_invariants(ENV, before, after)
    ended = np.asarray(after.termination)
    assert ended.sum() > 64, "the playout should finish many games"
    old, new = np.asarray(before.env_state.board), np.asarray(after.env_state.board)
    mover = np.asarray(before.env_state.to_move)
    mark = np.where(mover == 0, 1, -1)[..., None]
    mover_rows = np.take_along_axis(np.asarray(before.agents.action_mask), mover[..., None, None], axis=-2)[..., 0, :]
    placed = mover_rows[..., :64].any(-1)  # random legal play places whenever it can, else passes
    np.testing.assert_array_equal((new != 0).sum(-1) - (old != 0).sum(-1), placed.astype(int))
    assert ((new == mark).sum(-1) - (old == mark).sum(-1) >= 2)[placed].all(), "a placement turns at least one disc"
    assert ((new == -mark).sum(-1) < (old == -mark).sum(-1))[placed].all()
    np.testing.assert_array_equal(new[~placed], old[~placed])
    balance = np.sign(new.sum(-1))
    winners = np.asarray(after.env_state.winner)
    np.testing.assert_array_equal(winners[ended], np.where(balance[ended] > 0, 0, np.where(balance[ended] < 0, 1, -1)))
    masks = np.asarray(after.agents.action_mask)
    to_move = np.asarray(after.env_state.to_move)
    for index in list(zip(*np.nonzero(~ended)))[::97]:
        cells, player = new[index].tolist(), int(to_move[index])
        legal = othello_legal(cells, 1 if player == 0 else -1)
        np.testing.assert_array_equal(masks[index][player], legal + [not any(legal), False])
    for index in zip(*np.nonzero(ended)):
        cells = new[index].tolist()
        assert not any(othello_legal(cells, 1)) and not any(othello_legal(cells, -1))


def test_render_shapes_and_pieces() -> None:
    state = ENV.reset(key=KEY)
    image = jax.jit(ENV.render)(state)
    assert image.shape == (256, 256, 3) and image.dtype == jnp.uint8
    np.testing.assert_array_equal(image[3 * 32 + 16, 4 * 32 + 16], BLACK)  # X on (3, 4)
    np.testing.assert_array_equal(image[3 * 32 + 16, 3 * 32 + 16], WHITE)  # O on (3, 3)
    np.testing.assert_array_equal(image[16, 16], GREEN)  # an empty square


def test_render_text() -> None:
    lines = ENV.render_text(ENV.reset(key=KEY)).split("\n")
    assert lines[0] == "  0 1 2 3 4 5 6 7"
    assert lines[4] == "3 . . . O X . . ."
    assert lines[5] == "4 . . . X O . . ."
    assert lines[1] == "0 . . . . . . . ."
    assert lines[-1] == "X to move"
