"""Play-time search: Monte Carlo tree search over a board game's own rules, guided by a trained policy.

`SearchPlayer` plays a two-player zero-sum turn-based game (docs/protocol.md,
"Turn-based boards") by running DeepMind's `mctx` Gumbel MuZero search from
every position it is asked about, with the env itself as the model: a node is
the env's state, an edge the env's `step`, the value flips sign at each ply
(discount -1) and a finished game's value is its outcome reward. The trained
network's masked policy logits are the prior and its critic the leaf value.
The root is rebuilt from the global observation, which for the board games is
the cells (slot 0's view) and then whose turn it is, through the game's
`position(cells, to_move, key=...)`. One search serves every game of a batch
at once; nothing loops in Python over games or moves (docs/baselines.md).

A `SearchPlayer` is bound to its game, so `act` takes what every player's
`act` takes, both players' observations and the action mask as the state
carries them, reads the position off them (slot 0's view is the cells, the
mask says whose turn it is) and searches from there.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float, Int, PRNGKeyArray

from parallax.core import MARLState
from parallax_zoo.agents.policy import Policy, observation_slots
from parallax_zoo.agents.slots import Slots, read_slots


class SearchGame(Protocol):
    """What search needs of a game: its action count (the no-op last), any position's state, and its step."""

    num_actions: int

    def position(self, cells: Array, to_move: Array, *, key: PRNGKeyArray) -> MARLState: ...

    def step(self, state: MARLState, action: Array) -> MARLState: ...


MAX_SIMULATIONS = 4096
"""The most simulations per move: the search keeps a tree of that many nodes for every game it plays at once."""
MAX_TACTICS_DEPTH = 6
"""The deepest root tactics check: it steps `actions ** depth` positions a move (ConnectFour at 6: 262,144)."""
MAX_CONSIDERED_ACTIONS = 4096
"""The most actions the root may consider; a game with fewer actions considers all of its own (`mctx` does too)."""


@dataclass(frozen=True)
class SearchSettings:
    """How hard `SearchPlayer` searches: simulations per move, actions the root considers, and root noise.

    `gumbel_scale` 0 makes play deterministic given the position (the protocol
    plays greedily); 1 is Gumbel MuZero's sampling, for varied games.
    """

    simulations: int = 64
    considered_actions: int = 16
    gumbel_scale: float = 0.0
    win_check: bool = False
    """Look one move ahead at every node: where the mover can win on the spot, the node is worth +1 and only
    winning moves keep a prior. Costs one step per action per node; it makes a move that hands the opponent
    an immediate win visible at that move's first visit."""
    tactics_depth: int = 2
    """How many plies the root looks at every line of, whatever the prior says (`SearchPlayer.tactical_moves`): 2
    takes a win in one and refuses a move the opponent wins against at once; 4 also takes a win forced within
    three plies and refuses a loss forced within four. Costs `actions ** depth` steps per move."""

    def __post_init__(self) -> None:
        for name, bound in (("simulations", MAX_SIMULATIONS), ("considered_actions", MAX_CONSIDERED_ACTIONS)):
            value = getattr(self, name)
            if not 1 <= value <= bound:
                raise ValueError(f"SearchSettings: {name} must be between 1 and {bound}, got {value}")
        if self.gumbel_scale < 0:
            raise ValueError(f"SearchSettings: gumbel_scale must be >= 0, got {self.gumbel_scale}")
        if not 1 <= self.tactics_depth <= MAX_TACTICS_DEPTH:
            raise ValueError(
                f"SearchSettings: tactics_depth must be between 1 and {MAX_TACTICS_DEPTH}, got {self.tactics_depth}"
            )


