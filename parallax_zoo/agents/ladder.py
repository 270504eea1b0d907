"""The opponent ladder: jittable scripted players of graded strength for TicTacToe, ConnectFour and Othello.

Every ladder player is a rule of one signature (`players.MaskedRule`),
`player(observation, action_mask, key) -> action`, for one player's view of one board: `observation` is that
player's observation as the env emits it (the board signed from its side,
+1 own, -1 opponent; Othello adds the turn plane), int8 in the board's shape
or flattened to floats as the agents' slots carry it, `action_mask` its row of
the env's action mask, `key` the randomness that breaks ties among equally
good moves. It returns an `int32` action, the no-op (the last action) when the
mask allows nothing else, so it can be called for both slots on every step.
`jax.vmap` maps it over a batch; `per_slot` maps it over `[*batch, agents]`.

- TicTacToe `perfect`: every move's game-theoretic value, from a table of all
  positions solved once by minimax outside jit; random among the best moves.
- ConnectFour `tactical`: take a win, else block an immediate loss, else the
  move on the most lines still open to the mover. `depth2` and `depth4`:
  minimax to a fixed depth over all `7**depth` move sequences at once (a
  static array, evaluated in one batch and backed up by max and min over its
  axes), leaves scored by counting lines, sooner wins preferred.
- Othello `positional`: the placement whose resulting board scores best on
  the classic weight table (corners high, squares next to corners low).
  `mobility`: the placement that leaves the opponent fewest placements, ties
  by the weight table.

registry.yaml names them as the games' `opponents`, so the evaluation
protocol plays every policy against them (docs/evaluation.md) and training can
seat them (`agents.players.MaskedScriptedPlayer` plays them in every slot).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Float, Int, Int8, PRNGKeyArray

from parallax_zoo.agents.players import MaskedRule
from parallax_zoo.envs import othello
from parallax_zoo.envs.board import line_cells


def board_view(observation: Array, shape: tuple[int, ...]) -> Int8[Array, ...]:
    """An observation, as the env emits it or flattened to floats, as the int8 board of `shape`."""
    return jnp.asarray(observation).astype(jnp.int8).reshape(shape)


def choose_best(
    scores: Float[Array, " moves"], action_mask: Bool[Array, " actions"], key: PRNGKeyArray
) -> Int[Array, ""]:
    """A uniformly random choice among the legal moves of highest score; the no-op (last action) when no move is legal.

    `scores` has one entry per action except the no-op.
    """
    legal = action_mask[:-1]
    best_score = jnp.max(jnp.where(legal, scores, -jnp.inf))
    best = legal & (scores == best_score)
    choice = jax.random.categorical(key, jnp.where(best, 0.0, -jnp.inf))
    return jnp.where(jnp.any(legal), choice, action_mask.shape[-1] - 1).astype(jnp.int32)


def per_slot(player: MaskedRule) -> Callable[[Array, Array, PRNGKeyArray], Array]:
    """`player` over `[*batch, agents]`: observations `[*batch, agents, *obs]`, masks `[*batch, agents, actions]`, one
    key.

    Each slot gets its own key, so a batch of games breaks ties independently.
    """

    def act(observation: Array, action_mask: Array, key: PRNGKeyArray) -> Array:
        batch = action_mask.shape[:-1]
        keys = jax.random.split(key, int(np.prod(batch))).reshape(batch)
        flat = jax.vmap(player)(
            observation.reshape(-1, *observation.shape[len(batch) :]),
            action_mask.reshape(-1, action_mask.shape[-1]),
            keys.reshape(-1),
        )
        return flat.reshape(batch)

    return act


# TicTacToe ---------------------------------------------------------------------------------------------------------

_TTT_LINES = line_cells(3, 3, 3)
_BASE3 = 3 ** np.arange(9)


def _ttt_index(view: np.ndarray | Array) -> Array:
    """The base-3 number of a signed board: digit 1 for own pieces, 2 for the opponent's, 0 empty."""
    digits = jnp.where(view == 1, 1, jnp.where(view == -1, 2, 0))
    return jnp.sum(digits * _BASE3, axis=-1)


