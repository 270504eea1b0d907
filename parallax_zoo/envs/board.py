"""What the two-player board games share: the `BoardGame` base, turn masks, legality, lines, outcomes, pictures, text.

`BoardGame` owns `reset` and `step` around each game's `_init` and `_step`
(as Pgx's `core.Env` owns `step` around `_step`): it checks the action, reads
the mover's move (an illegal one becomes -1), and turns the game's new
position into a `MARLState` with masks, observations and outcome rewards.
A game supplies its rules (`_init`, `_step`) and its picture (`render`).

docs/protocol.md ("Turn-based boards"): both slots stay active for the whole game and whose turn
it is lives in `agents.action_mask`; the waiting player's only legal action is
the no-op, the last action index. So the loser's -1 arrives on the winning
move (rules 3 and 5, docs/protocol.md). An illegal move by the player to move loses
the game; the waiting player's action is ignored entirely (rule 1). A
finished game stays finished until it is reset: stepping it returns the same
position, observations and masks with zero rewards and `termination` still
true (`ValidateActions` refuses such a step instead).

Boards are flat `int8` arrays in row-major order: `+1` is a piece of slot 0,
`-1` a piece of slot 1, `0` an empty cell. Observations stay `int8` (each
player's board signed from its side); learners cast them to float.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Generic, NamedTuple, TypeVar

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike
from jaxtyping import Array, Bool, Float, Int, Int8, PRNGKeyArray

from parallax.core import Agents, MARLState, require_key
from parallax.spaces import Box, Discrete, Space, check_action, stack_space
from parallax_zoo.envs.rendering import Color, Image, canvas, cell_coordinates, grid_lines, paint

NUM_PLAYERS = 2
NO_WINNER = -1
SYMBOLS = {1: "X", -1: "O", 0: "."}
_SLOT_MARKS = np.array([1, -1], np.int8)  # each slot's cell value, as in `mark_of`


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class BoardState:
    """The dynamic data of a board game: the cells, whose turn it is, and the winner once decided."""

    board: Int8[Array, " cells"]
    to_move: Int[Array, ""]
    winner: Int[Array, ""]


class Position(NamedTuple):
    """What a game's `_init` and `_step` return: the position, the next mover's legal moves (no-op excluded), and
    whether the game ended."""

    game: BoardState
    legal_moves: Bool[Array, " moves"]
    ended: Bool[Array, ""]


GameT = TypeVar("GameT", bound=BoardState)
"""A game's own `BoardState` subclass (the cells plus whatever its rules keep, e.g. bit sets)."""


