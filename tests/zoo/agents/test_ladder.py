"""The opponent ladder (parallax_zoo.agents.ladder): hand-worked positions, plain-Python references, exhaustive
TicTacToe, legal play."""

from __future__ import annotations

import random
from functools import cache
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers.board_reference import connect_four_drop, has_line, othello_legal, othello_play

import parallax_zoo
from parallax import VmapWrapper
from parallax.wrappers import RecordEpisodeStatistics
from parallax_zoo.agents import ladder
from parallax_zoo.envs.connect_four import ConnectFour
from parallax_zoo.envs.othello import Othello
from parallax_zoo.envs.tictactoe import TicTacToe


@cache
def batched(player: Any) -> Any:
    """`player` jitted and mapped over a batch of (observation, mask) with one key per entry."""
    return jax.jit(jax.vmap(player))


def choices(player: Any, observations: np.ndarray, masks: np.ndarray, seed: int = 0) -> np.ndarray:
    keys = jax.random.split(jax.random.key(seed), len(observations))
    return np.asarray(batched(player)(jnp.asarray(observations, jnp.int8), jnp.asarray(masks), keys))


# TicTacToe ---------------------------------------------------------------------------------------------------------


def ttt_mask(view: list[int]) -> np.ndarray:
    return np.array([cell == 0 for cell in view] + [False])


def ttt_best_moves(view: list[int]) -> set[int]:
    """The moves `perfect` may choose: those of best value in its table."""
    values = ladder._TTT_VALUES[int(np.dot([1 if c == 1 else 2 if c == -1 else 0 for c in view], 3 ** np.arange(9)))]
    legal = [cell for cell in range(9) if view[cell] == 0]
    best = max(values[cell] for cell in legal)
    return {cell for cell in legal if values[cell] == best}


def test_perfect_tictactoe_never_loses_to_any_line_of_play_from_either_seat() -> None:
    """Every opponent move and every move `perfect` may choose, from both seats: no line of play ends in its loss."""
    perfect_views: list[list[int]] = []

    @cache
    def results(cells: tuple[int, ...], mark: int, perfect_mark: int) -> frozenset[str]:
        """Every result for `perfect` reachable from here (memoised: a position's lines of play are explored once)."""
        if has_line(list(cells), 3, 3, -mark, 3):
            return frozenset({"win" if -mark == perfect_mark else "loss"})
        if all(cells):
            return frozenset({"draw"})
        view = [c * mark for c in cells]
        if mark == perfect_mark:
            perfect_views.append(view)
            moves = ttt_best_moves(view)
        else:
            moves = {cell for cell in range(9) if cells[cell] == 0}
        reachable: frozenset[str] = frozenset()
        for move in moves:
            after = list(cells)
            after[move] = mark
            reachable |= results(tuple(after), -mark, perfect_mark)
        return reachable

    for perfect_mark in (1, -1):
        reachable = results((0,) * 9, 1, perfect_mark)
        assert "loss" not in reachable and {"win", "draw"} <= reachable, (perfect_mark, reachable)
    # The jitted player only ever picks among the table's best moves, whatever its key.
    observations = np.array(perfect_views, np.int8).reshape(-1, 3, 3)
    masks = np.stack([ttt_mask(view) for view in perfect_views])
    for seed in range(3):
        picked = choices(ladder.perfect_tictactoe, observations, masks, seed)
        assert all(int(move) in ttt_best_moves(view) for move, view in zip(picked, perfect_views, strict=True))


def test_perfect_tictactoe_takes_a_win_and_blocks_a_loss() -> None:
    win = [1, 1, 0, -1, -1, 0, 0, 0, 0]  # own row 0 needs cell 2; the opponent's row 1 needs cell 5
    block = [1, 0, 0, -1, -1, 0, 1, 0, 0]  # no win; the opponent's row 1 needs cell 5
    views = [win, block]
    picked = choices(
        ladder.perfect_tictactoe, np.array(views).reshape(-1, 3, 3), np.stack([ttt_mask(v) for v in views])
    )
    assert picked.tolist() == [2, 5]


# ConnectFour -------------------------------------------------------------------------------------------------------


def c4_view(rows: list[str]) -> list[int]:
    """A board from the mover's side from text rows, top first: `X` own, `O` opponent, `.` empty."""
    return [{"X": 1, "O": -1, ".": 0}[ch] for row in rows for ch in row]