def solve_tictactoe() -> np.ndarray:
    """Each move's game-theoretic value (+1 win, 0 draw, -1 loss) for the mover of every reachable position.

    Rows are indexed by the base-3 number of the board signed from the mover's
    side (see `perfect_tictactoe`); an occupied cell's entry is 0 and never
    read, since the action mask excludes it. Negamax with memoisation over the
    5,478 reachable positions, run once outside jit.
    """
    table = np.zeros((3**9, 9), np.int8)
    solved: dict[tuple[int, ...], int] = {}

    def value(cells: tuple[int, ...]) -> int:
        if cells in solved:
            return solved[cells]
        moves = np.zeros(9, np.int8)
        for cell in (c for c in range(9) if cells[c] == 0):
            after = list(cells)
            after[cell] = 1
            if any(all(after[c] == 1 for c in line) for line in _TTT_LINES):
                moves[cell] = 1
            elif all(after):
                moves[cell] = 0
            else:
                moves[cell] = -value(tuple(-c for c in after))
        best = int(max(moves[c] for c in range(9) if cells[c] == 0))
        table[int(np.dot([1 if c == 1 else 2 if c == -1 else 0 for c in cells], _BASE3))] = moves
        solved[cells] = best
        return best

    value((0,) * 9)
    return table


_TTT_VALUES = solve_tictactoe()


def perfect_tictactoe(
    observation: Int8[Array, "3 3"], action_mask: Bool[Array, " 10"], key: PRNGKeyArray
) -> Int[Array, ""]:
    """Perfect play: a random choice among the moves with the best game-theoretic value."""
    values = jnp.asarray(_TTT_VALUES)[_ttt_index(board_view(observation, (9,)))]
    return choose_best(values.astype(jnp.float32), action_mask, key)


# ConnectFour -------------------------------------------------------------------------------------------------------

_ROWS, _COLUMNS = 6, 7
_C4_LINES = line_cells(_ROWS, _COLUMNS, 4)
_C4_INCIDENCE = np.zeros((_ROWS * _COLUMNS, len(_C4_LINES)), np.float32)
_C4_INCIDENCE[_C4_LINES, np.arange(len(_C4_LINES))[:, None]] = 1.0
"""Cell-by-line incidence: a board's pieces times it counts each line's pieces, one matrix product per batch."""
_LINE_SCORE = np.array([0.0, 1.0, 10.0, 100.0, 0.0], np.float32)
"""A line's worth to the side whose 1, 2 or 3 pieces it holds while the other side holds none."""


def _lines_through_cells() -> tuple[np.ndarray, np.ndarray]:
    """For each cell, the four-in-a-rows through it `[42, 13, 4]` (padded by repeating its first) and which are real
    (built once, outside jit)."""
    through = [[line for line in _C4_LINES if cell in line] for cell in range(_ROWS * _COLUMNS)]
    most = max(len(lines) for lines in through)
    padded = np.array([lines + [lines[0]] * (most - len(lines)) for lines in through], np.int32)
    real = np.array([[k < len(lines) for k in range(most)] for lines in through])
    return padded, real


_C4_THROUGH, _C4_THROUGH_REAL = _lines_through_cells()
WIN_SCORE = 100_000.0
"""A won game's score in the depth-k search (times the plies to spare, so sooner wins count more); above any line
count."""


def _line_counts(cells: Int8[Array, "*batch 42"], mark: int | Array) -> Float[Array, "*batch lines"]:
    return (cells == mark).astype(jnp.float32) @ _C4_INCIDENCE


def _landing_cells(cells: Int8[Array, "*batch 42"]) -> Int[Array, "*batch 7"]:
    """The cell a piece dropped in each column lands on (row-major), or -1 for a full column."""
    empties = jnp.sum(cells.reshape(*cells.shape[:-1], _ROWS, _COLUMNS) == 0, axis=-2)
    return jnp.where(empties > 0, (empties - 1) * _COLUMNS + np.arange(_COLUMNS), -1)