class BoardGame(Generic[GameT]):
    """The base of the two-player zero-sum board games: a `MARLEnv` whose subclasses write only their rules.

    Subclasses call `super().__init__` with the board's shape and action count
    (the no-op is the last action), and implement `_init() -> Position`,
    `_step(game, move) -> Position` (`move` is the mover's legal move, or -1
    for an illegal one, which loses, so the position comes back ended, and
    changes nothing but `to_move` and `winner`), `_position(cells, to_move)
    -> Position` (any position, for `position`) and `render(state)`.
    """

    num_agents: int = NUM_PLAYERS

    def __init__(self, *, height: int, width: int, num_actions: int, turn_plane: bool = False, cell_pixels: int = 32):
        self.height = height
        self.width = width
        self.num_actions = num_actions
        self.no_op = num_actions - 1
        self.turn_plane = turn_plane
        self.cell_pixels = cell_pixels
        self.action_space = action_space(num_actions)
        self.observation_space = observation_space(height, width, turn_plane)
        self.global_observation_space = global_observation_space(height * width)

    def reset(self, key: PRNGKeyArray) -> MARLState:
        """The starting position, slot 0 (X) to move."""
        require_key(key, f"{type(self).__name__}.reset")
        return self._state(self._init(), jnp.int32(0), key)

    def step(self, state: MARLState, action: Int[Array, " 2"]) -> MARLState:
        """The mover's move (the waiting player's action is ignored); an illegal move loses on the spot.

        A finished game is absorbing: its position is kept, the rewards are
        zeros and it stays terminated, so no step resumes it or changes its winner.
        It is played as the move -1, which places nothing and comes back
        ended (the `_step` contract), and keeps its old `to_move` and `winner`:
        two scalar selects rather than one over every cell.
        """
        check_action(self.action_space, action, (), f"{type(self).__name__}.step")
        game: GameT = state.env_state
        finished = state.termination
        played = self._step(game, played_move(state, action))
        kept = dataclasses.replace(
            played.game,
            to_move=jnp.where(finished, game.to_move, played.game.to_move),
            winner=jnp.where(finished, game.winner, played.game.winner),
        )
        position = Position(kept, played.legal_moves, played.ended)
        return self._state(position, state.step_count + 1, state.key, finished_before=finished)

    def position(self, cells: ArrayLike, to_move: int | Int[Array, ""], *, key: PRNGKeyArray) -> MARLState:
        """The state of any position (+1 slot 0, -1 slot 1, 0 empty; row-major) with `to_move` to play.

        For puzzles, tests, evaluation from set openings, and players that
        search ahead from what they observe (the global observation is the
        cells and `to_move`, `global_observe`). The masks follow the rules; a
        position the rules call over comes back terminated, with its winner.
        """
        require_key(key, f"{type(self).__name__}.position")
        if isinstance(to_move, int) and to_move not in (0, 1):
            raise ValueError(
                f"{type(self).__name__}.position: to_move must be 0 (slot 0, X) or 1 (slot 1, O), got {to_move}."
            )
        cells = jnp.asarray(cells)
        size = self.height * self.width
        if cells.shape != (size,):
            raise ValueError(
                f"{type(self).__name__}.position expects a flat board of shape ({size},), got {cells.shape}; "
                f"reshape a {self.height}x{self.width} board with .reshape({size})."
            )
        return self._state(self._position(cells.astype(jnp.int8), jnp.asarray(to_move, jnp.int32)), jnp.int32(0), key)

    def _init(self) -> Position:
        raise NotImplementedError

    def _position(self, cells: Int8[Array, " cells"], to_move: Int[Array, ""]) -> Position:
        raise NotImplementedError

    def _step(self, game: GameT, move: Int[Array, ""]) -> Position:
        raise NotImplementedError

    def _state(
        self,
        position: Position,
        step_count: Int[Array, ""],
        key: PRNGKeyArray,
        finished_before: Bool[Array, ""] | None = None,
    ) -> MARLState:
        return game_state(
            env_state=position.game,
            legal_moves=position.legal_moves,
            ended=position.ended,
            height=self.height,
            width=self.width,
            turn_plane=self.turn_plane,
            step_count=step_count,
            key=key,
            finished_before=finished_before,
        )

    def render_text(self, state: MARLState) -> str:
        """The board as text: `X`, `O`, `.` with 0-based row and column labels, then whose turn or the result."""
        return board_text(state, self.height, self.width)

    def __eq__(self, other: object) -> bool:
        """Games of one kind and picture size are interchangeable (envs are immutable), so jitted code compiled for one
        serves the other."""
        return type(other) is type(self) and other.cell_pixels == self.cell_pixels  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self), self.cell_pixels))

    def __repr__(self) -> str:
        """`TicTacToe()`: the constructor call, naming `cell_pixels` only where it is not the default 32."""
        return f"{type(self).__name__}({'' if self.cell_pixels == 32 else f'cell_pixels={self.cell_pixels}'})"


def mark_of(player: Int[Array, ""]) -> Int8[Array, ""]:
    """The cell value of `player`'s pieces: +1 for slot 0, -1 for slot 1."""
    return (1 - 2 * player).astype(jnp.int8)


def line_cells(height: int, width: int, length: int) -> np.ndarray:
    """Every `length`-in-a-row on a `height x width` board as flat cell indices, one line per row (built once, outside
    jit)."""
    grid = np.arange(height * width).reshape(height, width)
    lines = []
    for row_step, col_step in ((0, 1), (1, 0), (1, 1), (1, -1)):
        for row in range(height):
            for col in range(width):
                rows = row + row_step * np.arange(length)
                cols = col + col_step * np.arange(length)
                if rows.max() < height and 0 <= cols.min() and cols.max() < width:
                    lines.append(grid[rows, cols])
    return np.array(lines, np.int32)