def c4_mask(view: list[int]) -> np.ndarray:
    return np.array([view[col] == 0 for col in range(7)] + [False])


def c4_choices(player: Any, views: list[list[int]], seed: int = 0) -> np.ndarray:
    return choices(player, np.array(views).reshape(-1, 6, 7), np.stack([c4_mask(v) for v in views]), seed)


EMPTY_ROWS = ["......."] * 4
WIN_OVER_BLOCK = c4_view([*EMPTY_ROWS[:3], "......O", "......O", "XXX...O"])  # win at 3; the opponent threatens 6
BLOCK = c4_view([*EMPTY_ROWS, "X......", "OOO.X.."])  # the opponent's row needs column 3
POISONED = c4_view([*EMPTY_ROWS, ".OOOX..", ".XOXXO."])  # column 0 lets the opponent drop onto (4, 0) and win
DOUBLE_THREAT = c4_view([*EMPTY_ROWS, "......O", "..XX..O"])  # columns 1 and 4 make an open three: a forced win


def c4_wins(view: list[int], mark: int) -> set[int]:
    """The columns where `mark` dropping now makes four in a row (plain-Python reference)."""
    wins = set()
    for col in range(7):
        after = connect_four_drop(view, col, mark)
        if after is not None and has_line(after, 6, 7, mark, 4):
            wins.add(col)
    return wins


def test_hand_worked_positions_are_as_described() -> None:
    assert c4_wins(WIN_OVER_BLOCK, 1) == {3} and c4_wins(WIN_OVER_BLOCK, -1) == {6}
    assert c4_wins(BLOCK, 1) == set() and c4_wins(BLOCK, -1) == {3}
    assert c4_wins(POISONED, 1) == set() and c4_wins(POISONED, -1) == set()
    poisoned_after = connect_four_drop(POISONED, 0, 1)
    assert poisoned_after is not None and c4_wins(poisoned_after, -1) == {0}
    assert c4_wins(DOUBLE_THREAT, 1) == set() and c4_wins(DOUBLE_THREAT, -1) == set()
    for col in (1, 4):
        after = connect_four_drop(DOUBLE_THREAT, col, 1)
        assert after is not None and len(c4_wins(after, 1)) == 2


@pytest.mark.parametrize("name", ["tactical", "depth2", "depth4"])
def test_connect_four_players_take_a_win_before_blocking_and_block_a_loss(name: str) -> None:
    player = ladder.LADDER["ConnectFour"][name]
    for seed in range(3):
        assert c4_choices(player, [WIN_OVER_BLOCK, BLOCK], seed).tolist() == [3, 3]


def test_search_scores_each_drop_by_the_line_heuristic() -> None:
    """At depth 1 the search's value of a drop that ends nothing is `line_score` of the board after it."""
    views = random_connect_four_views(20, seed=4)
    for view in views:
        values = np.asarray(jax.jit(ladder.search_values, static_argnums=1)(jnp.asarray(view, jnp.int8), 1))
        for col in range(7):
            after = connect_four_drop(view, col, 1)
            if after is not None and col not in c4_wins(view, 1) and not all(after):
                assert values[col] == pytest.approx(float(ladder.line_score(jnp.asarray(after, jnp.int8))))


LINE_WORTH = {0: 0.0, 1: 1.0, 2: 10.0, 3: 100.0}


def line_score_reference(view: list[int]) -> float:
    """The line-counting heuristic in plain Python: each four-window holding one side's pieces only."""
    total = 0.0
    for row in range(6):
        for col in range(7):
            for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
                squares = [(row + k * dr, col + k * dc) for k in range(4)]
                if all(0 <= r < 6 and 0 <= c < 7 for r, c in squares):
                    pieces = [view[r * 7 + c] for r, c in squares]
                    own, opponent = pieces.count(1), pieces.count(-1)
                    total += (LINE_WORTH[own] if opponent == 0 else 0.0) - (LINE_WORTH[opponent] if own == 0 else 0.0)
    return total


def minimax_reference(view: list[int], depth: int, ply: int = 0) -> list[float | None]:
    """Each drop's value for the +1 side by plain recursive minimax (None for a full column)."""
    mark = 1 if ply % 2 == 0 else -1
    values: list[float | None] = []
    for col in range(7):
        after = connect_four_drop(view, col, mark)
        if after is None:
            values.append(None)
        elif has_line(after, 6, 7, mark, 4):
            values.append(mark * ladder.WIN_SCORE * (depth - ply))
        elif all(after):
            values.append(0.0)
        elif ply == depth - 1:
            values.append(line_score_reference(after))
        else:
            children = [v for v in minimax_reference(after, depth, ply + 1) if v is not None]
            values.append(max(children) if ply % 2 == 1 else min(children))
    return values


