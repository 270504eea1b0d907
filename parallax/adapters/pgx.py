"""Pgx games as parallax environments: `PgxAdapter` (two or more players) and `PgxSinglePlayerAdapter`.

Pgx never resets itself, so the state a step returns is the true end of the
game. A game of two or more players becomes a `MARLEnv` under the zoo's board
convention (docs/protocol.md, "Turn-based boards"): slot `i` is Pgx's player id `i`, every slot
stays active for the whole game, and whose turn it is lives in
`agents.action_mask`. Each action space has Pgx's actions followed by one
no-op; the player to move gets Pgx's legal moves, every other player only the
no-op, and once the game is over everyone gets only the no-op. Pgx's rewards
(per player id) are `agents.reward`. A move Pgx does not allow, the no-op
included, loses the game with Pgx's own penalty, as an illegal move does in
Pgx. Who moves first is Pgx's choice: random in most games.

Each slot observes the game from its own seat, as Pgx's `observe` does for
the player to move; the waiting players' views come from the same function.
Single-player games (2048, MinAtar) become an `Env` whose state carries Pgx's
legal-action mask as `action_mask`. Truncation is Pgx's `truncated` flag,
which Pgx 2.6 never sets: its games end by their rules (Go, chess and shogi
count a step limit among them), so the adapters report those endings as
termination, as Pgx does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pgx
from jaxtyping import Array, Bool, PRNGKeyArray

from parallax.adapters.base import Adapter, next_and_step_key, next_key, reads_input
from parallax.core import Agents, MARLState, State
from parallax.spaces import Box, Discrete, MultiBinary, Space, stack_space

FLOAT_OBSERVATION_RANGE = (0.0, 1.0)
"""Pgx's float observations (chess, gardner_chess, animal_shogi) are planes of 0/1 and counts scaled into [0, 1]."""

INTEGER_OBSERVATION_BOUNDS = {
    "backgammon": (
        np.concatenate([np.full(28, -15), np.zeros(6)]).astype(np.int32),
        np.concatenate([np.full(28, 15), np.full(6, 4)]).astype(np.int32),
    ),
}
"""Per-entry bounds of the integer observations: backgammon's 28 signed checker counts (15 checkers a side), then how
many of each die value may still be played (at most 4, on doubles)."""


@jax.tree_util.register_dataclass
@dataclass(kw_only=True)
class MaskedState(State):
    """A single-player Pgx state: the protocol's fields plus Pgx's legal-action mask."""

    action_mask: Bool[Array, " num_actions"]


