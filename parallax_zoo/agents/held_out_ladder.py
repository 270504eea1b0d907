"""The held-out ladder: scripted ConnectFour, Othello and TicTacToe players that no training or fine-tuning ever seats.

They measure how well a policy plays opponents it was not tuned against,
and share nothing with the training ladder's move scoring
(`parallax_zoo.agents.ladder`): only its player signature, `player(observation,
action_mask, key) -> action` for one player's view of one board (vmappable,
the no-op when nothing else is legal), and its random choice among equal moves.

- `alphabeta1`, `alphabeta2`, `alphabeta4`, `alphabeta6` (ConnectFour) and
  `alphabeta1`, `alphabeta2`, `alphabeta4` (Othello): alpha-beta search to that
  many plies over the env's own `step`, iterative with an explicit stack in one
  `lax.while_loop`, so it prunes under jit. Every first move tying the best
  value is found exactly (the root searches each move with a window one below
  its best so far) and one is picked at random. Leaves are scored for the
  side to move by `connect_four_score` (open twos, threat cells weighted by
  row parity, the centre column) or `othello_score` (corners, mobility,
  edge-anchored stable discs); a finished game is worth `WIN` times the plies
  to spare plus one, so sooner wins count more.
- `alphabeta9` (TicTacToe): the same alpha-beta to the end of the game (9 plies,
  no heuristic), so it plays a game-theoretically best move, ties at random.
- `mcts200` and `mcts1000` (every game): Monte Carlo tree search, UCT (UCB1,
  c = sqrt 2) with one uniformly random rollout to the end of the game as each
  new node's value (`mcts_visits`); the most visited move is played, ties at
  random.

A full fixed-depth minimax over all `7**6` ConnectFour move sequences at 64
boards a batch took 11.4 s a move on 2 CPU cores, against 2.2 s for
depth-6 alpha-beta (docs/evaluation.md, "The held-out ladder").
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Int, Int8, PRNGKeyArray

from parallax.core import MARLState
from parallax_zoo.agents.ladder import board_view, choose_best
from parallax_zoo.agents.players import MaskedRule
from parallax_zoo.envs import othello
from parallax_zoo.envs.board import line_cells, mark_of
from parallax_zoo.envs.connect_four import ConnectFour
from parallax_zoo.envs.othello import Othello
from parallax_zoo.envs.tictactoe import TicTacToe

HeldOutGame = ConnectFour | Othello | TicTacToe
"""The games with a held-out ladder."""
WIN = 100_000
"""A won game's worth per ply to spare; above any heuristic score."""
_INFINITY = 1 << 30

Evaluate = Callable[[Int8[Array, " cells"]], Int[Array, ""]]
"""A heuristic: a board signed from the side to move (+1 its pieces) -> that side's integer score."""


def root_state(game: HeldOutGame, observation: Array) -> MARLState:
    """The env state of the position a player observes, re-signed so that the mover is slot 0 (+1)."""
    shape = (game.height * game.width, 2) if game.turn_plane else (game.height * game.width,)
    view = board_view(observation, shape)
    cells = view[:, 0] if game.turn_plane else view
    return game.position(cells, 0, key=jax.random.key(0))


def _mover_moves(state: MARLState) -> Bool[Array, " moves"]:
    """The mover's legal moves, the no-op excluded."""
    mask = state.agents.action_mask
    assert mask is not None
    return jnp.where(state.env_state.to_move == 0, mask[0], mask[1])[:-1]


def _mover_view(state: MARLState) -> Int8[Array, " cells"]:
    return state.env_state.board * mark_of(state.env_state.to_move)


