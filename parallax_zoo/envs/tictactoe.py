"""Tic-tac-toe as a two-player zero-sum `MARLEnv` (docs/protocol.md, "Turn-based boards").

Actions 0..8 are the cells in row-major order (`row * 3 + col`); action 9 is
the no-op, the waiting player's only legal action. Slot 0 (X) moves first.
Both players stay active all game; the winner gets +1 and the loser -1 on the
winning move, both 0 on a draw, and every other reward is 0. An illegal move
by the player to move (an occupied cell, the no-op, an index out of range)
loses the game on the spot: it gets -1, the other player +1. The waiting
player's action is ignored entirely.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Int, Int8

from parallax.arguments import Range, check_arguments
from parallax.core import MARLState
from parallax_zoo.envs import board
from parallax_zoo.envs.board import BoardState
from parallax_zoo.envs.rendering import BLUE, GREY, ORANGE, WHITE, Image, canvas, cell_coordinates, grid_lines, paint


def _has_line_table() -> np.ndarray:
    """For every 9-bit set of cells (bit `row * 3 + col`), whether it holds three in a row (built once, outside jit)."""
    lines = board.line_cells(3, 3, 3)
    line_bits = (1 << lines).sum(axis=1)
    sets = np.arange(1 << 9)[:, None]
    return np.any((sets & line_bits) == line_bits, axis=1)


_HAS_LINE = _has_line_table()
_ALL_CELLS = (1 << 9) - 1
_ENDED, _WON = 1, 2
_ILLEGAL = 2 << 9
"""The outcome row of an illegal move (which ends the game); the rows below are the mover's cells, plus 512 if full."""


def _outcome_table() -> np.ndarray:
    """The outcome flags (`_ENDED`, `_WON`) of a move: by the mover's cells after it, plus 512 if full; then `_ILLEGAL`.

    One lookup per env gives both flags, and XLA:CPU keeps a lookup's result
    in memory rather than recomputing it inside every output leaf's loop.
    """
    sets = np.arange(_ILLEGAL + 1)
    won = _HAS_LINE[sets & _ALL_CELLS] & (sets < _ILLEGAL)
    ended = won | (sets >= 1 << 9)
    return (np.where(ended, _ENDED, 0) | np.where(won, _WON, 0)).astype(np.int8)


_OUTCOME = _outcome_table()


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class TicTacToeState(BoardState):
    """A board position plus each player's pieces as a 9-bit set, so legality and lines are bit tests."""

    pieces: Int[Array, " 2"]


class TicTacToe(board.BoardGame[TicTacToeState]):
    """Three in a row on a 3x3 board; each player observes the int8 board signed from its side (+1 own, -1 opponent)."""

    def __init__(self, cell_pixels: Annotated[int, Range(ge=1)] = 32):
        check_arguments(TicTacToe, {"cell_pixels": cell_pixels}, type(self).__name__)
        super().__init__(height=3, width=3, num_actions=10, cell_pixels=cell_pixels)

    def _init(self) -> board.Position:
        """The empty board, X (slot 0) to move."""
        cells = self.height * self.width
        game = TicTacToeState(
            board=jnp.zeros((cells,), jnp.int8),
            to_move=jnp.int32(0),
            winner=jnp.int32(board.NO_WINNER),
            pieces=jnp.zeros((board.NUM_PLAYERS,), jnp.int32),
        )
        return board.Position(game, jnp.ones((cells,), jnp.bool_), jnp.bool_(False))

    def _step(self, game: TicTacToeState, move: Int[Array, ""]) -> board.Position:
        """Play the mover's cell; a win, a full board or an illegal move ends the game.

        The outcome is one lookup, by the mover's 9-bit set of cells and
        whether the board is full, in a table of every such case: scalars per
        env, no loop over the cells. The piece is placed by a scatter (an
        illegal move's index is off the board and dropped), so XLA:CPU writes
        the new board once and every output leaf reads it.
        """
        cells = self.height * self.width
        legal = move >= 0
        placed_bit = jnp.where(legal, jnp.left_shift(jnp.int32(1), jnp.clip(move, 0, cells - 1)), 0)
        mover_pieces = jnp.where(game.to_move == 0, game.pieces[0], game.pieces[1]) | placed_bit
        pieces = jnp.where(jnp.arange(board.NUM_PLAYERS) == game.to_move, mover_pieces, game.pieces)
        placed = game.board.at[jnp.where(legal, move, cells)].set(board.mark_of(game.to_move), mode="drop")
        full = (game.pieces[0] | game.pieces[1] | placed_bit) == _ALL_CELLS
        outcome = jnp.asarray(_OUTCOME)[jnp.where(legal, mover_pieces + jnp.where(full, 1 << 9, 0), _ILLEGAL)]
        won, ended = (outcome & _WON) != 0, (outcome & _ENDED) != 0
        winner = board.placement_winner(legal, won, game.to_move)
        next_game = TicTacToeState(board=placed, to_move=1 - game.to_move, winner=winner, pieces=pieces)
        return board.Position(next_game, placed == 0, ended)

    def _position(self, cells: Int8[Array, " 9"], to_move: Int[Array, ""]) -> board.Position:
        """Any position: a player holding a line has won (slot 0 first), a full board is a draw."""
        bits = jnp.left_shift(jnp.int32(1), jnp.arange(cells.shape[0], dtype=jnp.int32))
        pieces = jnp.stack([jnp.sum(jnp.where(cells == mark, bits, 0)) for mark in (1, -1)]).astype(jnp.int32)
        won = jnp.asarray(_HAS_LINE)[pieces]
        open_cells = cells == 0
        winner = jnp.where(won[0], 0, jnp.where(won[1], 1, board.NO_WINNER)).astype(jnp.int32)
        game = TicTacToeState(board=cells, to_move=to_move, winner=winner, pieces=pieces)
        return board.Position(game, open_cells, jnp.any(won) | ~jnp.any(open_cells))

    def render(self, state: MARLState) -> Image:
        """An RGB picture of the board: blue crosses for X, orange rings for O (pure `jnp`, jittable)."""
        cell = self.cell_pixels
        size_rows, size_cols = self.height * cell, self.width * cell
        row, col, down, across = cell_coordinates(size_rows, size_cols, cell)
        values = state.env_state.board.reshape(self.height, self.width)[row, col]
        stroke = 0.07
        cross = ((jnp.abs(down - across) < stroke) | (jnp.abs(down + across) < stroke)) & (
            jnp.maximum(jnp.abs(down), jnp.abs(across)) < 0.32
        )
        radius = jnp.sqrt(down**2 + across**2)
        ring = (radius > 0.3 - stroke) & (radius < 0.3 + stroke)
        image = canvas(size_rows, size_cols, WHITE)
        image = paint(image, cross & (values == 1), BLUE)
        image = paint(image, ring & (values == -1), ORANGE)
        return grid_lines(image, cell, GREY)
