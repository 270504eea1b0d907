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

import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Int, Int8, PRNGKeyArray

from parallax.core import MARLState, require_key
from parallax.spaces import Box, Space, check_action
from parallax_zoo.envs import board
from parallax_zoo.envs.board import BoardState
from parallax_zoo.envs.rendering import BLACK, GREEN, WHITE, Image

SIZE = 8
CELLS = SIZE * SIZE
RAY_LENGTH = SIZE - 1


def _ray_positions(rays: np.ndarray) -> np.ndarray:
    """Setup-time table `[cell, target]`: where `target` sits in `cell`'s flattened rays, or the pad index past them."""
    directions, length = rays.shape[1], rays.shape[2]
    positions = np.full((CELLS, CELLS), directions * length, dtype=np.int32)
    for cell in range(CELLS):
        for d in range(directions):
            for k in range(length):
                target = rays[cell, d, k]
                if target < CELLS:
                    positions[cell, target] = d * length + k
    return positions


def _flips(lines: Int8[Array, "... 8 7"], mark: Int8[Array, "..."]) -> Bool[Array, "... 8 7"]:
    """The discs a piece of `mark` flips, given the cells along its eight rays.

    A ray flips its leading run of opponent discs when a disc of `mark` closes it.
    """
    mark = mark[..., None, None]
    run = board.leading_run(lines == -mark)
    closed = jnp.any((lines[..., 1:] == mark) & run[..., :-1], axis=-1)
    return run & closed[..., None]


class Othello:
    """Othello on 8x8 with passes; observations are (own, opponent, my turn) planes per player."""

    num_agents: int = board.NUM_PLAYERS
    height: int = SIZE
    width: int = SIZE
    num_actions: int = CELLS + 2
    pass_move: int = CELLS
    no_op: int = CELLS + 1
    action_space: Space = board.action_space(num_actions)
    observation_space: Space = board.observation_space(height, width)
    global_observation_space: Space = Box(0.0, 1.0, (height, width, 3))
    cell_pixels: int = 32

    def __init__(self) -> None:
        rays = board.ray_table(SIZE, SIZE, RAY_LENGTH)
        self._rays = jnp.asarray(rays)
        self._ray_positions = jnp.asarray(_ray_positions(rays))
        start = np.zeros((SIZE, SIZE), np.int8)
        start[3, 3] = start[4, 4] = -1
        start[3, 4] = start[4, 3] = 1
        self._start = jnp.asarray(start.reshape(CELLS))

    def reset(self, *, key: PRNGKeyArray) -> MARLState:
        """The standard opening position, X (slot 0, black) to move."""
        require_key(key, "Othello.reset")
        game = BoardState(board=self._start, to_move=jnp.int32(0), winner=jnp.int32(board.NO_WINNER))
        legal = self._placements(self._start)[0]
        return self._state(game, jnp.concatenate([legal, ~jnp.any(legal, keepdims=True)]), jnp.bool_(False), jnp.int32(0), key)

    def step(self, state: MARLState, action: Int[Array, " 2"]) -> MARLState:
        """Place (flipping every flanked run) or pass; the game ends when neither player can place."""
        check_action(self.action_space, action, (), "Othello.step")
        game: BoardState = state.env_state
        move, legal = board.mover_move(action, game.to_move, state.agents.action_mask)
        mark = board.mark_of(game.to_move)
        cell = jnp.clip(move, 0, CELLS - 1)
        flips = _flips(board.with_sentinel(game.board)[self._rays[cell]], mark)
        flipped = jnp.concatenate([flips.reshape(-1), jnp.zeros((1,), jnp.bool_)])[self._ray_positions[cell]]
        places = legal & (move < CELLS)
        changed = places & (flipped | (jnp.arange(CELLS) == cell))
        after = jnp.where(changed, mark, game.board)

        next_player = 1 - game.to_move
        placements = self._placements(after)
        next_can = jnp.where(next_player == 0, placements[0], placements[1])
        next_has = jnp.any(next_can)
        nobody_can = ~next_has & ~jnp.any(placements)
        disc_balance = jnp.sum(after.astype(jnp.int32))
        by_discs = jnp.where(disc_balance > 0, 0, jnp.where(disc_balance < 0, 1, board.NO_WINNER))
        winner = jnp.where(legal, jnp.where(nobody_can, by_discs, board.NO_WINNER), game.to_move ^ 1)
        ended = ~legal | nobody_can
        next_game = BoardState(board=after, to_move=next_player, winner=winner.astype(jnp.int32))
        legal_moves = jnp.concatenate([next_can, ~next_has[None]])
        return self._state(next_game, legal_moves, ended, state.step_count + 1, state.key)

    def _placements(self, cells: Int8[Array, " 64"]) -> Bool[Array, "2 64"]:
        """Where each player (slot 0, slot 1) could place a disc: an empty cell that flips something."""
        lines = board.with_sentinel(cells)[self._rays]
        marks = jnp.asarray([1, -1], jnp.int8)[:, None]
        flips = _flips(jnp.broadcast_to(lines, (2, *lines.shape)), jnp.broadcast_to(marks, (2, CELLS)))
        return (cells == 0) & jnp.any(flips, axis=(-1, -2))

    def _state(self, game: BoardState, legal_moves: Array, ended: Array, step_count: Array, key: PRNGKeyArray) -> MARLState:
        return board.game_state(
            env_state=game, legal_moves=legal_moves, ended=ended,
            height=self.height, width=self.width, step_count=step_count, key=key,
        )

    def render(self, state: MARLState) -> Image:
        """An RGB picture: black discs for X, white for O, on a green board (pure `jnp`, jittable)."""
        grid = state.env_state.board.reshape(self.height, self.width)
        return board.render_discs(grid, self.cell_pixels, GREEN, BLACK, {1: BLACK, -1: WHITE})

    def render_text(self, state: MARLState) -> str:
        """The board as text: `X` (black), `O` (white), `.` with 0-based labels, then whose turn or the result."""
        return board.board_text(state, self.height, self.width)