def alphabeta_values(
    game: HeldOutGame, root: MARLState, depth: int, evaluate: Evaluate, order: np.ndarray
) -> Int[Array, " moves"]:
    """Each first move's negamax value for the root's mover, `depth` plies deep; exact for every move tying the best.

    The stack holds one node per ply above the leaves, each with its alpha-beta
    window, best score so far and the index (in `order`) of its next move; one
    loop iteration plays one move (scoring the child at once when it is a leaf
    or a finished game, else pushing it) or returns a node's score to its
    parent. Illegal first moves keep `-2**30`; a bound below the best is all a
    worse first move gets.
    """
    moves = order.shape[0]
    order_array = jnp.asarray(order, jnp.int32)
    positions = jnp.arange(moves)
    stack = jax.tree_util.tree_map(lambda leaf: jnp.broadcast_to(leaf, (depth, *leaf.shape)), root)
    levels = jnp.arange(depth)
    carry = (
        stack,
        jnp.zeros(depth, jnp.int32),  # the next move's index in `order`, per level
        jnp.zeros(depth, jnp.int32),  # the move being searched below, per level
        jnp.full(depth, -_INFINITY, jnp.int32),  # alpha
        jnp.full(depth, _INFINITY, jnp.int32),  # beta
        jnp.full(depth, -_INFINITY, jnp.int32),  # best score so far
        jnp.int32(0),  # the level on top of the stack
        jnp.full(moves, -_INFINITY, jnp.int32),  # the root's move values
        jnp.bool_(False),  # done
    )

    def raise_score(best: Array, alpha: Array, at: Array, score: Array) -> tuple[Array, Array]:
        """`score` for the node at level `at`: a new best, and a new alpha (one lower at the root: ties stay exact)."""
        here = levels == at
        best = jnp.where(here, jnp.maximum(best, score), best)
        return best, jnp.where(here, jnp.maximum(alpha, score - (at == 0)), alpha)

    def body(carry: tuple[Any, ...]) -> tuple[Any, ...]:
        stack, next_index, current, alpha, beta, best, level, root_values, _ = carry
        node = jax.tree_util.tree_map(lambda leaf: leaf[level], stack)
        candidates = _mover_moves(node)[order_array] & (positions >= next_index[level])
        expands = jnp.any(candidates) & (alpha[level] < beta[level])
        index = jnp.argmax(candidates)
        move = order_array[index]
        child = game.step(node, jnp.stack([move, move]))
        reward = jnp.where(node.env_state.to_move == 0, child.agents.reward[0], child.agents.reward[1])
        finished = child.termination
        leaf = finished | (level + 1 == depth)
        outcome = jnp.sign(reward).astype(jnp.int32) * WIN * (depth - level)
        child_score = jnp.where(finished, outcome, -evaluate(_mover_view(child)))

        # expand: score a leaf child at once, or push the child
        scored_best, scored_alpha = raise_score(best, alpha, level, child_score)
        pushes = expands & ~leaf
        push_here = levels == level + 1
        expand_best = jnp.where(leaf, scored_best, jnp.where(push_here, -_INFINITY, best))
        expand_alpha = jnp.where(leaf, scored_alpha, jnp.where(push_here, -beta[level], alpha))
        expand_beta = jnp.where(pushes & push_here, -alpha[level], beta)
        expand_next = jnp.where(levels == level, index + 1, jnp.where(pushes & push_here, 0, next_index))
        expand_current = jnp.where(levels == level, move, current)

        # pop: return this node's best to its parent
        parent = jnp.maximum(level - 1, 0)
        popped_best, popped_alpha = raise_score(best, alpha, parent, -best[level])

        new_best = jnp.where(expands, expand_best, popped_best)
        new_alpha = jnp.where(expands, expand_alpha, popped_alpha)
        new_beta = jnp.where(expands, expand_beta, beta)
        new_next = jnp.where(expands, expand_next, next_index)
        new_current = jnp.where(expands, expand_current, current)
        root_move = jnp.where(expands, move, current[0])
        root_score = jnp.where(expands, child_score, -best[level])
        records_root = jnp.where(expands, leaf & (level == 0), level == 1)
        root_values = jnp.where(records_root & (positions == root_move), root_score, root_values)
        stack = jax.tree_util.tree_map(
            lambda leaves, new: jnp.where(
                (pushes & push_here).reshape(-1, *([1] * new.ndim)), jnp.broadcast_to(new, leaves.shape), leaves
            ),
            stack,
            child,
        )
        new_level = jnp.where(expands, level + pushes, level - 1)
        done = ~expands & (level == 0)
        return stack, new_next, new_current, new_alpha, new_beta, new_best, jnp.maximum(new_level, 0), root_values, done

    final = jax.lax.while_loop(lambda carry: ~carry[-1], body, carry)
    return final[-2]


