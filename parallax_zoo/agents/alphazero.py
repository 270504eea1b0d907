"""AlphaZero for the board games: self-play with the play-time search in the loop, the network trained toward what
the search found.

Every move of the training games is chosen by `search.SearchPlayer` (Gumbel MuZero over the game's own rules, the
current network as prior and leaf value, the tactical root filter) with Gumbel noise at scale 1, so the games
vary. The network then learns, over `update_epochs` passes of shuffled minibatches:
- the policy: cross-entropy toward the search's improved policy at the mover's slot (mctx's `action_weights`:
  the softmax of prior logits plus completed Q values), so the prior comes to know what the search knows;
- the value: squared error toward each slot's return, the game's outcome where it ended within the rollout and
  the critic's value at the rollout's end where it did not (`estimate_advantages` at gamma 1, lambda 1).
A share of the games (`opponent_share`) can seat a fixed player of the training ladder, as for MAPPO; only the
learner's slots train there. The pieces have PPO's shape (`ppo.Training`), so baseline training
(`parallax-zoo train`) runs them in segments like any other trainer. docs/baselines.md, "AlphaZero".
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar, cast

import jax
import jax.numpy as jnp
import optax
from jax.sharding import Mesh
from jaxtyping import Array, PRNGKeyArray

from parallax.core import AnyEnv, MARLState
from parallax_zoo.agents.advantages import estimate_advantages
from parallax_zoo.agents.field_ranges import FieldRange
from parallax_zoo.agents.mappo import MAPPOConfig
from parallax_zoo.agents.networks import Params
from parallax_zoo.agents.player import Player
from parallax_zoo.agents.policy import Policy
from parallax_zoo.agents.ppo import (
    Metrics,
    Training,
    TrainState,
    episode_metrics,
    init_train_state,
    make_optimizer,
    masked_mean,
    model_for,
    shuffled_rows,
    vector_env,
)
from parallax_zoo.agents.rollout import Transition, record_step, reset_finished, step_keys
from parallax_zoo.agents.search import (
    MAX_CONSIDERED_ACTIONS,
    MAX_SIMULATIONS,
    SearchGame,
    SearchPlayer,
    SearchSettings,
    slot_to_move,
)
from parallax_zoo.agents.selfplay import seated_slots
from parallax_zoo.agents.slots import Slots, read_slots


@dataclass(frozen=True)
class AlphaZeroConfig(MAPPOConfig):
    """MAPPO's config (the network, the optimiser, the rollout's size, the ladder opponents) and the training
    search's size. PPO's surrogate settings (`clip_eps`, `vf_clip`, `ent_coef`, `gae_lambda`, `vtrace`, ...) are
    not read: the policy learns from the search, the value from the games' outcomes."""

    self_play: bool = True
    simulations: int = 32
    """Simulations per training move; the shipped agent's play-time search is the config's `search:` section."""
    considered_actions: int = 16
    win_check: bool = True
    """The search's one-move win check at every node (`SearchSettings.win_check`)."""

    RANGES: ClassVar[dict[str, FieldRange]] = {
        **MAPPOConfig.RANGES,
        "simulations": FieldRange(1, MAX_SIMULATIONS),
        "considered_actions": FieldRange(1, MAX_CONSIDERED_ACTIONS),
    }

    def __post_init__(self) -> None:
        super().__post_init__()
        unsupported = [
            f"{name}={getattr(self, name)!r}"
            for name, plain in (
                ("policy", "feedforward"),
                ("normalize_obs", False),
                ("normalize_rewards", False),
                ("self_play", True),
            )
            if getattr(self, name) != plain
        ]
        if unsupported:
            raise ValueError(
                f"AlphaZeroConfig: {', '.join(unsupported)} is not supported: AlphaZero trains a feedforward network "
                "on raw board observations by self-play (policy=feedforward, normalize_obs=false, "
                "normalize_rewards=false, self_play=true)"
            )

    @property
    def search(self) -> SearchSettings:
        """The training search: these settings with Gumbel noise at scale 1."""
        return SearchSettings(self.simulations, self.considered_actions, gumbel_scale=1.0, win_check=self.win_check)


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class Targets:
    """What a training position teaches: the search's policy at the mover's slot and every slot's return."""

    slots: Slots
    policy: Array
    """`[*batch, actions]`: the search's improved policy for the player to move."""
    policy_slot: Array
    """`[*batch, agents]`: the slot the policy target belongs to (the mover, where the learner holds it)."""
    value: Array
    """`[*batch, agents]`: each slot's return."""
    value_slot: Array
    """`[*batch, agents]`: the slots whose return trains the critic (the learner's active ones)."""