@dataclass(frozen=True)
class SearchPlayer:
    """A trained `Policy` that looks ahead: Gumbel MuZero search over `game`'s rules before every move.

    A `Player` like `Policy` itself, so evaluation, the leaderboard and
    matches play it as they play any player; `policy` is the raw network, which
    plays without search. Every slot gets an action: the searched move for
    the slot to move, the no-op for the waiting one. The root searches only
    `tactical_moves`, so no prior can make it miss a win or allow a loss in one.
    """

    policy: Policy
    game: SearchGame
    settings: SearchSettings = SearchSettings()

    def act(
        self, observation: Array, key: PRNGKeyArray | None = None, action_mask: Array | None = None, greedy: bool = True
    ) -> Array:
        """Both slots' actions `[*batch, 2]` for a position given as the state carries it (any leading batch axes).

        `observation` is both players' views (`state.agents.observation`) and `action_mask` the turn masks
        (`state.agents.action_mask`, required): the cells are slot 0's view, the mover is the slot whose
        row allows a move. The mover gets the searched move, the waiting slot the no-op, as in `act_slots`;
        `greedy=False` samples the root's noise and needs a `key` (greedy play without one uses a fixed key,
        which a search at `gumbel_scale` 0 does not read).
        """
        if action_mask is None:
            raise ValueError(
                "SearchPlayer.act: the search reads whose turn it is from the action mask; "
                "pass action_mask=state.agents.action_mask"
            )
        if not greedy and key is None:
            raise ValueError("SearchPlayer.act: sampling (greedy=False) needs key=jax.random.key(...)")
        slots = observation_slots(self.policy.model, observation, action_mask, "SearchPlayer.act")
        cells_count = self.policy.model.global_obs_dim - 1
        batch = slots.active.shape[:-1]
        cells = slots.observation[..., 0, :].reshape(*batch, cells_count, -1)[..., 0]
        mask = jnp.asarray(action_mask)
        to_move = jnp.argmax(jnp.any(mask[..., : self.game.num_actions - 1], axis=-1), axis=-1)
        position = jnp.concatenate([cells, to_move[..., None].astype(cells.dtype)], axis=-1)
        slots = Slots(slots.observation, position, mask, slots.active, slots.reward)
        return searched_env_action(self, slots, jax.random.key(0) if key is None else key, greedy)

    def act_slots(self, slots: Slots, key: PRNGKeyArray, greedy: bool = True) -> tuple[Array, Array, Array]:
        """Slot actions (log-probabilities 0: a search has none) and the slots' values, as `Policy.act_slots`.

        `greedy=False` samples the root's Gumbel noise at scale 1 whatever the settings say, for varied play.
        """
        action, _ = self.searched_slots(slots, key, self.settings.gumbel_scale if greedy else 1.0)
        return action, jnp.zeros(action.shape), self.value(slots)

    def searched_slots(self, slots: Slots, key: PRNGKeyArray, gumbel_scale: float) -> tuple[Array, Array]:
        """Every slot's action `[*batch, agents]` (the searched move for the slot to move, the no-op for the
        waiting one) and the search's improved policy over the mover's actions `[*batch, actions]` (mctx's
        `action_weights`, what AlphaZero training learns from)."""
        batch = slots.active.shape[:-1]
        masks = board_mask(slots.action_mask)
        positions = slots.global_observation.reshape(-1, slots.global_observation.shape[-1])
        output = self.search_output(
            positions[:, :-1].astype(jnp.int8), slot_to_move(slots).reshape(-1), key, gumbel_scale
        )
        move = jnp.asarray(output.action, jnp.int32)
        mask = masks.reshape(move.shape[0], -1, self.game.num_actions)
        legal = jnp.take_along_axis(mask, move[:, None, None], axis=-1)[..., 0]
        action = jnp.where(legal, move[:, None], self.game.num_actions - 1).reshape(*batch, -1)
        return action, output.action_weights.reshape(*batch, self.game.num_actions)

    def value(self, slots: Slots) -> Array:
        return self.policy.value(slots)

    def env_action(self, action: Array) -> Array:
        return self.policy.env_action(action)

    def search(
        self,
        cells: Int[Array, "games cells"],
        to_move: Int[Array, " games"],
        key: PRNGKeyArray,
        gumbel_scale: float | None = None,
    ) -> Int[Array, " games"]:
        """The searched move of the player to move in each position (any action where a game is over).

        `gumbel_scale` overrides the settings' root noise.
        """
        return jnp.asarray(self.search_output(cells, to_move, key, gumbel_scale).action, jnp.int32)

    def search_output(
        self,
        cells: Int[Array, "games cells"],
        to_move: Int[Array, " games"],
        key: PRNGKeyArray,
        gumbel_scale: float | None = None,
    ) -> Any:
        """`search`'s whole `mctx.PolicyOutput`: the move (`action`) and the improved policy (`action_weights`)."""
        roots = jax.vmap(lambda c, t: self.game.position(c, t, key=jax.random.key(0)))(cells, to_move)
        prior, value = self.evaluate(roots)
        mover_mask = jnp.take_along_axis(action_masks(roots), to_move[:, None, None], axis=1)[:, 0]
        no_op_only = jnp.arange(self.game.num_actions) == self.game.num_actions - 1
        mover_mask = jnp.where(jnp.any(mover_mask, axis=-1, keepdims=True), mover_mask, no_op_only)
        mover_mask = self.tactical_moves(roots, mover_mask)
        mctx = search_library()
        return mctx.gumbel_muzero_policy(
            params=(),
            rng_key=key,
            root=mctx.RootFnOutput(prior_logits=prior, value=value, embedding=roots),
            recurrent_fn=self._recurrent,
            num_simulations=self.settings.simulations,
            invalid_actions=~mover_mask,
            max_num_considered_actions=min(self.settings.considered_actions, self.game.num_actions),
            gumbel_scale=self.settings.gumbel_scale if gumbel_scale is None else gumbel_scale,
        )

    def evaluate(self, states: MARLState) -> tuple[Float[Array, "games actions"], Float[Array, " games"]]:
        """The network's prior logits (legal moves only) and value for the player to move; a finished game's value is
        0."""
        slots = read_slots(states)
        to_move = states.env_state.to_move[:, None]
        logits = self.policy.distribution(slots).logits  # pyright: ignore[reportAttributeAccessIssue]
        mask = jnp.take_along_axis(action_masks(states), to_move[..., None], axis=1)[:, 0]
        logits = jnp.take_along_axis(logits, to_move[..., None], axis=1)[:, 0]
        logits = logits - jnp.max(logits, axis=-1, keepdims=True)
        prior = jnp.where(mask, logits, jnp.finfo(logits.dtype).min)
        value = jnp.take_along_axis(self.policy.value(slots), to_move, axis=1)[:, 0]
        if self.settings.win_check:
            wins = self.winning_moves(states) & mask
            can_win = jnp.any(wins, axis=-1)
            prior = jnp.where(can_win[:, None] & ~wins, jnp.finfo(prior.dtype).min, prior)
            value = jnp.where(can_win, 1.0, value)
        return prior, jnp.where(states.termination, 0.0, value)

    def winning_moves(self, states: MARLState) -> Array:
        """`[games, actions]`: the moves after which the player to move is paid a positive reward (a won game)."""
        actions = jnp.arange(self.game.num_actions)

        def after(state: MARLState, action: Array) -> Array:
            following = self.game.step(state, jnp.stack([action, action]))
            return following.agents.reward[state.env_state.to_move] > 0

        return jax.vmap(lambda state: jax.vmap(lambda action: after(state, action))(actions))(states)

    def tactical_moves(self, states: MARLState, mask: Array) -> Array:
        """The moves of `mask` the search may play: those with the best outcome proven within `tactics_depth` plies
        (`move_scores`). A forced win keeps only the quickest winning moves; otherwise every move not proven lost
        stays, and where all are lost, the slowest losses. The network's prior has no say."""
        scores = self.move_scores(states, self.settings.tactics_depth)
        best = jnp.max(jnp.where(mask, scores, -jnp.inf), axis=-1, keepdims=True)
        return mask & (scores == best)

    def move_scores(self, states: MARLState, depth: int) -> Array:
        """`[games, actions]`: each move's outcome for the player to move, proven by trying every line `depth` plies
        deep. A move that wins `k` plies on scores `depth - k + 1` (sooner is larger), one that loses scores minus
        that, and an unproven move or a draw 0. Illegal moves get a score too; the caller masks them."""
        games, actions = states.env_state.to_move.shape[0], self.game.num_actions
        moves = jnp.arange(actions)

        def children(state: MARLState) -> MARLState:
            return jax.vmap(lambda move: self.game.step(state, jnp.stack([move, move])))(moves)

        following = jax.vmap(children)(states)
        mover = jnp.broadcast_to(states.env_state.to_move[:, None, None], (games, actions, 1))
        reward = jnp.take_along_axis(following.agents.reward, mover, axis=-1)[..., 0]
        outcome = jnp.sign(reward) * depth
        if depth == 1:
            return jnp.where(following.termination, outcome, 0.0)
        flat = jax.tree_util.tree_map(lambda leaf: leaf.reshape(games * actions, *leaf.shape[2:]), following)
        replier = flat.env_state.to_move[:, None, None]
        reply_mask = jnp.take_along_axis(action_masks(flat), replier, axis=1)[:, 0]
        replies = jnp.where(reply_mask, self.move_scores(flat, depth - 1), -depth)
        best_reply = jnp.max(replies, axis=-1).reshape(games, actions)
        return jnp.where(following.termination, outcome, -best_reply)

    def _recurrent(self, params: Any, key: PRNGKeyArray, action: Array, states: MARLState) -> tuple[Any, MARLState]:
        """One ply for every game: the mover's reward, discount -1 (0 once over) and the next mover's prior and
        value."""
        mover = states.env_state.to_move[:, None]
        following = jax.vmap(self.game.step)(states, jnp.stack([action, action], axis=-1))
        reward = jnp.take_along_axis(following.agents.reward, mover, axis=1)[:, 0]
        prior, value = self.evaluate(following)
        discount = jnp.where(following.termination, 0.0, -1.0)
        return search_library().RecurrentFnOutput(
            reward=reward, discount=discount, prior_logits=prior, value=value
        ), following