def alphabeta_player(game: HeldOutGame, evaluate: Evaluate, order: np.ndarray, depth: int) -> MaskedRule:
    """A ladder player: `alphabeta_values` from the observed position, a random choice among the best first moves."""

    def player(observation: Array, action_mask: Array, key: PRNGKeyArray) -> Array:
        values = alphabeta_values(game, root_state(game, observation), depth, evaluate, order)
        return choose_best(values.astype(jnp.float32), action_mask, key)

    return player


# ConnectFour -------------------------------------------------------------------------------------------------------

_C4 = ConnectFour()
_C4_WINDOWS = line_cells(6, 7, 4)
_C4_ROW = np.arange(42) // 7
_C4_CENTRE = (np.arange(42) % 7) == 3
C4_ORDER = np.array([3, 2, 4, 1, 5, 0, 6])
"""Centre columns first: the same values, found with far more pruning."""


def _threat_cells(view: Int8[Array, " 42"], mark: int) -> Bool[Array, " 42"]:
    """The empty cells that would complete four in a row for `mark` (whether or not a piece can land there yet)."""
    pieces = view[_C4_WINDOWS]
    three = (jnp.sum(pieces == mark, axis=-1) == 3) & (jnp.sum(pieces == 0, axis=-1) == 1)
    hole = jnp.asarray(_C4_WINDOWS)[jnp.arange(_C4_WINDOWS.shape[0]), jnp.argmax(pieces == 0, axis=-1)]
    return jnp.zeros(42, jnp.bool_).at[hole].max(three)


def connect_four_score(view: Int8[Array, " 42"]) -> Int[Array, ""]:
    """The line-and-threat heuristic for the side to move (+1): its edge minus the opponent's.

    Per side: 2 per four-cell window holding two of its pieces and two
    empties, 8 per threat cell (an empty cell completing its four) plus 4 more
    where the row suits it (the first player's odd rows from the bottom, the
    second player's even ones), 3 per piece in the centre column. The side to
    move moved first when both sides hold as many pieces.
    """
    pieces = view[_C4_WINDOWS]
    own, opponent = jnp.sum(pieces == 1, axis=-1), jnp.sum(pieces == -1, axis=-1)
    twos = jnp.sum((own == 2) & (opponent == 0)) - jnp.sum((opponent == 2) & (own == 0))
    mover_first = jnp.sum(view == 1) == jnp.sum(view == -1)
    odd_row = ((5 - _C4_ROW) % 2) == 0  # rows 1, 3, 5 counted from the bottom as 1
    mover_rows = jnp.where(mover_first, odd_row, ~odd_row)
    own_threats, opponent_threats = _threat_cells(view, 1), _threat_cells(view, -1)
    threats = jnp.sum(jnp.where(own_threats, 8 + 4 * mover_rows, 0)) - jnp.sum(
        jnp.where(opponent_threats, 8 + 4 * ~mover_rows, 0)
    )
    centre = jnp.sum(jnp.where(_C4_CENTRE, view, 0).astype(jnp.int32))
    return (2 * twos + threats + 3 * centre).astype(jnp.int32)


# Othello -----------------------------------------------------------------------------------------------------------

_OTHELLO = Othello()
_CORNERS = np.array([0, 7, 56, 63])