def _drops(cells: Int8[Array, " 42"], mark: int) -> Int8[Array, "7 42"]:
    """The board after `mark` drops into each column (a full column's board is unchanged)."""
    landing = _landing_cells(cells)
    return jnp.where(np.arange(_ROWS * _COLUMNS) == landing[:, None], jnp.int8(mark), cells)


def _line_worth(own: Int[Array, "*lines"], opponent: Int[Array, "*lines"]) -> Float[Array, "*lines"]:
    """One line's share of `line_score` from its piece counts."""
    score = jnp.asarray(_LINE_SCORE)
    return jnp.where(opponent == 0, score[own], 0.0) - jnp.where(own == 0, score[opponent], 0.0)


def line_score(cells: Int8[Array, "*batch 42"]) -> Float[Array, " *batch"]:
    """The line-counting heuristic for the +1 side: its open lines' worth minus the opponent's."""
    own, opponent = _line_counts(cells, 1).astype(jnp.int32), _line_counts(cells, -1).astype(jnp.int32)
    return jnp.sum(_line_worth(own, opponent), axis=-1)


def tactical_connect_four(
    observation: Int8[Array, "6 7"], action_mask: Bool[Array, " 8"], key: PRNGKeyArray
) -> Int[Array, ""]:
    """One ply: a winning drop; else the drop that blocks the opponent's immediate win; else the one on most open lines.

    A cell's open lines are the four-in-a-rows through it that hold no
    opponent piece.
    """
    cells = board_view(observation, (_ROWS * _COLUMNS,))
    wins = jnp.any(_line_counts(_drops(cells, 1), 1) == 4, axis=-1)
    blocks = jnp.any(_line_counts(_drops(cells, -1), -1) == 4, axis=-1)
    open_lines = (_line_counts(cells, -1) == 0).astype(jnp.float32)
    landing = _landing_cells(cells)
    open_through = jnp.asarray(_C4_INCIDENCE)[jnp.maximum(landing, 0)] @ open_lines
    scores = 1000.0 * wins + 100.0 * blocks + open_through
    return choose_best(scores, action_mask, key)


def search_values(cells: Int8[Array, " 42"], depth: int) -> Float[Array, " 7"]:
    """Each first drop's minimax value for the +1 side, `depth` plies deep, leaves scored by `line_score`.

    The tree is grown a ply at a time, every node of a ply at once: ply `k`
    holds all `7**(k+1)` move sequences, each node's seven children side by
    side, so the leaves reshape to `(7,) * depth` and back up by max and min
    over the last axis. A drop is tested for a win on the lines through its
    cell only, and a node's score is its parent's plus those lines' change
    (every line is read once, at the root). A drop into a full column is
    masked out for the player choosing it; a node whose game ended (a line or
    a full board) keeps that result below it, a win worth `WIN_SCORE` times
    the plies left plus one, so sooner wins count more.
    """
    boards = cells[None]
    alive = jnp.ones((1,), jnp.bool_)
    result = jnp.zeros((1,), jnp.float32)
    score = line_score(cells)[None]
    illegal = []
    for ply in range(depth):
        mark = 1 if ply % 2 == 0 else -1
        landing = _landing_cells(boards).reshape(-1)
        boards, alive, result, score = (jnp.repeat(x, _COLUMNS, axis=0) for x in (boards, alive, result, score))
        count = landing.shape[0]
        plays = alive & (landing >= 0)
        illegal.append(alive & (landing < 0))
        boards = jnp.where(plays[:, None] & (np.arange(boards.shape[1]) == landing[:, None]), jnp.int8(mark), boards)
        cell = jnp.maximum(landing, 0)
        through = jnp.asarray(_C4_THROUGH)[cell].reshape(count, -1)
        line_pieces = jnp.take_along_axis(boards, through, axis=1).reshape(count, _C4_THROUGH.shape[1], 4)
        own, opponent = jnp.sum(line_pieces == 1, axis=-1), jnp.sum(line_pieces == -1, axis=-1)
        own_before, opponent_before = (own - 1, opponent) if mark == 1 else (own, opponent - 1)
        real = jnp.asarray(_C4_THROUGH_REAL)[cell]
        change = jnp.where(real, _line_worth(own, opponent) - _line_worth(own_before, opponent_before), 0.0)
        score = score + jnp.where(plays, jnp.sum(change, axis=-1), 0.0)
        won = plays & jnp.any(real & ((own if mark == 1 else opponent) == 4), axis=-1)
        full = plays & jnp.all(boards != 0, axis=-1)
        result = jnp.where(won, mark * WIN_SCORE * (depth - ply), result)
        alive = plays & ~won & ~full
    values = jnp.where(alive, score, result).reshape((_COLUMNS,) * depth)
    for ply in reversed(range(1, depth)):
        masked = illegal[ply].reshape((_COLUMNS,) * (ply + 1))
        if ply % 2 == 0:
            values = jnp.max(jnp.where(masked, -jnp.inf, values), axis=-1)
        else:
            values = jnp.min(jnp.where(masked, jnp.inf, values), axis=-1)
    return values