def test_search_values_match_a_plain_python_minimax() -> None:
    views = random_connect_four_views(40, seed=5)
    assert sum(any(view[col] != 0 for col in range(7)) for view in views) > 5, "some positions have full columns"
    search = jax.jit(jax.vmap(lambda cells: ladder.search_values(cells, 2)))
    values = np.asarray(search(jnp.asarray(views, jnp.int8)))
    for got, view in zip(values, views, strict=True):
        want = minimax_reference(view, 2)
        for col in range(7):
            if want[col] is not None:
                assert got[col] == pytest.approx(want[col]), (view, col, got, want)


@pytest.mark.parametrize("name", ["depth2", "depth4"])
def test_search_players_never_drop_under_the_opponents_winning_cell(name: str) -> None:
    picked = c4_choices(ladder.LADDER["ConnectFour"][name], [POISONED] * 32)
    assert 0 not in set(picked.tolist())
    assert set(picked.tolist()) <= set(range(1, 7))


def test_depth4_finds_the_forced_win_of_a_double_threat() -> None:
    picked = c4_choices(ladder.depth4_connect_four, [DOUBLE_THREAT] * 32)
    assert set(picked.tolist()) <= {1, 4}
    assert set(picked.tolist()) == {1, 4}, "ties between equally good moves are broken at random"


def open_lines_through(view: list[int], cell: int) -> int:
    """The four-in-a-rows through `cell` that hold no opponent piece (plain Python)."""
    row, col = divmod(cell, 7)
    count = 0
    for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
        for back in range(4):
            start_r, start_c = row - back * dr, col - back * dc
            squares = [(start_r + k * dr, start_c + k * dc) for k in range(4)]
            if all(0 <= r < 6 and 0 <= c < 7 for r, c in squares) and all(view[r * 7 + c] != -1 for r, c in squares):
                count += 1
    return count


def tactical_reference(view: list[int]) -> set[int]:
    """The drops `tactical` may choose: the wins, else the blocks, else those on most open lines."""
    wins, blocks = c4_wins(view, 1), c4_wins(view, -1)
    if wins:
        return wins
    if blocks:
        return blocks
    legal = [col for col in range(7) if view[col] == 0]
    landing = {col: max(r for r in range(6) if view[r * 7 + col] == 0) * 7 + col for col in legal}
    scores = {col: open_lines_through(view, landing[col]) for col in legal}
    best = max(scores.values())
    return {col for col in legal if scores[col] == best}


def random_connect_four_views(count: int, seed: int) -> list[list[int]]:
    """Mover's-side views of positions reached by random play, none finished."""
    rng = random.Random(seed)
    views = []
    while len(views) < count:
        cells, mark = [0] * 42, 1
        for _ in range(rng.randrange(2, 36)):
            legal = [col for col in range(7) if cells[col] == 0]
            after = connect_four_drop(cells, rng.choice(legal), mark)
            assert after is not None
            if has_line(after, 6, 7, mark, 4) or all(after):
                break
            cells, mark = after, -mark
        views.append([c * mark for c in cells])
    return views


def test_tactical_matches_the_plain_python_reference_on_random_positions() -> None:
    views = random_connect_four_views(150, seed=1)
    picked = c4_choices(ladder.tactical_connect_four, views)
    expected = [tactical_reference(view) for view in views]
    assert sum(bool(c4_wins(v, 1)) for v in views) > 10 and sum(bool(c4_wins(v, -1)) for v in views) > 10
    wrong = [
        (i, int(move), want)
        for i, (move, want) in enumerate(zip(picked, expected, strict=True))
        if int(move) not in want
    ]
    assert not wrong, wrong[:5]