def _edge_rays() -> np.ndarray:
    """From each corner along each of its two edges, the eight cells in order `[8, 8]`."""
    rays = []
    for row, col in ((0, 0), (0, 7), (7, 0), (7, 7)):
        for step_row, step_col in ((0, 1 if col == 0 else -1), (1 if row == 0 else -1, 0)):
            rays.append([(row + k * step_row) * 8 + col + k * step_col for k in range(8)])
    return np.array(rays, np.int32)


_EDGE_RAYS = _edge_rays()


def _cell_order() -> np.ndarray:
    """Corners, other edge cells, inner cells, then the cells beside corners (C- and X-squares), then the pass."""

    def rank(cell: int) -> int:
        row, col = divmod(cell, 8)
        near_corner = min(row, 7 - row) <= 1 and min(col, 7 - col) <= 1
        if row in (0, 7) and col in (0, 7):
            return 0
        if near_corner:
            return 3
        return 1 if row in (0, 7) or col in (0, 7) else 2

    return np.array([*sorted(range(othello.CELLS), key=lambda cell: (rank(cell), cell)), othello.CELLS])


OTHELLO_ORDER = _cell_order()


def _stable_discs(view: Int8[Array, " 64"], mark: int) -> Int[Array, ""]:
    """How many of `mark`'s discs sit in an unbroken run along an edge from a corner it holds (they can never flip)."""
    runs = jnp.cumprod(view[_EDGE_RAYS] == mark, axis=-1).astype(jnp.bool_)
    return jnp.sum(jnp.zeros(othello.CELLS, jnp.bool_).at[_EDGE_RAYS].max(runs))


def othello_score(view: Int8[Array, " 64"]) -> Int[Array, ""]:
    """The corner/mobility/stability heuristic for the side to move (+1): its edge minus the opponent's.

    25 per corner, 5 per placement available, 10 per edge-anchored stable disc.
    """
    corners = jnp.sum(view[_CORNERS].astype(jnp.int32))
    mobility = othello.mobility(view) - othello.mobility(-view)
    stable = _stable_discs(view, 1) - _stable_discs(view, -1)
    return (25 * corners + 5 * mobility + 10 * stable).astype(jnp.int32)


# Monte Carlo tree search -------------------------------------------------------------------------------------------


def random_rollout(game: HeldOutGame, state: MARLState, key: PRNGKeyArray) -> Array:
    """The outcome (+1, 0, -1) for the side to move in `state` of playing uniformly random legal moves to the end."""
    mover = state.env_state.to_move

    def body(carry: tuple[MARLState, Array, PRNGKeyArray]) -> tuple[MARLState, Array, PRNGKeyArray]:
        state, total, key = carry
        key, pick = jax.random.split(key)
        move = jax.random.categorical(pick, jnp.where(_mover_moves(state), 0.0, -jnp.inf)).astype(jnp.int32)
        state = game.step(state, jnp.stack([move, move]))
        return state, total + jnp.where(mover == 0, state.agents.reward[0], state.agents.reward[1]), key

    _, total, _ = jax.lax.while_loop(lambda carry: ~carry[0].termination, body, (state, jnp.float32(0.0), key))
    return total