def search_connect_four(
    observation: Int8[Array, "6 7"], action_mask: Bool[Array, " 8"], key: PRNGKeyArray, depth: int
) -> Int[Array, ""]:
    """Fixed-depth minimax (`search_values`), a random choice among the best first drops."""
    return choose_best(search_values(board_view(observation, (_ROWS * _COLUMNS,)), depth), action_mask, key)


depth2_connect_four: MaskedRule = partial(search_connect_four, depth=2)
depth4_connect_four: MaskedRule = partial(search_connect_four, depth=4)


# Othello -----------------------------------------------------------------------------------------------------------

OTHELLO_WEIGHTS = np.array(
    [
        [100, -20, 10, 5, 5, 10, -20, 100],
        [-20, -50, -2, -2, -2, -2, -50, -20],
        [10, -2, -1, -1, -1, -1, -2, 10],
        [5, -2, -1, -1, -1, -1, -2, 5],
        [5, -2, -1, -1, -1, -1, -2, 5],
        [10, -2, -1, -1, -1, -1, -2, 10],
        [-20, -50, -2, -2, -2, -2, -50, -20],
        [100, -20, 10, 5, 5, 10, -20, 100],
    ],
    np.float32,
).reshape(othello.CELLS)
"""The classic positional weights: corners high, the squares next to corners low."""


def _othello_scores(observation: Int8[Array, "8 8 2"], by_mobility: bool) -> Float[Array, " 65"]:
    """Each placement's score (the pass gets 0; it is legal only when nothing else is)."""
    view = board_view(observation, (othello.CELLS, 2))[:, 0]
    _, after = othello.placement_results(view)
    positional = after.astype(jnp.float32) @ OTHELLO_WEIGHTS
    scores = positional
    if by_mobility:
        replies = jax.vmap(othello.mobility)(-after).astype(jnp.float32)
        scores = positional - 10_000.0 * replies
    return jnp.concatenate([scores, jnp.zeros((1,), jnp.float32)])


def positional_othello(
    observation: Int8[Array, "8 8 2"], action_mask: Bool[Array, " 66"], key: PRNGKeyArray
) -> Int[Array, ""]:
    """The placement whose resulting board has the highest weighted disc sum (`OTHELLO_WEIGHTS`); passes when it
    must."""
    return choose_best(_othello_scores(observation, by_mobility=False), action_mask, key)


def mobility_othello(
    observation: Int8[Array, "8 8 2"], action_mask: Bool[Array, " 66"], key: PRNGKeyArray
) -> Int[Array, ""]:
    """The placement that leaves the opponent fewest placements, ties by the weighted disc sum; passes when it must."""
    return choose_best(_othello_scores(observation, by_mobility=True), action_mask, key)


LADDER: dict[str, dict[str, MaskedRule]] = {
    "TicTacToe": {"perfect": perfect_tictactoe},
    "ConnectFour": {"tactical": tactical_connect_four, "depth2": depth2_connect_four, "depth4": depth4_connect_four},
    "Othello": {"positional": positional_othello, "mobility": mobility_othello},
}
"""Each game's ladder players by name (the names the evaluation protocol's opponents will carry)."""