@partial(jax.jit, static_argnames="greedy")
def searched_env_action(player: SearchPlayer, slots: Slots, key: PRNGKeyArray, greedy: bool) -> Array:
    """`player`'s env action for `slots`, compiled once per game, settings and shape (`act` is called eagerly)."""
    return player.env_action(player.act_slots(slots, key, greedy)[0])


def slot_to_move(slots: Slots) -> Int[Array, " *batch"]:
    """The slot whose turn it is in each board position: a board's global observation is its cells, then the
    mover (`SearchGame.position`)."""
    return slots.global_observation[..., -1].astype(jnp.int32)


def search_library() -> Any:
    """DeepMind's `mctx`, imported when a search first runs (the `train` extra); typed `Any`, as its chex dataclasses
    have no typed constructors."""
    import mctx

    return mctx


def action_masks(states: MARLState) -> Array:
    """The `[games, agents, actions]` masks of board states (a board game always sets them)."""
    return board_mask(states.agents.action_mask)


def board_mask(mask: Array | None) -> Array:
    """`mask`, the action masks of board states or slots, with a clear error where there are none."""
    if mask is None:
        raise ValueError(
            "SearchPlayer plays turn-based board games, whose states carry action masks; this one has none"
        )
    return mask


jax.tree_util.register_dataclass(SearchPlayer, data_fields=["policy"], meta_fields=["game", "settings"])