class PgxAdapter(Adapter[MARLState]):
    """Wraps a Pgx game of two or more players as a `MARLEnv` (see the module docstring for the convention).

    `env_state` is Pgx's `State`; `info` is empty. `reset` and `step` are
    jitted. The key advances on every step (`adapters/base.py`, "Keys");
    where the game's step draws random numbers (backgammon's dice) the same
    hash gives Pgx its key.
    """

    def __init__(self, env: pgx.Env):
        _check_game(env, "PgxAdapter")
        if env.num_players < 2:
            raise ValueError(
                f"PgxAdapter adapts games of two or more players; {env.id} has one. Use PgxSinglePlayerAdapter for it."
            )
        self.env = env
        self._num_agents = int(env.num_players)
        first = jax.eval_shape(env.init, jax.random.PRNGKey(0))
        self.num_moves = int(first.legal_action_mask.shape[-1])
        self.no_op = self.num_moves
        self._step_uses_key = _step_uses_key(env, first)
        self._action_space = stack_space(Discrete(self.num_moves + 1), self._num_agents)
        self._observation_space = stack_space(_observation_space(env, first.observation), self._num_agents)
        super().__init__()

    @property
    def num_agents(self) -> int:
        return self._num_agents

    def _reset_unchecked(self, key: PRNGKeyArray) -> MARLState:
        return self._marl_state(self.env.init(key), jnp.zeros((), jnp.int32), key)

    def _step_unchecked(self, state: MARLState, action: Array) -> MARLState:
        next_key, game_key = _advance(state.key, self._step_uses_key)
        game = state.env_state
        mover = game.current_player
        move = jnp.sum(jnp.where(jnp.arange(self._num_agents) == mover, action, 0)).astype(jnp.int32)
        game = _play(self.env, game, move, game_key)
        return self._marl_state(game, state.step_count + 1, next_key)

    def _marl_state(self, game: Any, step_count: Array, key: PRNGKeyArray) -> MARLState:
        players = jnp.arange(self._num_agents)
        over = game.terminated | game.truncated
        mover_row = jnp.concatenate([game.legal_action_mask & ~over, jnp.zeros((1,), jnp.bool_)])
        no_op_only = jnp.arange(self.num_moves + 1) == self.no_op
        action_mask = jnp.where((players == game.current_player)[:, None] & ~over, mover_row, no_op_only)
        return MARLState(
            env_state=game,
            agents=Agents(
                observation=self._observations(game),
                active=jnp.ones((self._num_agents,), jnp.bool_),
                reward=jnp.asarray(game.rewards, jnp.float32),
                action_mask=action_mask,
            ),
            termination=jnp.asarray(game.terminated, jnp.bool_),
            truncation=jnp.asarray(game.truncated, jnp.bool_),
            info={},
            step_count=step_count,
            key=key,
        )

    def _observations(self, game: Any) -> Array:
        """Every player's view, slot `i` from player `i`'s seat; the mover's is the one Pgx already computed."""
        mover = game.current_player
        waiting = (mover + 1 + jnp.arange(self._num_agents - 1)) % self._num_agents
        waiting_views = jax.vmap(lambda player: self.env._observe(game, player))(waiting)
        by_turn = jnp.concatenate([game.observation[None], waiting_views.astype(game.observation.dtype)])
        return by_turn[(jnp.arange(self._num_agents) - mover) % self._num_agents]

    def render_trajectory(self, states: MARLState) -> np.ndarray:
        """`uint8[T, H, W, 3]`: Pgx's own SVG board of every step (`State.to_svg`), rasterised on the host."""
        return draw_boards(states.env_state)

    def __repr__(self) -> str:
        return f"PgxAdapter({self.env.id})"


class PgxSinglePlayerAdapter(Adapter[MaskedState]):
    """Wraps a single-player Pgx game (2048, MinAtar) as an `Env` whose state carries `action_mask`.

    The reward is Pgx's only player's; a move outside Pgx's legal mask ends
    the game with Pgx's penalty, as in Pgx.
    """

    def __init__(self, env: pgx.Env):
        _check_game(env, "PgxSinglePlayerAdapter")
        if env.num_players != 1:
            raise ValueError(
                f"PgxSinglePlayerAdapter adapts single-player games; {env.id} has {env.num_players} players. "
                "Use PgxAdapter for it."
            )
        self.env = env
        first = jax.eval_shape(env.init, jax.random.PRNGKey(0))
        self.num_moves = int(first.legal_action_mask.shape[-1])
        self._step_uses_key = _step_uses_key(env, first)
        self._action_space = Discrete(self.num_moves)
        self._observation_space = _observation_space(env, first.observation)
        super().__init__()

    def _reset_unchecked(self, key: PRNGKeyArray) -> MaskedState:
        return self._masked_state(self.env.init(key), jnp.zeros((), jnp.int32), key)

    def _step_unchecked(self, state: MaskedState, action: Array) -> MaskedState:
        next_key, game_key = _advance(state.key, self._step_uses_key)
        game = _play(self.env, state.env_state, jnp.asarray(action, jnp.int32), game_key)
        return self._masked_state(game, state.step_count + 1, next_key)

    def _masked_state(self, game: Any, step_count: Array, key: PRNGKeyArray) -> MaskedState:
        return MaskedState(
            env_state=game,
            observation=game.observation,
            reward=jnp.asarray(game.rewards[0], jnp.float32),
            termination=jnp.asarray(game.terminated, jnp.bool_),
            truncation=jnp.asarray(game.truncated, jnp.bool_),
            info={},
            step_count=step_count,
            key=key,
            action_mask=game.legal_action_mask,
        )

    def render_trajectory(self, states: MaskedState) -> np.ndarray:
        """`uint8[T, H, W, 3]`: Pgx's own SVG picture of every step (`State.to_svg`), rasterised on the host."""
        return draw_boards(states.env_state)

    def __repr__(self) -> str:
        return f"PgxSinglePlayerAdapter({self.env.id})"