def alphazero_loss(params: Params, policy: Policy, batch: Targets, config: AlphaZeroConfig) -> tuple[Array, Metrics]:
    """Cross-entropy toward the search's policy at the mover's slot plus `vf_coef` times the value's squared error."""
    current = dataclasses.replace(policy, params=params)
    logits = current.distribution(batch.slots).logits  # pyright: ignore[reportAttributeAccessIssue]
    mover_logits = jnp.sum(jnp.where(batch.policy_slot[..., None], logits, 0.0), axis=-2)
    log_p = jax.nn.log_softmax(mover_logits, axis=-1)
    cross_entropy = -jnp.sum(jnp.where(batch.policy > 0, batch.policy * log_p, 0.0), axis=-1)
    policy_loss = masked_mean(cross_entropy, jnp.any(batch.policy_slot, axis=-1))
    value_loss = 0.5 * masked_mean((current.value(batch.slots) - batch.value) ** 2, batch.value_slot)
    total = policy_loss + config.vf_coef * value_loss
    return total, {"loss": total, "policy_loss": policy_loss, "value_loss": value_loss}


def training(
    config: AlphaZeroConfig, env: AnyEnv, mesh: Mesh | None = None, opponent: Player | None = None
) -> Training:
    """AlphaZero's pieces for a board game `env` (as `make` returns it): `init`, `update` (self-play `num_steps`
    moves in each of `num_envs` games, then learn) and `num_updates`, as `ppo.training` gives PPO's.

    `opponent` is the ladder player `config.opponent` names, seated in the first `opponent_share` of the games.
    """
    if mesh is not None:
        raise ValueError("AlphaZero trains on one device; train without a device mesh (one process)")
    if (opponent is None) != (config.opponent_share == 0):
        raise ValueError(
            f"AlphaZero: config.opponent={config.opponent!r} with opponent_share={config.opponent_share} needs "
            f"{'the opponent player passed as opponent=' if opponent is None else 'no opponent= player'}"
        )
    game = getattr(env, "unwrapped", env)
    if not hasattr(game, "position"):
        raise ValueError(
            f"AlphaZero trains the two-player board games that can set up any position (`position`); "
            f"{type(game).__name__} cannot"
        )
    game = cast(SearchGame, game)
    model = model_for(env, config)
    training_env = vector_env(env, config.num_envs)
    shapes = jax.eval_shape(model.init, jax.random.key(0))
    optimizer = make_optimizer(config, sum(leaf.size for leaf in jax.tree_util.tree_leaves(shapes)))
    seated = 0 if opponent is None else round(config.opponent_share * config.num_envs)

    def init(key: PRNGKeyArray) -> TrainState:
        train_key, _ = jax.random.split(key)
        return init_train_state(config, model, training_env, optimizer, train_key)

    def update(state: TrainState, _: Any) -> tuple[TrainState, Metrics]:
        key, play_key, learn_key = jax.random.split(state.key, 3)
        searcher = SearchPlayer(Policy(model, state.params), game, config.search)
        learner = seated_slots(state.env_state, seated)
        env_state, trajectory, targets = self_play(
            training_env, searcher, state.env_state, play_key, config.num_steps, opponent, learner
        )
        params, opt_state, metrics = learn(searcher.policy, state.opt_state, targets, learn_key)
        next_state = TrainState(params, opt_state, None, env_state, key)
        return next_state, {**episode_metrics(trajectory, env_state), **metrics}

    def learn(policy: Policy, opt_state: Any, targets: Targets, key: PRNGKeyArray) -> tuple[Params, Any, Metrics]:
        grad_fn = jax.value_and_grad(alphazero_loss, has_aux=True)

        def epoch(carry: tuple[Policy, Any], epoch_key: PRNGKeyArray) -> tuple[tuple[Policy, Any], Metrics]:
            def minibatch_step(carry: tuple[Policy, Any], minibatch: Targets) -> tuple[tuple[Policy, Any], Metrics]:
                policy, opt_state = carry
                (_, metrics), grads = grad_fn(policy.params, policy, minibatch, config)
                updates, opt_state = optimizer.update(grads, opt_state, policy.params)
                return (dataclasses.replace(policy, params=optax.apply_updates(policy.params, updates)), opt_state), (
                    metrics
                )

            return jax.lax.scan(minibatch_step, carry, shuffled_rows(targets, epoch_key, config))

        (policy, opt_state), metrics = jax.lax.scan(
            epoch, (policy, opt_state), jax.random.split(key, config.update_epochs)
        )
        return policy.params, opt_state, jax.tree_util.tree_map(jnp.mean, metrics)

    return Training(model, init, update, config.num_updates)


