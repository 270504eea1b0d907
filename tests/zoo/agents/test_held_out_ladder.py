"""The held-out ladder (parallax_zoo.agents.held_out_ladder) against plain-Python alpha-beta, heuristics and MCTS."""

from __future__ import annotations

import math
import random
from functools import cache
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers.board_reference import connect_four_drop, has_line, othello_legal, othello_play

from parallax_zoo.agents import held_out_ladder as held_out
from parallax_zoo.envs.connect_four import ConnectFour
from parallax_zoo.envs.othello import Othello
from parallax_zoo.envs.tictactoe import TicTacToe

WIN = held_out.WIN


# Plain-Python references -------------------------------------------------------------------------------------------


def c4_windows() -> list[list[int]]:
    windows = []
    for row in range(6):
        for col in range(7):
            for step_row, step_col in ((0, 1), (1, 0), (1, 1), (1, -1)):
                cells = [(row + k * step_row, col + k * step_col) for k in range(4)]
                if all(0 <= r < 6 and 0 <= c < 7 for r, c in cells):
                    windows.append([r * 7 + c for r, c in cells])
    return windows


WINDOWS = c4_windows()


def c4_score(view: list[int]) -> int:
    """The line-and-threat heuristic for the side to move (+1), as the module docstring states it."""
    mover_first = view.count(1) == view.count(-1)
    score = 3 * sum(view[row * 7 + 3] for row in range(6))
    threats: dict[int, set[int]] = {1: set(), -1: set()}
    for window in WINDOWS:
        pieces = [view[cell] for cell in window]
        for mark in (1, -1):
            if pieces.count(mark) == 2 and pieces.count(0) == 2:
                score += 2 * mark
            if pieces.count(mark) == 3 and pieces.count(0) == 1:
                threats[mark].add(window[pieces.index(0)])
    for mark in (1, -1):
        for cell in threats[mark]:
            odd_row = (5 - cell // 7) % 2 == 0
            suits = odd_row == (mover_first if mark == 1 else not mover_first)
            score += mark * (12 if suits else 8)
    return score


def four_through(board: list[int], cell: int) -> bool:
    """Whether the piece on `cell` is part of four in a row."""
    row, col = divmod(cell, 7)
    mark = board[cell]
    for step_row, step_col in ((0, 1), (1, 0), (1, 1), (1, -1)):
        run = 1
        for sign in (1, -1):
            r, c = row + sign * step_row, col + sign * step_col
            while 0 <= r < 6 and 0 <= c < 7 and board[r * 7 + c] == mark:
                run, r, c = run + 1, r + sign * step_row, c + sign * step_col
        if run >= 4:
            return True
    return False


def c4_children(view: list[int]) -> list[tuple[int, list[int], int | None]]:
    """(move, the child board from the next mover's side, the outcome for the mover if the game ended)."""
    children = []
    for col in range(7):
        after = connect_four_drop(view, col, 1)
        if after is None:
            continue
        cell = next(row * 7 + col for row in range(6) if after[row * 7 + col] == 1 and view[row * 7 + col] == 0)
        outcome = 1 if four_through(after, cell) else 0 if all(after) else None
        children.append((col, [-cell for cell in after], outcome))
    return children


def stable(view: list[int], mark: int) -> int:
    found = set()
    for row, col in ((0, 0), (0, 7), (7, 0), (7, 7)):
        for step_row, step_col in ((0, 1 if col == 0 else -1), (1 if row == 0 else -1, 0)):
            for k in range(8):
                cell = (row + k * step_row) * 8 + col + k * step_col
                if view[cell] != mark:
                    break
                found.add(cell)
    return len(found)


def othello_score(view: list[int]) -> int:
    corners = sum(view[cell] for cell in (0, 7, 56, 63))
    mobility = sum(othello_legal(view, 1)) - sum(othello_legal(view, -1))
    return 25 * corners + 5 * mobility + 10 * (stable(view, 1) - stable(view, -1))


def othello_children(view: list[int]) -> list[tuple[int, list[int], int | None]]:
    legal = othello_legal(view, 1)
    moves = [cell for cell in range(64) if legal[cell]] or [64]
    children = []
    for move in moves:
        after = othello_play(view, move, 1) if move < 64 else list(view)
        child = [-cell for cell in after]
        ended = not any(othello_legal(child, 1)) and not any(othello_legal(child, -1))
        balance = sum(after)
        children.append((move, child, ((balance > 0) - (balance < 0)) if ended else None))
    return children


def tic_tac_toe_children(view: list[int]) -> list[tuple[int, list[int], int | None]]:
    children = []
    for cell in (index for index in range(9) if view[index] == 0):
        after = list(view)
        after[cell] = 1
        outcome = 1 if has_line(after, 3, 3, 1, 3) else 0 if all(after) else None
        children.append((cell, [-mark for mark in after], outcome))
    return children


def alphabeta(view: list[int], depth: int, alpha: float, beta: float, children: Any, score: Any) -> float:
    """Recursive fail-soft negamax alpha-beta for the side to move, `depth` plies left."""
    best = -math.inf
    for _, child, outcome in children(view):
        if outcome is not None:
            value = outcome * WIN * depth
        elif depth == 1:
            value = -score(child)
        else:
            value = -alphabeta(child, depth - 1, -beta, -alpha, children, score)
        best = max(best, value)
        alpha = max(alpha, value)
        if alpha >= beta:
            break
    return best


def root_values(view: list[int], depth: int, children: Any, score: Any) -> dict[int, float]:
    """Every first move's exact negamax value (no pruning at the root, alpha-beta below it)."""
    values = {}
    for move, child, outcome in children(view):
        if outcome is not None:
            values[move] = outcome * WIN * depth
        elif depth == 1:
            values[move] = -score(child)
        else:
            values[move] = -alphabeta(child, depth - 1, -math.inf, math.inf, children, score)
    return values


def minimax(view: list[int], depth: int, children: Any, score: Any) -> float:
    """Plain negamax without pruning: the reference's reference at small depths."""
    values = []
    for _, child, outcome in children(view):
        if outcome is not None:
            values.append(outcome * WIN * depth)
        elif depth == 1:
            values.append(-score(child))
        else:
            values.append(-minimax(child, depth - 1, children, score))
    return max(values)


# Positions from random play ----------------------------------------------------------------------------------------


def random_positions(start: list[int], children: Any, count: int, seed: int, plies: tuple[int, int]) -> list[list[int]]:
    """`count` unfinished boards from the mover's side, each after a random number of random moves in `plies`."""
    rng = random.Random(seed)
    found = []
    while len(found) < count:
        view = list(start)
        for _ in range(rng.randrange(*plies)):
            _, child, outcome = rng.choice(children(view))
            if outcome is not None:
                break
            view = child
        else:
            found.append(view)
    return found


def c4_positions(count: int, seed: int) -> list[list[int]]:
    """Unfinished ConnectFour boards after 2 to 20 random drops."""
    return random_positions([0] * 42, c4_children, count, seed, (2, 21))


def othello_positions(count: int, seed: int, plies: tuple[int, int]) -> list[list[int]]:
    """Unfinished Othello boards after a random number of random moves in `plies`, from the opening."""
    opening = [0] * 64
    opening[27] = opening[36] = -1
    opening[28] = opening[35] = 1
    return random_positions(opening, othello_children, count, seed, plies)


C4 = ConnectFour()
OTHELLO = Othello()
TIC_TAC_TOE = TicTacToe()


@cache
def jitted_values(game_name: str, depth: int) -> Any:
    game, score, order = {
        "ConnectFour": (C4, held_out.connect_four_score, held_out.C4_ORDER),
        "Othello": (OTHELLO, held_out.othello_score, held_out.OTHELLO_ORDER),
        "TicTacToe": (TIC_TAC_TOE, held_out.no_heuristic, held_out.TIC_TAC_TOE_ORDER),
    }[game_name]

    def values(observation: jax.Array) -> jax.Array:
        return held_out.alphabeta_values(game, held_out.root_state(game, observation), depth, score, order)

    return jax.jit(jax.vmap(values))


def observations(game_name: str, views: list[list[int]]) -> jax.Array:
    boards = jnp.asarray(np.array(views, np.int8))
    if game_name == "ConnectFour":
        return boards.reshape(-1, 6, 7)
    if game_name == "TicTacToe":
        return boards.reshape(-1, 3, 3)
    return jnp.stack([boards, jnp.ones_like(boards)], axis=-1).reshape(-1, 8, 8, 2)


# The heuristics ----------------------------------------------------------------------------------------------------


def test_the_reference_win_check_agrees_with_the_board_reference() -> None:
    for view in c4_positions(100, seed=5):
        for col, _child, outcome in c4_children(view):
            after = connect_four_drop(view, col, 1)
            assert after is not None and (outcome == 1) == has_line(after, 6, 7, 1, 4)


def test_heuristics_match_the_plain_python_ones_on_random_positions() -> None:
    c4 = c4_positions(200, seed=1)
    scores = jax.jit(jax.vmap(held_out.connect_four_score))(jnp.asarray(np.array(c4, np.int8)))
    assert scores.tolist() == [c4_score(view) for view in c4]
    assert len(set(scores.tolist())) > 20, "the positions tell the heuristic's terms apart"
    boards = othello_positions(100, seed=2, plies=(4, 50))
    scores = jax.jit(jax.vmap(held_out.othello_score))(jnp.asarray(np.array(boards, np.int8)))
    assert scores.tolist() == [othello_score(view) for view in boards]
    assert any(stable(view, 1) or stable(view, -1) for view in boards), "some positions have stable discs"


# Alpha-beta against the plain-Python search ------------------------------------------------------------------------


def assert_same_best_moves(game_name: str, views: list[list[int]], depth: int, children: Any, score: Any) -> None:
    """The jitted search finds the same best value and the same set of best first moves as the reference."""
    values = np.asarray(jitted_values(game_name, depth)(observations(game_name, views)))
    for view, row in zip(views, values, strict=True):
        reference = root_values(view, depth, children, score)
        best = max(reference.values())
        if depth <= 2:
            assert best == minimax(view, depth, children, score)
        legal = list(reference)
        assert row[legal].max() == best
        found = {move for move in legal if row[move] == best}
        assert found == {move for move, value in reference.items() if value == best}


@pytest.mark.parametrize(("depth", "count"), [(1, 60), (2, 60), pytest.param(4, 12, marks=pytest.mark.slow)])
def test_connect_four_alphabeta_finds_the_plain_python_best_moves(depth: int, count: int) -> None:
    assert_same_best_moves("ConnectFour", c4_positions(count, seed=depth), depth, c4_children, c4_score)


@pytest.mark.parametrize(("depth", "count"), [(1, 30), pytest.param(2, 12, marks=pytest.mark.slow)])
def test_othello_alphabeta_finds_the_plain_python_best_moves(depth: int, count: int) -> None:
    boards = othello_positions(count, seed=depth, plies=(2, 58))
    assert_same_best_moves("Othello", boards, depth, othello_children, othello_score)


def test_tic_tac_toe_alphabeta9_finds_the_plain_python_best_moves_to_the_end_of_the_game() -> None:
    """Searched to the end (9 plies), the values are exact: the quickest win, the slowest loss, else a draw."""
    views = random_positions([0] * 9, tic_tac_toe_children, 40, seed=9, plies=(0, 6))
    assert_same_best_moves("TicTacToe", views, 9, tic_tac_toe_children, lambda view: 0)
    values = np.asarray(jitted_values("TicTacToe", 9)(observations("TicTacToe", [[0] * 9])))[0]
    assert (values[:9] == 0).all(), "from the empty board every first move draws with best play"


@pytest.mark.slow
def test_deep_alphabeta_finds_the_plain_python_best_moves() -> None:
    assert_same_best_moves("ConnectFour", c4_positions(6, seed=6), 6, c4_children, c4_score)
    assert_same_best_moves("Othello", othello_positions(4, seed=4, plies=(6, 50)), 4, othello_children, othello_score)


@pytest.mark.slow
def test_alphabeta_sees_a_forced_win_in_an_othello_endgame_and_every_tie_of_an_opening() -> None:
    """From the start all four placements are symmetric, so all tie; near the end, wins are scored by how soon."""
    start = [0] * 64
    start[27] = start[36] = -1
    start[28] = start[35] = 1
    values = np.asarray(jitted_values("Othello", 2)(observations("Othello", [start])))[0]
    assert set(np.flatnonzero(values == values.max()).tolist()) == {19, 26, 37, 44}
    late = othello_positions(40, seed=9, plies=(54, 60))
    values = np.asarray(jitted_values("Othello", 2)(observations("Othello", late)))
    wins = [view for view, row in zip(late, values, strict=True) if row.max() >= WIN]
    assert wins, "some endgames are won within two plies"
    for view in wins:
        assert max(root_values(view, 2, othello_children, othello_score).values()) >= WIN


# The players -------------------------------------------------------------------------------------------------------


def winning_positions(count: int, seed: int) -> list[tuple[list[int], set[int]]]:
    """ConnectFour positions where the mover can win at once, with its winning columns."""
    found = []
    for view in c4_positions(20 * count, seed):
        wins = {move for move, _, outcome in c4_children(view) if outcome == 1}
        if wins:
            found.append((view, wins))
    return found[:count]


def forced_positions(count: int, seed: int) -> list[tuple[list[int], int]]:
    """ConnectFour positions with no win for the mover and exactly one drop that stops the opponent winning next."""
    found = []
    for view in c4_positions(40 * count, seed):
        children = c4_children(view)
        if any(outcome == 1 for _, _, outcome in children):
            continue
        safe = [move for move, child, _ in children if not any(o == 1 for _, _, o in c4_children(child))]
        if len(safe) == 1 and len(children) > 1:
            found.append((view, safe[0]))
    return found[:count]


def c4_mask(view: list[int]) -> np.ndarray:
    return np.array([view[col] == 0 for col in range(7)] + [False])


def play(name: str, views: list[list[int]], seed: int) -> list[int]:
    player = jax.jit(jax.vmap(held_out.HELD_OUT["ConnectFour"][name]))
    keys = jax.random.split(jax.random.key(seed), len(views))
    masks = jnp.asarray(np.stack([c4_mask(v) for v in views]))
    return np.asarray(player(observations("ConnectFour", views), masks, keys)).tolist()


def python_mcts(view: list[int], simulations: int, rng: random.Random) -> int:
    """Plain UCT (UCB1, c = sqrt 2) with uniformly random rollouts on ConnectFour; the most visited first drop."""
    tree: dict[tuple[int, ...], list[float]] = {}  # node -> [visits, total value for the player who moved into it]

    def rollout(board: list[int]) -> int:
        sign = 1
        while True:
            _, board, outcome = rng.choice(c4_children(board))
            if outcome is not None:
                return sign * outcome
            sign = -sign

    def simulate(board: list[int]) -> float:
        """The value for the mover of `board` of one simulation from it."""
        children = c4_children(board)
        parent_visits = sum(tree.get(tuple(child), [0, 0])[0] for _, child, _ in children) + 1

        def ucb(entry: tuple[int, list[int], int | None]) -> float:
            stats = tree.get(tuple(entry[1]))
            if stats is None or stats[0] == 0:
                return math.inf
            return stats[1] / stats[0] + math.sqrt(2 * math.log(parent_visits) / stats[0])

        move, child, outcome = max(children, key=ucb)
        stats = tree.setdefault(tuple(child), [0, 0.0])
        if outcome is not None:
            value = float(outcome)
        elif stats[0] == 0:
            value = -float(rollout(child))
        else:
            value = -simulate(child)
        stats[0] += 1
        stats[1] += value
        return value

    for _ in range(simulations):
        simulate(view)
    return max(c4_children(view), key=lambda entry: tree.get(tuple(entry[1]), [0])[0])[0]


@pytest.mark.slow  # compiles every held-out player (about 20 s here); the default suite checks them move by move above
def test_every_player_takes_a_one_move_win_as_the_plain_python_mcts_does() -> None:
    positions = winning_positions(24, seed=11)
    views = [view for view, _ in positions]
    rng = random.Random(0)
    assert all(python_mcts(view, 200, rng) in wins for view, wins in positions[:8])
    for name in ("alphabeta1", "alphabeta2", "alphabeta4", "mcts200"):
        picked = play(name, views, seed=3)
        assert all(move in wins for move, (_, wins) in zip(picked, positions, strict=True)), name


@pytest.mark.slow
def test_search_players_block_the_one_forced_move_and_mcts_agrees_with_the_plain_python_one() -> None:
    """Alpha-beta from depth 2 always blocks; MCTS-200 and the plain-Python UCT block about as often (most times)."""
    positions = forced_positions(24, seed=12)
    views, blocks = [view for view, _ in positions], [move for _, move in positions]
    assert len(positions) == 24
    for name in ("alphabeta2", "alphabeta4"):
        assert play(name, views, seed=4) == blocks, name
    jitted = np.mean([move == block for move, block in zip(play("mcts200", views, seed=5), blocks, strict=True)])
    rng = random.Random(1)
    reference = np.mean([python_mcts(view, 200, rng) == block for view, block in positions])
    assert jitted >= 0.75 and reference >= 0.75 and abs(jitted - reference) <= 0.25, (jitted, reference)


@pytest.mark.parametrize(
    ("game", "name", "plies"),
    [
        pytest.param(C4, "alphabeta2", 30, id="c4-alphabeta2"),
        pytest.param(TIC_TAC_TOE, "alphabeta9", 9, id="tictactoe-alphabeta9"),
        pytest.param(OTHELLO, "alphabeta1", 70, id="othello-alphabeta1", marks=pytest.mark.slow),
        pytest.param(C4, "alphabeta6", 30, id="c4-alphabeta6", marks=pytest.mark.slow),
        pytest.param(C4, "mcts1000", 30, id="c4-mcts1000", marks=pytest.mark.slow),
        pytest.param(OTHELLO, "alphabeta4", 70, id="othello-alphabeta4", marks=pytest.mark.slow),
        pytest.param(OTHELLO, "mcts200", 70, id="othello-mcts200", marks=pytest.mark.slow),
    ],
)
def test_held_out_players_play_legal_moves_from_both_seats_and_beat_random_play(
    game: Any, name: str, plies: int
) -> None:
    """A batch of games, the player in slot `game % 2`, uniformly random moves in the other, one jitted scan."""
    from parallax import VmapWrapper
    from parallax_zoo.agents.ladder import per_slot

    games = 8
    venv = VmapWrapper(game, games)
    seat = (np.arange(games) % 2)[:, None] == np.arange(2)[None, :]
    act = per_slot(held_out.HELD_OUT[type(game).__name__][name])

    @jax.jit
    def run(key: jax.Array) -> tuple[jax.Array, ...]:
        def body(state: Any, key: jax.Array) -> tuple[Any, tuple[jax.Array, ...]]:
            mine_key, random_key = jax.random.split(key)
            mask = state.agents.action_mask
            mine = act(state.agents.observation, mask, mine_key)
            theirs = jax.random.categorical(random_key, jnp.where(mask, 0.0, -jnp.inf)).astype(jnp.int32)
            after = venv.step(state, jnp.where(seat, mine, theirs))
            return after, (mask, mine, after.agents.reward)

        return jax.lax.scan(body, venv.reset(key=key), jax.random.split(key, plies))[1]

    mask, mine, reward = (np.asarray(x) for x in run(jax.random.key(0)))
    assert np.take_along_axis(mask, mine[..., None], axis=-1).all(), "every action it returns is allowed by its mask"
    no_op = mask.shape[-1] - 1
    assert (mine[mask[..., no_op]] == no_op).all()
    mine_reward = np.take_along_axis(reward, (np.arange(games) % 2)[None, :, None], axis=-1)[..., 0]
    assert mine_reward.sum() > games / 2, "it wins most of its games against random play"
