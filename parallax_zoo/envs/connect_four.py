"""Connect Four as a two-player zero-sum `MARLEnv` (docs/protocol.md, "Turn-based boards").

A 6-row, 7-column board; row 0 is the top, pieces drop to the lowest empty
row. Actions 0..6 are the columns; action 7 is the no-op, the waiting
player's only legal action. Slot 0 (X) moves first. Both players stay active
all game; the winner gets +1 and the loser -1 on the winning move, both 0 on
a draw (a full board), every other reward is 0. An illegal move by the player
to move (a full column, the no-op, an index out of range) loses the game on
the spot: it gets -1, the other player +1. The waiting player's action is
ignored entirely.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Int, Int8

from parallax.arguments import Range, check_arguments
from parallax.core import MARLState
from parallax_zoo.envs import board
from parallax_zoo.envs.board import BoardState
from parallax_zoo.envs.rendering import BLUE, RED, WHITE, YELLOW, Image


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class ConnectFourState(BoardState):
    """A board position plus each column's number of pieces and each player's pieces as per-column bit sets.

    Bit `r` of `columns[player, c]` is that player's piece `r` rows above the
    bottom of column `c`, so a drop is one shift and four in a row is a few
    shifts and ands (no search down a column, no gather over the board).
    """

    heights: Int8[Array, " 7"]
    columns: Int[Array, "2 7"]


def _four_in_a_row(columns: Int[Array, " 7"]) -> Bool[Array, ""]:
    """True when one player's per-column bit sets hold four in a row: up a column, across, or along a diagonal.

    The three sideways tests share one reduction; a concatenation of all four
    before reducing measured about 1.4x slower batched steps on XLA:CPU.
    """
    vertical = columns & (columns >> 1) & (columns >> 2) & (columns >> 3)
    a, b, c, d = columns[0:4], columns[1:5], columns[2:6], columns[3:7]
    across = a & b & c & d
    rising = a & (b >> 1) & (c >> 2) & (d >> 3)
    falling = a & (b << 1) & (c << 2) & (d << 3)
    return jnp.any(vertical != 0) | jnp.any((across | rising | falling) != 0)


class ConnectFour(board.BoardGame[ConnectFourState]):
    """Four in a row on a 6x7 board; each player observes the int8 board signed from its side (+1 own, -1 opponent)."""

    def __init__(self, cell_pixels: Annotated[int, Range(ge=1)] = 32):
        check_arguments(ConnectFour, {"cell_pixels": cell_pixels}, type(self).__name__)
        super().__init__(height=6, width=7, num_actions=8, cell_pixels=cell_pixels)

    def _init(self) -> board.Position:
        """The empty board, X (slot 0) to move."""
        game = ConnectFourState(
            board=jnp.zeros((self.height * self.width,), jnp.int8),
            to_move=jnp.int32(0),
            winner=jnp.int32(board.NO_WINNER),
            heights=jnp.zeros((self.width,), jnp.int8),
            columns=jnp.zeros((board.NUM_PLAYERS, self.width), jnp.int32),
        )
        return board.Position(game, jnp.ones((self.width,), jnp.bool_), jnp.bool_(False))

    def _step(self, game: ConnectFourState, move: Int[Array, ""]) -> board.Position:
        """Drop the mover's piece; four in a row, a full board or an illegal move ends the game."""
        legal = move >= 0
        mark = board.mark_of(game.to_move)
        dropped = jnp.arange(self.width) == move
        row = self.height - 1 - jnp.sum(jnp.where(dropped, game.heights, 0))
        cell = row * self.width + move
        placed = jnp.where(jnp.arange(self.height * self.width) == jnp.where(legal, cell, -1), mark, game.board)
        heights = game.heights + dropped.astype(jnp.int8)
        drop_bits = jnp.where(dropped, jnp.left_shift(1, game.heights.astype(jnp.int32)), 0)
        mover_columns = jnp.where(game.to_move == 0, game.columns[0], game.columns[1]) | drop_bits
        columns = jnp.where((jnp.arange(board.NUM_PLAYERS) == game.to_move)[:, None], mover_columns, game.columns)
        won = legal & _four_in_a_row(mover_columns)
        open_columns = heights < self.height
        full = ~jnp.any(open_columns)
        winner, ended = board.placement_outcome(legal, won, full, game.to_move)
        next_game = ConnectFourState(
            board=placed, to_move=1 - game.to_move, winner=winner, heights=heights, columns=columns
        )
        return board.Position(next_game, open_columns, ended)

    def _position(self, cells: Int8[Array, " 42"], to_move: Int[Array, ""]) -> board.Position:
        """Any position (pieces are taken to rest on each other, as drops leave them): a player holding four in a row
        has won (slot 0 first), a full board is a draw."""
        grid = cells.reshape(self.height, self.width)
        heights = jnp.sum(grid != 0, axis=0).astype(jnp.int8)
        row_bits = jnp.left_shift(1, jnp.arange(self.height - 1, -1, -1, dtype=jnp.int32))[:, None]
        columns = jnp.stack([jnp.sum(jnp.where(grid == mark, row_bits, 0), axis=0) for mark in (1, -1)]).astype(
            jnp.int32
        )
        won = jnp.stack([_four_in_a_row(columns[0]), _four_in_a_row(columns[1])])
        open_columns = heights < self.height
        winner = jnp.where(won[0], 0, jnp.where(won[1], 1, board.NO_WINNER)).astype(jnp.int32)
        game = ConnectFourState(board=cells, to_move=to_move, winner=winner, heights=heights, columns=columns)
        return board.Position(game, open_columns, jnp.any(won) | ~jnp.any(open_columns))

    def render(self, state: MARLState) -> Image:
        """An RGB picture: red discs for X, yellow for O, white holes in a blue frame (pure `jnp`, jittable)."""
        grid = state.env_state.board.reshape(self.height, self.width)
        return board.render_discs(grid, self.cell_pixels, BLUE, BLUE, {0: WHITE, 1: RED, -1: YELLOW})