@pytest.mark.parametrize("name", ["depth2", pytest.param("depth4", marks=pytest.mark.slow)])
def test_depth_players_take_wins_and_avoid_immediate_losses_on_random_positions(name: str) -> None:
    """Against the plain-Python reference: a win when one exists; never a drop that hands the opponent a win when
    another exists."""
    views = random_connect_four_views(120, seed=2)
    picked = c4_choices(ladder.LADDER["ConnectFour"][name], views)
    for move, view in zip(picked.tolist(), views, strict=True):
        wins = c4_wins(view, 1)
        if wins:
            assert move in wins, (name, view)
            continue
        legal = [col for col in range(7) if view[col] == 0]
        safe = [col for col in legal if not c4_wins(connect_four_drop(view, col, 1) or view, -1)]
        if safe:
            assert move in safe, (name, view, move, safe)


# Othello -----------------------------------------------------------------------------------------------------------


def othello_inputs(views: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """The mover's observations (signed board, my-turn plane) and masks, built from the plain-Python rules."""
    observations = np.stack([np.stack([np.array(v).reshape(8, 8), np.ones((8, 8), int)], axis=-1) for v in views])
    masks = []
    for view in views:
        legal = othello_legal(view, 1)
        masks.append(np.array(legal + [not any(legal), False]))
    return observations, np.stack(masks)


def othello_reference(view: list[int], by_mobility: bool) -> set[int]:
    """The moves `positional` (or `mobility`) may choose, from the plain-Python rules and the weight table."""
    legal = [cell for cell, ok in enumerate(othello_legal(view, 1)) if ok]
    if not legal:
        return {64}
    scores = {}
    for cell in legal:
        after = othello_play(view, cell, 1)
        positional = float(np.dot(after, ladder.OTHELLO_WEIGHTS))
        replies = sum(othello_legal(after, -1))
        scores[cell] = (-replies, positional) if by_mobility else (positional,)
    best = max(scores.values())
    return {cell for cell in legal if scores[cell] == best}


def random_othello_views(count: int, seed: int) -> list[list[int]]:
    rng = random.Random(seed)
    views = []
    while len(views) < count:
        cells = [0] * 64
        cells[27] = cells[36] = -1
        cells[28] = cells[35] = 1
        mark = 1
        for _ in range(rng.randrange(0, 50)):
            legal = [cell for cell, ok in enumerate(othello_legal(cells, mark)) if ok]
            if not legal:
                if not any(othello_legal(cells, -mark)):
                    break
                mark = -mark
                continue
            cells, mark = othello_play(cells, rng.choice(legal), mark), -mark
        if any(othello_legal(cells, mark)) or any(othello_legal(cells, -mark)):
            views.append([c * mark for c in cells])
    return views


def othello_start() -> list[int]:
    cells = [0] * 64
    cells[27] = cells[36] = -1
    cells[28] = cells[35] = 1
    return cells


CORNER = othello_start()
CORNER[1], CORNER[2] = -1, 1  # the mover may take corner 0 (flipping cell 1) or play any opening move


def test_positional_takes_the_corner() -> None:
    assert othello_legal(CORNER, 1)[0] and sum(othello_legal(CORNER, 1)) == 5
    observations, masks = othello_inputs([CORNER] * 8)
    assert set(choices(ladder.positional_othello, observations, masks).tolist()) == {0}


MOBILITY_REPLIES = {17: 6, 26: 2, 37: 5, 44: 5}
"""After X (2, 3), O (2, 2): X's placements and O's replies to each; on 26 (3, 2) O may only answer (2, 4) or (4, 2)."""
MOBILITY_BEST = 26


def test_mobility_minimises_the_opponents_replies_on_a_hand_worked_position() -> None:
    view = othello_play(othello_play(othello_start(), 19, 1), 18, -1)  # X opens on (2, 3), O replies on (2, 2)
    replies = {
        cell: sum(othello_legal(othello_play(view, cell, 1), -1))
        for cell, ok in enumerate(othello_legal(view, 1))
        if ok
    }
    assert replies == MOBILITY_REPLIES
    observations, masks = othello_inputs([view] * 16)
    assert set(choices(ladder.mobility_othello, observations, masks).tolist()) == {MOBILITY_BEST}


@pytest.mark.parametrize("by_mobility", [False, True])
def test_othello_players_match_the_plain_python_reference_on_random_positions(by_mobility: bool) -> None:
    views = random_othello_views(80, seed=3)
    observations, masks = othello_inputs(views)
    player = ladder.mobility_othello if by_mobility else ladder.positional_othello
    picked = choices(player, observations, masks)
    wrong = [
        i
        for i, (move, view) in enumerate(zip(picked.tolist(), views, strict=True))
        if move not in othello_reference(view, by_mobility)
    ]
    assert not wrong, wrong[:5]


# Every player, in real games -------------------------------------------------------------------------------------


def ladder_playout(
    env: Any, player: Any, opponent: Any, num_envs: int, num_steps: int, seed: int = 0
) -> tuple[np.ndarray, ...]:
    """`num_envs` games, `player` in slot `game % 2` and `opponent` (a ladder player, or None for random) in the other.

    One jitted `lax.scan`; finished games reset selectively. Returns, stacked
    `[step, env, slot]`: both slots' masks, `player`'s actions for both slots,
    rewards, and the done flags `[step, env]`.
    """
    venv = VmapWrapper(env, num_envs)
    seat = (np.arange(num_envs) % 2)[:, None] == np.arange(2)[None, :]
    act = ladder.per_slot(player)
    other = ladder.per_slot(opponent) if opponent is not None else None

    @jax.jit
    def run(key: jax.Array) -> tuple[jax.Array, ...]:
        key, reset_key = jax.random.split(key)

        def body(state: Any, key: jax.Array) -> tuple[Any, tuple[jax.Array, ...]]:
            player_key, other_key, reset_key = jax.random.split(key, 3)
            observation, mask = state.agents.observation, state.agents.action_mask
            mine = act(observation, mask, player_key)
            if other is None:
                theirs = jax.random.categorical(other_key, jnp.where(mask, 0.0, -jnp.inf)).astype(jnp.int32)
            else:
                theirs = other(observation, mask, other_key)
            after = venv.step(state, jnp.where(seat, mine, theirs))
            record = (mask, mine, after.agents.reward, after.done)
            return venv.reset(key=reset_key, state=after, done=after.done), record

        return jax.lax.scan(body, venv.reset(key=reset_key), jax.random.split(key, num_steps))[1]

    return tuple(np.asarray(x) for x in run(jax.random.key(seed)))


def test_perfect_tictactoe_draws_against_itself() -> None:
    _, _, reward, done = ladder_playout(TicTacToe(), ladder.perfect_tictactoe, ladder.perfect_tictactoe, 64, 18)
    assert done[8].all() and done[17].all() and done.sum() == 128, "every game goes the full nine moves"
    assert (reward == 0).all()


PLAYERS = [
    pytest.param(TicTacToe, "perfect", 20, id="perfect", marks=pytest.mark.slow),
    pytest.param(ConnectFour, "tactical", 40, id="tactical"),
    pytest.param(ConnectFour, "depth2", 40, id="depth2", marks=pytest.mark.slow),
    pytest.param(ConnectFour, "depth4", 40, id="depth4", marks=pytest.mark.slow),
    pytest.param(Othello, "positional", 70, id="positional", marks=pytest.mark.slow),
    pytest.param(Othello, "mobility", 70, id="mobility", marks=pytest.mark.slow),
]


@pytest.mark.parametrize(("game", "name", "steps"), PLAYERS)
def test_ladder_players_play_only_legal_moves_from_both_seats_under_jit_and_vmap(
    game: Any, name: str, steps: int
) -> None:
    mask, action, reward, done = ladder_playout(game(), ladder.LADDER[game.__name__][name], None, 16, steps)
    chosen = np.take_along_axis(mask, action[..., None], axis=-1)[..., 0]
    assert chosen.all(), "every action the player returns, mover's or waiting, is allowed by its mask"
    no_op = mask.shape[-1] - 1
    waiting = mask[..., no_op]
    assert (action[waiting] == no_op).all() and waiting.any() and (~waiting).any()
    assert done.any(), "the playout covers whole games"
    seat = np.arange(16) % 2
    player_reward = np.take_along_axis(reward, seat[None, :, None], axis=-1)[..., 0]
    assert player_reward.sum() > 0, "the ladder player beats a random one more often than not"


# The ladder as registry.yaml names it -----------------------------------------------------------------------------


REGISTRY_PLAYERS = [
    pytest.param("TicTacToe-v0", "perfect", 9, id="perfect", marks=pytest.mark.slow),
    pytest.param("ConnectFour-v0", "tactical", 30, id="tactical"),
    pytest.param("ConnectFour-v0", "depth2", 30, id="depth2", marks=pytest.mark.slow),
    pytest.param("ConnectFour-v0", "depth4", 30, id="depth4", marks=pytest.mark.slow),
    pytest.param("Othello-v0", "positional", 40, id="positional", marks=pytest.mark.slow),
    pytest.param("Othello-v0", "mobility", 40, id="mobility", marks=pytest.mark.slow),
]


@pytest.mark.parametrize(("env_id", "name", "steps"), REGISTRY_PLAYERS)
def test_registry_opponents_are_the_ladder_players_and_play_legal_moves_through_the_agents_slots(
    env_id: str, name: str, steps: int
) -> None:
    """The player `opponent_player` builds from registry.yaml reads the agents' flattened float slots and
    chooses exactly what the ladder function chooses on the env's own int8 observations, every move legal."""
    from parallax_zoo.agents.player_factories import opponent_player
    from parallax_zoo.agents.players import MaskedScriptedPlayer
    from parallax_zoo.agents.slots import read_slots
    from parallax_zoo.judging.evaluation import protocol

    assert name in protocol(parallax_zoo.spec(env_id)).opponents
    env = parallax_zoo.make(env_id)
    player = opponent_player(env_id, env, name)
    assert isinstance(player, MaskedScriptedPlayer)
    direct = ladder.per_slot(ladder.LADDER[env_id.removesuffix("-v0")][name])
    num_envs = 8
    venv = VmapWrapper(env, num_envs)
    seat = (np.arange(num_envs) % 2)[:, None] == np.arange(2)[None, :]

    @jax.jit
    def run(key: jax.Array) -> tuple[jax.Array, ...]:
        def body(state: Any, key: jax.Array) -> tuple[Any, tuple[jax.Array, ...]]:
            player_key, other_key, reset_key = jax.random.split(key, 3)
            mask = state.agents.action_mask
            mine, _, _ = player.act_slots(read_slots(state), player_key)
            expected = direct(state.agents.observation, mask, player_key)
            theirs = jax.random.categorical(other_key, jnp.where(mask, 0.0, -jnp.inf)).astype(jnp.int32)
            after = venv.step(state, jnp.where(seat, mine, theirs))
            return venv.reset(key=reset_key, state=after, done=after.done), (mask, mine, expected, after.done)

        start_key, play_key = jax.random.split(key)
        return jax.lax.scan(body, venv.reset(key=start_key), jax.random.split(play_key, steps))[1]

    mask, mine, expected, done = (np.asarray(x) for x in run(jax.random.key(3)))
    assert (mine == expected).all(), "the registry's player is the ladder function itself"
    assert np.take_along_axis(mask, mine[..., None], axis=-1).all(), "every action it returns is allowed by its mask"
    movers = mask[..., :-1].any(axis=-1)
    assert (mine[movers] != mask.shape[-1] - 1).all() and movers.any(), "the mover places a piece, the other waits"
    if env_id != "Othello-v0":
        assert done.any(), "the steps cover whole games"


@pytest.mark.slow
def test_a_registry_ladder_player_seats_as_a_training_opponent() -> None:
    """MAPPO's opponent envs (`collect_against`) seat `perfect` as registry.yaml names it: the learner never wins
    there."""
    from parallax_zoo.agents.networks import ActorCritic
    from parallax_zoo.agents.player_factories import opponent_player
    from parallax_zoo.agents.players import RandomPlayer
    from parallax_zoo.agents.policy import actor_critic_for
    from parallax_zoo.agents.selfplay import TrainingOpponent, collect_against

    env = parallax_zoo.make("TicTacToe-v0")
    num_envs, steps = 16, 36
    venv = RecordEpisodeStatistics(VmapWrapper(env, num_envs))
    model: ActorCritic = actor_critic_for(env)
    learner = RandomPlayer(model)
    learner_slot = np.arange(num_envs) % 2  # the learner holds side e % 2 of env e

    @jax.jit
    def learner_rewards(opponent: Any, key: jax.Array) -> jax.Array:
        state = venv.reset(key=key)
        _, trajectory = collect_against(venv, learner, TrainingOpponent(opponent, num_envs), state, key, steps)
        return trajectory.reward

    for name, never_wins in (("perfect", True), ("random", False)):
        reward = np.asarray(learner_rewards(opponent_player("TicTacToe-v0", env, name), jax.random.key(1)))
        mine = np.take_along_axis(reward, learner_slot[None, :, None], axis=-1)[..., 0]
        assert (mine < 0).any(), name
        assert (mine.max() <= 0) == never_wins, name
