"""Othello (Reversi) as a two-player zero-sum `MARLEnv` (docs/protocol.md, "Turn-based boards").

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

Move generation works on bitboards: a set of cells is two `uint32` words, and
the eight directions are shifted together along a direction axis, so every
operation is elementwise over envs and directions, and the unions over
directions are reductions that XLA computes once per env.
"""

from __future__ import annotations

from typing import Annotated

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Int, Int8

from parallax.arguments import Range, check_arguments
from parallax.core import MARLState
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


Bits = tuple[Array, Array]
"""A set of cells as two `uint32` words: bit `i` of the first is cell `i`, bit `i` of the second is cell `32 + i`."""


def _direction_table() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per direction: left and right shift amounts, and the two words of the cells a flanked run can cover.

    The eight directions are flat-index steps. A run never touches the edge it
    is heading to or coming from, so masking the edges keeps a shift from
    carrying a run over into the next row (docs/adding-an-environment.md: set-up happens once,
    outside jit).
    """
    steps = np.array([1, -1, SIZE, -SIZE, SIZE + 1, -SIZE - 1, SIZE - 1, -SIZE + 1])
    run_cells = np.stack(
        [_interior(slice(None), slice(1, -1))] * 2
        + [_interior(slice(1, -1), slice(None))] * 2
        + [_interior(slice(1, -1), slice(1, -1))] * 4
    )
    weights = np.left_shift(np.uint64(1), np.arange(32, dtype=np.uint64))
    words = [(run_cells[:, half * 32 : (half + 1) * 32] * weights).sum(axis=1).astype(np.uint32) for half in (0, 1)]
    return np.maximum(steps, 0).astype(np.uint32), np.maximum(-steps, 0).astype(np.uint32), words[0], words[1]


_LEFT, _RIGHT, _RUN_LOW, _RUN_HIGH = _direction_table()
_BIT_OF_WORD = np.left_shift(np.uint32(1), np.arange(32, dtype=np.uint32))


def _discs(cells: Int8[Array, " 64"]) -> tuple[Bits, Bits]:
    """Slot 0's (X, +1) and slot 1's (O, -1) discs as `Bits`.

    One reduction with four outputs, so XLA:CPU reads the board once per env.
    """
    halves = cells.reshape(2, 32)
    zero = np.uint32(0)
    operands = tuple(jnp.where(halves[half] == mark, _BIT_OF_WORD, zero) for mark in (1, -1) for half in (0, 1))
    x_low, x_high, o_low, o_high = jax.lax.reduce(
        operands, (zero,) * 4, lambda a, b: tuple(x | y for x, y in zip(a, b, strict=True)), (0,)
    )
    return (x_low, x_high), (o_low, o_high)


def _to_cells(bits: Bits, extra: Bool[Array, ""] | None = None) -> Bool[Array, " cells"]:
    """`Bits` back to a flat 64-cell mask, with `extra` appended as a 65th entry when given.

    Each entry picks its word and bit from constant tables, so the loop that
    writes it has no concatenation in it.
    """
    index = np.arange(CELLS + (extra is not None))
    word = jnp.where(index < 32, bits[0], bits[1])
    in_word = ((word >> (index & 31).astype(np.uint32)) & np.uint32(1)) != 0
    return in_word if extra is None else jnp.where(index < CELLS, in_word, extra)


def _single_cell(cell: Int[Array, ""]) -> Bits:
    """The one-cell set `{cell}`, or the empty set when `cell` is off the board (a pass, the no-op, -1)."""
    bit = jnp.left_shift(np.uint32(1), (cell & 31).astype(jnp.uint32))
    zero = np.uint32(0)
    return jnp.where((cell >= 0) & (cell < 32), bit, zero), jnp.where((cell >= 32) & (cell < CELLS), bit, zero)


def _shift(bits: Bits) -> Bits:
    """Each direction's set moved one step along it; cells moved off the board vanish.

    One of the two shift amounts is 0, and XLA shifts by 32 or more give 0,
    so one formula serves both signs of step.
    """
    low, high = bits
    return (
        ((low << _LEFT) >> _RIGHT) | (high << (32 - _RIGHT)),
        ((high << _LEFT) >> _RIGHT) | (low >> (32 - _LEFT)),
    )


def _where(condition: Bool[Array, ""], a: Bits, b: Bits) -> Bits:
    return jnp.where(condition, a[0], b[0]), jnp.where(condition, a[1], b[1])


def _and(a: Bits, b: Bits | tuple[np.ndarray, np.ndarray]) -> Bits:
    return a[0] & b[0], a[1] & b[1]


def _or(a: Bits, b: Bits) -> Bits:
    return a[0] | b[0], a[1] | b[1]


def _any_direction(bits: Bits) -> Bits:
    """The union over the direction axis: one reduction of both words together, so XLA:CPU computes the runs once per
    env."""
    zero = np.uint32(0)
    low, high = jax.lax.reduce(bits, (zero, zero), lambda a, b: (a[0] | b[0], a[1] | b[1]), (0,))
    return low, high


def _flanked_runs(start: Bits, opponent: Bits) -> Bits:
    """Per direction, the opponent discs reachable from `start` by an unbroken run along it (up to six long)."""
    opponent = _and(opponent, (_RUN_LOW, _RUN_HIGH))
    run = _and(_shift(start), opponent)
    for _ in range(SIZE - 3):
        run = _or(run, _and(_shift(run), opponent))
    return run


def _placements(own: Bits, opponent: Bits) -> Bits:
    """Empty cells where a disc of `own` would close at least one run of `opponent` discs."""
    empty = ~(own[0] | opponent[0]), ~(own[1] | opponent[1])
    return _any_direction(_and(_shift(_flanked_runs(own, opponent)), empty))


def _flips(placed: Bits, own: Bits, opponent: Bits) -> Bits:
    """The opponent discs that a disc placed on `placed` (one cell, or none for a pass) turns over."""
    run = _flanked_runs(placed, opponent)
    end = _and(_shift(run), own)
    closed = (end[0] | end[1]) != 0
    zero = np.uint32(0)
    return _any_direction((jnp.where(closed, run[0], zero), jnp.where(closed, run[1], zero)))


def placement_results(view: Int8[Array, " 64"]) -> tuple[Bool[Array, " 64"], Int8[Array, "64 64"]]:
    """From the mover's signed board (+1 own, -1 opponent), where it may place and the board after each placement.

    Row `cell` of the boards is the position after placing on `cell`, flips
    applied (meaningful where the first output is true). For scripted players
    that look one move ahead (`parallax_zoo.agents.ladder`).
    """
    own, opponent = _discs(view)
    legal = _to_cells(_placements(own, opponent))

    def after(cell: Int[Array, ""]) -> Int8[Array, " 64"]:
        placed = _single_cell(cell)
        return jnp.where(_to_cells(_or(placed, _flips(placed, own, opponent))), jnp.int8(1), view)

    return legal, jax.vmap(after)(jnp.arange(CELLS))


def mobility(view: Int8[Array, " 64"]) -> Int[Array, ""]:
    """How many placements the +1 side of a signed board has."""
    own, opponent = _discs(view)
    low, high = _placements(own, opponent)
    return (jax.lax.population_count(low) + jax.lax.population_count(high)).astype(jnp.int32)


class Othello(board.BoardGame[BoardState]):
    """Othello on 8x8 with passes; each player observes (signed board, my turn) int8 planes, since passes hide whose
    turn it is."""

    pass_move: int = CELLS

    def __init__(self, cell_pixels: Annotated[int, Range(ge=1)] = 32):
        check_arguments(Othello, {"cell_pixels": cell_pixels}, type(self).__name__)
        super().__init__(height=SIZE, width=SIZE, num_actions=CELLS + 2, turn_plane=True, cell_pixels=cell_pixels)
        start = np.zeros((SIZE, SIZE), np.int8)
        start[3, 3] = start[4, 4] = -1
        start[3, 4] = start[4, 3] = 1
        self._start = jnp.asarray(start.reshape(CELLS))

    def _init(self) -> board.Position:
        """The standard opening position, X (slot 0, black) to move."""
        return self._settle(self._start, jnp.int32(0), jnp.bool_(True))

    def _position(self, cells: Int8[Array, " 64"], to_move: Int[Array, ""]) -> board.Position:
        """Any position: the masks follow the rules (a pass when `to_move` cannot place); where neither player can place
        it is over, scored by discs."""
        return self._settle(cells, to_move, jnp.bool_(True))

    def _step(self, game: BoardState, move: Int[Array, ""]) -> board.Position:
        """Place (flipping every flanked run) or pass; the game ends when neither player can place."""
        mark = board.mark_of(game.to_move)
        placed = _single_cell(move)
        x_discs, o_discs = _discs(game.board)
        mover_is_x = game.to_move == 0
        own = _where(mover_is_x, x_discs, o_discs)
        opponent = _where(mover_is_x, o_discs, x_discs)
        flipped = _flips(placed, own, opponent)
        after = jnp.where(_to_cells(_or(placed, flipped)), mark, game.board)
        return self._settle(after, 1 - game.to_move, move >= 0)

    def _settle(self, cells: Array, to_move: Array, legal: Array) -> board.Position:
        """The position with `to_move` to play on `cells`, after a move that was `legal` (an illegal one loses)."""
        x_discs, o_discs = _discs(cells)
        x_can, o_can = _placements(x_discs, o_discs), _placements(o_discs, x_discs)
        mover_can = _where(to_move == 0, x_can, o_can)
        mover_has = (mover_can[0] | mover_can[1]) != 0
        # The game goes on only after a legal move that leaves someone a placement: one
        # reduction, so XLA:CPU computes it once per env and not inside every leaf's loop.
        ended = ~jnp.any(legal & (jnp.stack([*x_can, *o_can]) != 0))
        disc_balance = jnp.sum(cells.astype(jnp.int32))
        by_discs = jnp.where(disc_balance > 0, 0, jnp.where(disc_balance < 0, 1, board.NO_WINNER))
        winner = jnp.where(legal, jnp.where(ended, by_discs, board.NO_WINNER), to_move)
        game = BoardState(board=cells, to_move=to_move, winner=winner.astype(jnp.int32))
        return board.Position(game, _to_cells(mover_can, extra=~mover_has), ended)

    def render(self, state: MARLState) -> Image:
        """An RGB picture: black discs for X, white for O, on a green board (pure `jnp`, jittable)."""
        grid = state.env_state.board.reshape(self.height, self.width)
        return board.render_discs(grid, self.cell_pixels, GREEN, BLACK, {1: BLACK, -1: WHITE})
