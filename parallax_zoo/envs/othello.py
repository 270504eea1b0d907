"""Othello (Reversi) as a two-player zero-sum `MARLEnv` (DESIGN.md section 5).

An 8x8 board from the standard start: O (slot 1, white) on (3, 3) and (4, 4),
X (slot 0, black) on (3, 4) and (4, 3); X moves first. Actions 0..63 place a
disc on cell `row * 8 + col`, action 64 passes, action 65 is the no-op, the
waiting player's only legal action. A placement must flip at least one run of
opponent discs; passing is legal only when the mover has no placement. The
game ends when neither player can place (possibly with empty squares), and
the player with more discs wins. Both players stay active all game; the
winner gets +1 and the loser -1 on the final move, both 0 on a draw, every
other reward is 0. An illegal move by the player to move (a placement that
flips nothing or lands on a disc, a pass while a placement exists, the no-op,
an index out of range) loses the game on the spot: it gets -1, the other
player +1. The waiting player's action is ignored entirely.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike
from jaxtyping import Array, Bool, Int, PRNGKeyArray

from parallax.core import MARLState, require_key
from parallax.spaces import Space, check_action
from parallax_zoo.envs import board
from parallax_zoo.envs.board import BoardState
from parallax_zoo.envs.rendering import BLACK, GREEN, WHITE, Image

SIZE = 8
CELLS = SIZE * SIZE


def _interior(rows: slice, cols: slice) -> np.ndarray:
    """A flat 64-cell mask, true on `grid[rows, cols]`."""
    mask = np.zeros((SIZE, SIZE), np.bool_)
    mask[rows, cols] = True
    return mask.reshape(CELLS)


# The eight directions as flat-index steps, with the cells a flanked run along them can cover:
# a run never touches the edge it is heading to or coming from, so masking the edges stops
# `jnp.roll` from wrapping a run around the board (seed 003, rule 9: built once, outside jit).
_STEPS = np.array([1, -1, SIZE, -SIZE, SIZE + 1, -SIZE - 1, SIZE - 1, -SIZE + 1], np.int32)
_RUN_CELLS = np.stack(
    [_interior(slice(None), slice(1, -1))] * 2
    + [_interior(slice(1, -1), slice(None))] * 2
    + [_interior(slice(1, -1), slice(1, -1))] * 4
)


def _flanked_runs(start: Bool[Array, "... 64"], opponent: Bool[Array, "... 64"], step: Int[Array, ""]) -> Bool[Array, "... 64"]:
    """The opponent discs reachable from `start` by an unbroken run along `step` (up to six long)."""
    run = opponent & jnp.roll(start, step, axis=-1)
    for _ in range(SIZE - 3):
        run = run | (opponent & jnp.roll(run, step, axis=-1))
    return run


@jax.jit
def _placements(own: Bool[Array, "... 64"], opponent: Bool[Array, "... 64"]) -> Bool[Array, "... 64"]:
    """Empty cells where a disc of `own` would close at least one run of `opponent` discs."""
    empty = ~(own | opponent)

    def direction(d: Int[Array, ""], found: Bool[Array, "... 64"]) -> Bool[Array, "... 64"]:
        run = _flanked_runs(own, opponent & jnp.asarray(_RUN_CELLS)[d], jnp.asarray(_STEPS)[d])
        return found | (jnp.roll(run, jnp.asarray(_STEPS)[d], axis=-1) & empty)

    return jax.lax.fori_loop(0, len(_STEPS), direction, jnp.zeros_like(own))


@jax.jit
def _flips(placed: Bool[Array, " 64"], own: Bool[Array, " 64"], opponent: Bool[Array, " 64"]) -> Bool[Array, " 64"]:
    """The opponent discs that a disc placed on `placed` (one-hot, or all false for a pass) turns over."""

    def direction(d: Int[Array, ""], flipped: Bool[Array, " 64"]) -> Bool[Array, " 64"]:
        run = _flanked_runs(placed, opponent & jnp.asarray(_RUN_CELLS)[d], jnp.asarray(_STEPS)[d])
        closed = jnp.any(jnp.roll(run, jnp.asarray(_STEPS)[d]) & own)
        return flipped | (run & closed)

    return jax.lax.fori_loop(0, len(_STEPS), direction, jnp.zeros_like(own))


class Othello:
    """Othello on 8x8 with passes; each player observes (signed board, my turn) int8 planes, since passes hide whose turn it is."""

    num_agents: int = board.NUM_PLAYERS
    height: int = SIZE
    width: int = SIZE
    num_actions: int = CELLS + 2
    pass_move: int = CELLS
    no_op: int = CELLS + 1
    action_space: Space = board.action_space(num_actions)
    turn_plane: bool = True
    observation_space: Space = board.observation_space(height, width, turn_plane)
    global_observation_space: Space = board.global_observation_space(CELLS)
    cell_pixels: int = 32

    def __init__(self) -> None:
        start = np.zeros((SIZE, SIZE), np.int8)
        start[3, 3] = start[4, 4] = -1
        start[3, 4] = start[4, 3] = 1
        self._start = jnp.asarray(start.reshape(CELLS))

    def reset(self, *, key: PRNGKeyArray) -> MARLState:
        """The standard opening position, X (slot 0, black) to move."""
        require_key(key, "Othello.reset")
        return self._settle(self._start, jnp.int32(0), jnp.bool_(True), jnp.int32(0), key)

    def position(self, cells: ArrayLike, to_move: int | Int[Array, ""], *, key: PRNGKeyArray) -> MARLState:
        """The state of any position (+1 slot 0, -1 slot 1, 0 empty; row-major) with `to_move` to play.

        For puzzles, tests and evaluation from set openings. The masks follow
        the rules (a pass when `to_move` cannot place); a position where
        neither player can place comes back terminated, scored by discs.
        """
        require_key(key, "Othello.position")
        if isinstance(to_move, int) and to_move not in (0, 1):
            raise ValueError(f"Othello.position: to_move must be 0 (slot 0, X) or 1 (slot 1, O), got {to_move}.")
        cells = jnp.asarray(cells)
        if cells.shape != (CELLS,):
            raise ValueError(f"Othello.position expects a flat board of shape ({CELLS},), got {cells.shape}; reshape an 8x8 board with .reshape(64).")
        return self._settle(cells.astype(jnp.int8), jnp.asarray(to_move, jnp.int32), jnp.bool_(True), jnp.int32(0), key)

    def step(self, state: MARLState, action: Int[Array, " 2"]) -> MARLState:
        """Place (flipping every flanked run) or pass; the game ends when neither player can place."""
        check_action(self.action_space, action, (), "Othello.step")
        game: BoardState = state.env_state
        move = board.played_move(state, action)
        mark = board.mark_of(game.to_move)
        placed = jnp.arange(CELLS) == move
        flipped = _flips(placed, game.board == mark, game.board == -mark)
        after = jnp.where(placed | flipped, mark, game.board)
        return self._settle(after, 1 - game.to_move, move >= 0, state.step_count + 1, state.key)

    def _settle(self, cells: Array, to_move: Array, legal: Array, step_count: Array, key: PRNGKeyArray) -> MARLState:
        """The state with `to_move` to play on `cells`, after a move that was `legal` (an illegal one loses)."""
        pieces = jnp.stack([cells == 1, cells == -1])
        placements = _placements(pieces, pieces[::-1])
        mover_can = jnp.where(to_move == 0, placements[0], placements[1])
        mover_has = jnp.any(mover_can)
        nobody_can = ~jnp.any(placements)
        disc_balance = jnp.sum(cells.astype(jnp.int32))
        by_discs = jnp.where(disc_balance > 0, 0, jnp.where(disc_balance < 0, 1, board.NO_WINNER))
        winner = jnp.where(legal, jnp.where(nobody_can, by_discs, board.NO_WINNER), to_move)
        game = BoardState(board=cells, to_move=to_move, winner=winner.astype(jnp.int32))
        legal_moves = jnp.concatenate([mover_can, ~mover_has[None]])
        return self._state(game, legal_moves, ~legal | nobody_can, step_count, key)

    def _state(self, game: BoardState, legal_moves: Array, ended: Array, step_count: Array, key: PRNGKeyArray) -> MARLState:
        return board.game_state(
            env_state=game, legal_moves=legal_moves, ended=ended,
            height=self.height, width=self.width, turn_plane=self.turn_plane, step_count=step_count, key=key,
        )

    def render(self, state: MARLState) -> Image:
        """An RGB picture: black discs for X, white for O, on a green board (pure `jnp`, jittable)."""
        grid = state.env_state.board.reshape(self.height, self.width)
        return board.render_discs(grid, self.cell_pixels, GREEN, BLACK, {1: BLACK, -1: WHITE})

    def render_text(self, state: MARLState) -> str:
        """The board as text: `X` (black), `O` (white), `.` with 0-based labels, then whose turn or the result."""
        return board.board_text(state, self.height, self.width)