def draw_boards(games: Any) -> np.ndarray:
    """Pgx states stacked on a time axis as frames: each one's `to_svg()`, rasterised (`host_frames.svg_frame`)."""
    from parallax.adapters.host_frames import draw_trajectory, svg_frame

    return draw_trajectory(games, lambda game: svg_frame(game.to_svg()))


def _step_uses_key(env: pgx.Env, first: Any) -> bool:
    """Whether the game's `step` draws random numbers, read off its traced program (`first`: the abstract initial
    state)."""
    traced = jax.make_jaxpr(lambda game, move, key: env.step(game, move, key))(
        first, jnp.int32(0), jax.random.PRNGKey(0)
    )
    return reads_input(traced, -1)


def _advance(key: PRNGKeyArray, for_game: bool) -> tuple[PRNGKeyArray, PRNGKeyArray | None]:
    """(the state's next key, the key Pgx's step draws from, or None where it draws nothing)."""
    if for_game:
        return next_and_step_key(key)
    return next_key(key), None


def _play(env: pgx.Env, game: Any, move: Array, key: PRNGKeyArray | None) -> Any:
    """Pgx's `step` with `move`; a move outside Pgx's action range is illegal, so Pgx applies its penalty.

    Pgx reads legality as `legal_action_mask[move]`, which would clamp an
    out-of-range index onto the last action; clearing the mask for such a
    move makes Pgx itself treat it as the illegal move it is. A finished game
    keeps its mask, so that stepping it changes nothing, as in Pgx.
    """
    in_range = (move >= 0) & (move < game.legal_action_mask.shape[-1])
    game = game.replace(legal_action_mask=game.legal_action_mask & (in_range | game.terminated))
    return env.step(game, jnp.clip(move, 0, game.legal_action_mask.shape[-1] - 1), key)


def _check_game(env: Any, adapter: str) -> None:
    if not isinstance(env, pgx.Env):
        raise TypeError(f"{adapter} expects a pgx.Env, got {type(env).__name__}. Create one with pgx.make(name).")


def _observation_space(env: pgx.Env, emitted: Any) -> Space:
    """One player's observation space, from the shape and dtype Pgx emits and the game's known bounds.

    Shapes come from tracing `init` (`jax.eval_shape`); Pgx's own
    `num_actions` and `observation_shape` run `init` eagerly, which takes
    seconds for chess or Go.
    """
    shape, dtype = tuple(emitted.shape), jnp.dtype(emitted.dtype)
    if dtype == jnp.bool_:
        return MultiBinary(shape, jnp.bool_)
    if jnp.issubdtype(dtype, jnp.floating):
        return Box(*FLOAT_OBSERVATION_RANGE, shape, dtype)
    if env.id in INTEGER_OBSERVATION_BOUNDS:
        low, high = INTEGER_OBSERVATION_BOUNDS[env.id]
        return Box(low.reshape(shape), high.reshape(shape), shape, dtype)
    limits = jnp.iinfo(dtype)
    return Box(limits.min, limits.max, shape, dtype)


__all__ = ["MaskedState", "PgxAdapter", "PgxSinglePlayerAdapter"]