def mcts_visits(game: HeldOutGame, root: MARLState, key: PRNGKeyArray, simulations: int) -> Array:
    """The root's visit count per move after `simulations` of UCT (UCB1, c = sqrt 2) with random-rollout values.

    Node 0 is the root, node `i` the one simulation `i` added; each node keeps
    its board and mover (its state is rebuilt with `game.position`), its
    legal moves, children, visits and total value for the player who moved
    into it. A simulation descends by UCB1 through fully expanded nodes, adds
    one random untried child, rolls out from it, and adds the outcome, sign
    flipped each ply, to every node on its path with one scatter.
    """
    nodes, cells = simulations + 1, root.env_state.board.shape[0]
    moves = root.agents.action_mask.shape[-1] - 1  # pyright: ignore[reportOptionalMemberAccess]
    longest = min(simulations, 2 * cells) + 1
    tree = {
        "cells": jnp.zeros((nodes, cells), jnp.int8).at[0].set(root.env_state.board),
        "mover": jnp.zeros(nodes, jnp.int32).at[0].set(root.env_state.to_move),
        "legal": jnp.zeros((nodes, moves), jnp.bool_).at[0].set(_mover_moves(root) & ~root.termination),
        "children": jnp.full((nodes, moves), -1, jnp.int32),
        "visits": jnp.zeros(nodes, jnp.float32),
        "value": jnp.zeros(nodes, jnp.float32),
        "outcome": jnp.zeros(nodes, jnp.float32),  # a finished game's result for the player who moved into it
        "finished": jnp.zeros(nodes, jnp.bool_).at[0].set(root.termination),
    }

    def state_of(tree: dict[str, Array], node: Array) -> MARLState:
        return game.position(tree["cells"][node], tree["mover"][node], key=jax.random.key(0))

    def simulate(index: Array, tree: dict[str, Array]) -> dict[str, Array]:
        pick_key, rollout_key = jax.random.split(jax.random.fold_in(key, index))

        def descends(carry: tuple[Array, Array, Array]) -> Array:
            node, _, _ = carry
            return ~tree["finished"][node] & jnp.all(~tree["legal"][node] | (tree["children"][node] >= 0))

        def descend(carry: tuple[Array, Array, Array]) -> tuple[Array, Array, Array]:
            node, depth, path = carry
            children = tree["children"][node]
            visits = tree["visits"][jnp.maximum(children, 0)]
            mean = tree["value"][jnp.maximum(children, 0)] / visits
            ucb = mean + jnp.sqrt(2.0 * jnp.log(tree["visits"][node]) / visits)
            child = children[jnp.argmax(jnp.where(tree["legal"][node], ucb, -jnp.inf))]
            return child, depth + 1, path.at[depth + 1].set(child)

        path = jnp.full(longest, nodes, jnp.int32).at[0].set(0)
        leaf, depth, path = jax.lax.while_loop(descends, descend, (jnp.int32(0), jnp.int32(0), path))
        untried = tree["legal"][leaf] & (tree["children"][leaf] < 0)
        expands = ~tree["finished"][leaf] & jnp.any(untried)
        move = jax.random.categorical(pick_key, jnp.where(untried, 0.0, -jnp.inf)).astype(jnp.int32)
        parent = state_of(tree, leaf)
        child = game.step(parent, jnp.stack([move, move]))
        reward = jnp.where(parent.env_state.to_move == 0, child.agents.reward[0], child.agents.reward[1])
        rollout = -random_rollout(game, child, rollout_key)
        new = jnp.where(expands, index + 1, nodes)  # out of range: the writes are dropped
        value = jnp.where(expands, jnp.where(child.termination, reward, rollout), tree["outcome"][leaf])
        tree = {
            **tree,
            "cells": tree["cells"].at[new].set(child.env_state.board, mode="drop"),
            "mover": tree["mover"].at[new].set(child.env_state.to_move, mode="drop"),
            "legal": tree["legal"].at[new].set(_mover_moves(child) & ~child.termination, mode="drop"),
            "children": tree["children"].at[jnp.where(expands, leaf, nodes), move].set(index + 1, mode="drop"),
            "outcome": tree["outcome"].at[new].set(reward, mode="drop"),
            "finished": tree["finished"].at[new].set(child.termination, mode="drop"),
        }
        end = jnp.where(expands, depth + 1, depth)
        path = jnp.where(expands & (jnp.arange(longest) == end), new, path)
        steps = jnp.arange(longest)
        on_path = (steps <= end) & (path < nodes)
        signs = jnp.where((end - steps) % 2 == 0, 1.0, -1.0)
        targets = jnp.where(on_path, path, nodes)
        return {
            **tree,
            "visits": tree["visits"].at[targets].add(1.0, mode="drop"),
            "value": tree["value"].at[targets].add(signs * value, mode="drop"),
        }

    tree = jax.lax.fori_loop(0, simulations, simulate, tree)
    children = tree["children"][0]
    return jnp.where(children >= 0, tree["visits"][jnp.maximum(children, 0)], 0.0)