def played_move(state: MARLState, action: Int[Array, " 2"]) -> Int[Array, ""]:
    """The move of the player to move if it is legal (in range, allowed by its action mask, the game not over), else -1.

    The waiting player's entry of `action` is never read (rule 1), and a
    finished game has no legal move (it is absorbing). `-1` matches no cell,
    so `jnp.arange(cells) == played` places nothing after an illegal move.
    The result is one reduction over the two players, each looking up its own
    action in its own mask row, so XLA:CPU computes it once per env instead of
    re-deriving it inside the loop of every output leaf and of the selective reset.
    """
    action_mask = state.agents.action_mask
    if action_mask is None:
        raise ValueError(
            "a board game's step needs state.agents.action_mask, which its reset and step always set; "
            "got a state without one. Pass the state the env returned."
        )
    num_actions = action_mask.shape[-1]
    action = jnp.asarray(action).astype(jnp.int32)
    allowed = jnp.take_along_axis(action_mask, jnp.clip(action, 0, num_actions - 1)[:, None], axis=-1)[:, 0]
    mover = (jnp.arange(NUM_PLAYERS) == state.env_state.to_move) & ~state.termination
    legal = mover & allowed & (action >= 0) & (action < num_actions)
    return jnp.max(jnp.where(legal, action, -1))


def turn_mask(
    legal_moves: Bool[Array, " moves"], to_move: Int[Array, ""], ended: Bool[Array, ""]
) -> Bool[Array, "2 actions"]:
    """Both players' action masks: the mover gets `legal_moves`, the waiting player only the no-op.

    Once the game has ended both players get only the no-op, so every mask
    keeps a legal action (rule 4).
    """
    players = jnp.arange(NUM_PLAYERS)[:, None]
    no_op_only = jnp.arange(legal_moves.shape[0] + 1) == legal_moves.shape[0]
    mover_row = jnp.concatenate([legal_moves, jnp.zeros((1,), jnp.bool_)])
    return jnp.where((players == to_move) & ~ended, mover_row, no_op_only)


def placement_outcome(
    legal: Bool[Array, ""], won: Bool[Array, ""], full: Bool[Array, ""], mover: Int[Array, ""]
) -> tuple[Int[Array, ""], Bool[Array, ""]]:
    """The winner (or `NO_WINNER`) and whether the game ended, after `mover`'s move in a line-making game.

    A line wins, an illegal move loses, a `full` board without a line draws:
    the game goes on only after a legal move that made no line and left the
    board open.
    """
    return placement_winner(legal, won, mover), ~legal | won | full


def placement_winner(legal: Bool[Array, ""], won: Bool[Array, ""], mover: Int[Array, ""]) -> Int[Array, ""]:
    """The winner after `mover`'s move in a line-making game: `mover` after a line, the other player after an illegal
    move.

    Otherwise `NO_WINNER`.
    """
    return jnp.where(won, mover, jnp.where(legal, NO_WINNER, 1 - mover)).astype(jnp.int32)


def outcome_rewards(winner: Int[Array, ""], ended: Bool[Array, ""]) -> Float[Array, " 2"]:
    """+1 to the winner and -1 to the loser on the step that ends the game; zeros otherwise and on a draw."""
    decided = ended & (winner != NO_WINNER)
    return jnp.where(decided, jnp.where(jnp.arange(NUM_PLAYERS) == winner, 1.0, -1.0), 0.0).astype(jnp.float32)


def observation_space(height: int, width: int, turn_plane: bool) -> Space:
    """Per-player int8 views of a `height x width` board, stacked on the agent axis (see `observe`)."""
    shape = (height, width, 2) if turn_plane else (height, width)
    return stack_space(Box(-1, 1, shape, jnp.int8), NUM_PLAYERS)


def global_observation_space(cells: int) -> Space:
    """The centralised critic's input: slot 0's signed board (+1 own, -1 opponent, 0 empty), then whose turn (0 or
    1)."""
    return Box(-1, 1, (cells + 1,), jnp.int8)


def action_space(num_actions: int) -> Space:
    """One discrete action per player, the no-op included, stacked on the agent axis."""
    return stack_space(Discrete(num_actions), NUM_PLAYERS)


