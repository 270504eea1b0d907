"""MAPPO: PPO with one actor shared across agent slots and a centralised critic, plus self-play.

The update is PPO's (`ppo.make_update`): the rollout reads per-slot data by
seed 000's one-liners (valid = state_t.agents.active; bootstrap =
state_t1.agents.active & ~state_t1.termination; rewards =
state_t1.agents.reward), and inactive slots drop out of every loss term.
The critic sees `global_observation` (or all slots' observations) plus the
slot's one-hot id and returns one value per slot.

For two-player zero-sum games (`self_play=True`) the same policy acts in both
slots; with turn-based action masks the waiting player's only legal action is
the no-op, so nothing else is needed. Training then runs in `snapshots`
intervals; after each, the policy plays the uniformly random player and every
earlier snapshot, and is itself stored as a snapshot.

Self-play alone can drift into habits a weak player exploits, so a share of
the training envs (`opponent_share`) can seat a fixed `opponent` instead: the
uniformly random player, or a scripted one registry.yaml names for the env
(TeamRace's naive team). The learner holds each side of those envs in turn
and learns from its own slots only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
from jax.sharding import Mesh
from jaxtyping import PRNGKeyArray

from parallax_zoo.agents.players import fixed_player
from parallax_zoo.agents.policy import Policy
from parallax_zoo.agents.ppo import (
    Metrics,
    PPOConfig,
    TrainState,
    init_train_state,
    make_env,
    make_optimizer,
    make_update,
    model_for,
    vector_env,
)
from parallax_zoo.agents.networks import ActorCritic
from parallax_zoo.agents.selfplay import SnapshotBuffer, TrainingOpponent, evaluate_self_play
from parallax_zoo.agents.sharding import check_divisible


@dataclass(frozen=True)
class MAPPOConfig(PPOConfig):
    """PPO's hyperparameters with MAPPO's defaults, and the self-play evaluation settings."""

    agent_ids: bool = True
    centralised_critic: bool = True
    self_play: bool = False
    snapshots: int = 4
    eval_episodes: int = 32
    eval_max_steps: int = 200
    opponent: str = ""
    opponent_share: float = 0.0

    def __post_init__(self) -> None:
        super().__post_init__()
        if bool(self.opponent) != (self.opponent_share > 0) or not 0 <= self.opponent_share <= 1:
            raise ValueError(
                f"MAPPOConfig: give an opponent ('random' or one of the env's registry.yaml opponents) together "
                f"with 0 < opponent_share <= 1, or neither; got opponent={self.opponent!r}, "
                f"opponent_share={self.opponent_share}."
            )
        if self.opponent and round(self.opponent_share * self.num_envs) < 1:
            raise ValueError(
                f"MAPPOConfig: opponent_share={self.opponent_share} of num_envs={self.num_envs} seats the "
                "opponent in no env; raise one of them."
            )
        if self.self_play and (self.snapshots < 1 or self.num_updates % self.snapshots != 0):
            raise ValueError(
                f"MAPPOConfig: with self_play, num_updates={self.num_updates} must be a multiple of "
                f"snapshots={self.snapshots} (>= 1); adjust total_timesteps or snapshots."
            )


def make_train(
    config: MAPPOConfig, env: Any, mesh: Mesh | None = None
) -> Callable[[PRNGKeyArray], tuple[Policy, Metrics]]:
    """`train(key) -> (policy, metrics)` for a multi-agent env; jittable and vmappable over keys.

    With a device `mesh`, the training envs (and self-play evaluation episodes)
    are split across its devices, as in `ppo.make_train`.

    With `self_play`, `metrics["eval"]` holds per-interval results vs the random
    player (`vs_random`) and vs the snapshot buffer (`vs_snapshots`, `snapshot_filled`).
    """
    model = model_for(env, config)
    if not model.multi_agent:
        raise ValueError(
            "MAPPO trains multi-agent envs (MARLState); use parallax_zoo.agents.ppo for single-agent envs."
        )
    check_divisible(config.num_envs, mesh, "make_train")
    minibatch_rows = config.num_envs * config.num_steps // config.num_minibatches
    check_divisible(minibatch_rows, mesh, "make_train", "rows per minibatch (num_envs * num_steps / num_minibatches)")
    if config.self_play:
        check_divisible(config.eval_episodes, mesh, "make_train", "eval_episodes")
    training_env = vector_env(env, config.num_envs)
    optimizer = make_optimizer(config)
    update = make_update(config, model, training_env, optimizer, mesh, training_opponent(config, model))

    def train(key: PRNGKeyArray) -> tuple[Policy, Metrics]:
        train_key, eval_key = jax.random.split(key)
        state = init_train_state(config, model, training_env, optimizer, train_key, mesh)
        if not config.self_play:
            state, metrics = jax.lax.scan(update, state, None, length=config.num_updates)
            return Policy(model, state.params, state.normalizer), metrics

        def interval(
            carry: tuple[TrainState, SnapshotBuffer], interval_key: PRNGKeyArray
        ) -> tuple[tuple[TrainState, SnapshotBuffer], tuple[Metrics, Metrics]]:
            state, snapshots = carry
            state, metrics = jax.lax.scan(update, state, None, length=config.num_updates // config.snapshots)
            policy = Policy(model, state.params, state.normalizer)
            evaluation = evaluate_self_play(
                env, policy, snapshots, interval_key, config.eval_episodes, config.eval_max_steps, mesh
            )
            return (state, snapshots.push(policy)), (metrics, evaluation)

        initial = Policy(model, state.params, state.normalizer)
        carry = (state, SnapshotBuffer.create(initial, config.snapshots))
        (state, _), (metrics, evaluation) = jax.lax.scan(
            interval, carry, jax.random.split(eval_key, config.snapshots)
        )
        metrics = jax.tree_util.tree_map(lambda m: m.reshape((config.num_updates,) + m.shape[2:]), metrics)
        return Policy(model, state.params, state.normalizer), {**metrics, "eval": evaluation}

    return train


def training_opponent(config: PPOConfig, model: ActorCritic) -> TrainingOpponent | None:
    """The fixed opponent `config` seats in its first `opponent_share` of the training envs, if any."""
    if not isinstance(config, MAPPOConfig) or not config.opponent:
        return None
    envs = round(config.opponent_share * config.num_envs)
    return TrainingOpponent(fixed_player(config.env_id, config.opponent, model), envs)


def train(
    config: MAPPOConfig, key: PRNGKeyArray, env: Any = None, *, mesh: Mesh | None = None
) -> tuple[Policy, Metrics]:
    """Run MAPPO once: `jax.jit(make_train(config, env, mesh))(key)`.

    `env` defaults to `parallax_zoo.make(config.env_id)`. Each call compiles
    afresh; to train many seeds, `jax.vmap` the function `make_train` returns.
    `mesh` splits the env batch across devices (`sharding.default_mesh()`).
    """
    if env is None:
        env = make_env(config.env_id)
    return jax.jit(make_train(config, env, mesh))(key)