def self_play(
    env: Any,
    searcher: SearchPlayer,
    state: MARLState,
    key: PRNGKeyArray,
    num_steps: int,
    opponent: Player | None = None,
    learner: Array | None = None,
) -> tuple[MARLState, Transition, Targets]:
    """`num_steps` moves in every game of the batched `env` (`ppo.vector_env`), each searched by `searcher` with
    Gumbel noise at scale 1, finished games reset; `opponent` plays the slots where `learner` `[envs, agents]` is
    false. Returns the final state, the trajectory and what it teaches."""
    learner = jnp.ones(state.agents.active.shape, bool) if learner is None else learner

    def move(state: MARLState, keys: tuple[PRNGKeyArray, PRNGKeyArray]) -> tuple[MARLState, tuple[Any, ...]]:
        act_key, reset_key = keys
        search_key, opponent_key = jax.random.split(act_key)
        slots = read_slots(state)
        action, improved = searcher.searched_slots(slots, search_key, 1.0)
        if opponent is not None:
            action = jnp.where(learner, action, opponent.act_slots(slots, opponent_key)[0])
        next_state, transition, _ = record_step(env, searcher.policy, state, slots, action, jnp.zeros(action.shape))
        mover = jnp.arange(slots.active.shape[-1]) == slot_to_move(slots)[..., None]
        following = cast(MARLState, reset_finished(env, next_state, reset_key))
        return following, (transition, improved, mover & learner & slots.active)

    final, (trajectory, improved, policy_slot) = jax.lax.scan(move, state, step_keys(key, num_steps))
    targets = Targets(
        slots=trajectory.slots(),
        policy=improved,
        policy_slot=policy_slot,
        value=returns(searcher.policy, trajectory, final),
        value_slot=trajectory.active & learner,
    )
    return final, trajectory, targets


def returns(policy: Policy, trajectory: Transition, final: MARLState) -> Array:
    """Each slot's return from every step: the rewards to the end of its game, or to the rollout's end plus the
    critic's value of the position there (undiscounted: a board game pays its outcome once, at the end). A game
    cut short by a time limit counts as drawn from there (a board game ends by its rules first)."""
    no_value = jnp.zeros_like(trajectory.reward)
    return estimate_advantages(
        no_value,
        trajectory.reward,
        trajectory.termination,
        trajectory.truncation,
        no_value,
        policy.value(read_slots(final)),
        gamma=1.0,
        gae_lambda=1.0,
    )[0]