def observe(
    board: Int8[Array, " cells"], to_move: Int[Array, ""], height: int, width: int, turn_plane: bool
) -> Int8[Array, "2 height width *planes"]:
    """Each player's int8 view of the board: +1 its own pieces, -1 its opponent's, 0 empty.

    With `turn_plane`, each view is `(height, width, 2)`: the signed board, then
    a plane that is 1 on that player's turn and 0 otherwise (for games where
    whose turn it is cannot be read off the piece count, Othello's passes).
    Both players' views are written on every step, so they are one int8
    multiply of the board; learners cast them to float themselves.
    """
    views = board.reshape(1, height, width) * _SLOT_MARKS.reshape(NUM_PLAYERS, 1, 1)
    if not turn_plane:
        return views
    my_turn = (jnp.arange(NUM_PLAYERS, dtype=to_move.dtype) == to_move).astype(jnp.int8).reshape(NUM_PLAYERS, 1, 1, 1)
    plane = np.arange(2)  # 0: the signed board, 1: my turn; a select, not a stack, so the loop has no concatenation
    return jnp.where(plane == 0, views[..., None], my_turn)


def global_observe(board: Int8[Array, " cells"], to_move: Int[Array, ""]) -> Int8[Array, " cells_plus_one"]:
    """Slot 0's signed board followed by whose turn it is: a fixed-shape int8 input for a centralised critic."""
    return jnp.concatenate([board, to_move.astype(jnp.int8)[None]])


def game_state(
    *,
    env_state: BoardState,
    legal_moves: Bool[Array, " moves"],
    ended: Bool[Array, ""],
    height: int,
    width: int,
    turn_plane: bool,
    step_count: Int[Array, ""],
    key: PRNGKeyArray,
    finished_before: Bool[Array, ""] | None = None,
) -> MARLState:
    """The `MARLState` of a board position: both players active, turn masks, outcome rewards.

    The outcome is paid on the step that ends the game only: where the game
    had `finished_before` this step, the rewards are zeros.
    """
    paid = ended if finished_before is None else ended & ~finished_before
    return MARLState(
        env_state=env_state,
        agents=Agents(
            observation=observe(env_state.board, env_state.to_move, height, width, turn_plane),
            active=jnp.ones((NUM_PLAYERS,), jnp.bool_),
            reward=outcome_rewards(env_state.winner, paid),
            action_mask=turn_mask(legal_moves, env_state.to_move, ended),
        ),
        termination=ended,
        truncation=jnp.bool_(False),
        info={},
        step_count=step_count,
        key=key,
        global_observation=global_observe(env_state.board, env_state.to_move),
    )


def board_text(state: MARLState, height: int, width: int) -> str:
    """A text diagram of an unbatched board state: `X` slot 0, `O` slot 1, `.` empty, 0-based row and column labels.

    The last line says whose turn it is, or how the game ended.
    """
    board = np.asarray(state.env_state.board)
    if board.shape != (height * width,):
        raise ValueError(
            f"render_text expects one unbatched state with a board of shape ({height * width},), got {board.shape}; "
            "index a batched state first, e.g. jax.tree.map(lambda x: x[0], state)."
        )
    label_width = len(str(height - 1))
    lines = [" " * label_width + " " + " ".join(str(c) for c in range(width))]
    for row in range(height):
        cells = " ".join(SYMBOLS[int(v)] for v in board[row * width : (row + 1) * width])
        lines.append(f"{row:>{label_width}} {cells}")
    names = (SYMBOLS[1], SYMBOLS[-1])
    if bool(state.termination):
        winner = int(state.env_state.winner)
        lines.append("draw" if winner == NO_WINNER else f"{names[winner]} wins")
    else:
        lines.append(f"{names[int(state.env_state.to_move)]} to move")
    return "\n".join(lines)


def render_discs(
    grid: Int8[Array, "rows cols"],
    cell: int,
    background: Color,
    line_color: Color,
    colors: dict[int, Color],
    radius: float = 0.4,
) -> Image:
    """An RGB picture of `grid`: one disc per piece, coloured by `colors[value]`, on a lined board."""
    rows, cols = grid.shape
    image = canvas(rows * cell, cols * cell, background)
    row, col, down, across = cell_coordinates(rows * cell, cols * cell, cell)
    values = grid[row, col]
    disc = down**2 + across**2 <= radius**2
    for value, color in colors.items():
        image = paint(image, disc & (values == value), color)
    return grid_lines(image, cell, line_color)