def mcts_player(game: HeldOutGame, simulations: int) -> MaskedRule:
    """A ladder player: `mcts_visits` from the observed position, the most visited move (ties at random)."""

    def player(observation: Array, action_mask: Array, key: PRNGKeyArray) -> Array:
        search_key, choice_key = jax.random.split(key)
        visits = mcts_visits(game, root_state(game, observation), search_key, simulations)
        return choose_best(visits, action_mask, choice_key)

    return player


def connect_four_players() -> dict[str, MaskedRule]:
    search = partial(alphabeta_player, _C4, connect_four_score, C4_ORDER)
    alphabeta = {f"alphabeta{depth}": search(depth) for depth in (1, 2, 4, 6)}
    return {**alphabeta, "mcts200": mcts_player(_C4, 200), "mcts1000": mcts_player(_C4, 1000)}


def othello_players() -> dict[str, MaskedRule]:
    search = partial(alphabeta_player, _OTHELLO, othello_score, OTHELLO_ORDER)
    alphabeta = {f"alphabeta{depth}": search(depth) for depth in (1, 2, 4)}
    return {**alphabeta, "mcts200": mcts_player(_OTHELLO, 200), "mcts1000": mcts_player(_OTHELLO, 1000)}


# TicTacToe ---------------------------------------------------------------------------------------------------------

_TIC_TAC_TOE = TicTacToe()
TIC_TAC_TOE_ORDER = np.array([4, 0, 2, 6, 8, 1, 3, 5, 7])
"""The centre, the corners, then the edges."""


def no_heuristic(view: Int8[Array, " cells"]) -> Int[Array, ""]:
    """Every unfinished position is worth 0: a search to the end of the game needs no guess."""
    return jnp.int32(0)


def tic_tac_toe_players() -> dict[str, MaskedRule]:
    return {
        "alphabeta9": alphabeta_player(_TIC_TAC_TOE, no_heuristic, TIC_TAC_TOE_ORDER, 9),
        "mcts200": mcts_player(_TIC_TAC_TOE, 200),
        "mcts1000": mcts_player(_TIC_TAC_TOE, 1000),
    }


HELD_OUT: dict[str, dict[str, MaskedRule]] = {
    "ConnectFour": connect_four_players(),
    "Othello": othello_players(),
    "TicTacToe": tic_tac_toe_players(),
}
"""Each game's held-out players by name."""

alphabeta1_connect_four = HELD_OUT["ConnectFour"]["alphabeta1"]
alphabeta2_connect_four = HELD_OUT["ConnectFour"]["alphabeta2"]
alphabeta4_connect_four = HELD_OUT["ConnectFour"]["alphabeta4"]
alphabeta6_connect_four = HELD_OUT["ConnectFour"]["alphabeta6"]
mcts200_connect_four = HELD_OUT["ConnectFour"]["mcts200"]
mcts1000_connect_four = HELD_OUT["ConnectFour"]["mcts1000"]
alphabeta1_othello = HELD_OUT["Othello"]["alphabeta1"]
alphabeta2_othello = HELD_OUT["Othello"]["alphabeta2"]
alphabeta4_othello = HELD_OUT["Othello"]["alphabeta4"]
mcts200_othello = HELD_OUT["Othello"]["mcts200"]
mcts1000_othello = HELD_OUT["Othello"]["mcts1000"]
alphabeta9_tic_tac_toe = HELD_OUT["TicTacToe"]["alphabeta9"]
mcts200_tic_tac_toe = HELD_OUT["TicTacToe"]["mcts200"]
mcts1000_tic_tac_toe = HELD_OUT["TicTacToe"]["mcts1000"]
