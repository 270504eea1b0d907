"""MAPPO: PPO with one actor shared across agent slots and a centralised critic, plus self-play.

The update is PPO's (`ppo.make_update`): the rollout reads per-slot data by
the protocol's one-liners, docs/protocol.md (valid = state_t.agents.active; bootstrap =
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
the training envs (`opponent_share`) can seat a fixed opponent instead: the
player `opponent` names (the uniformly random player, or a scripted one
registry.yaml names for the env, such as TeamRace's naive team), passed in as
an object. The learner holds each side of those envs in turn and learns from
its own slots only.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import jax
from jax.sharding import Mesh
from jaxtyping import PRNGKeyArray

from parallax.core import AnyEnv
from parallax_zoo.agents import ppo
from parallax_zoo.agents.field_ranges import FieldRange
from parallax_zoo.agents.player import Player
from parallax_zoo.agents.policy import Policy
from parallax_zoo.agents.ppo import Metrics, PPOConfig, Training, TrainState, model_for
from parallax_zoo.agents.selfplay import SnapshotBuffer, TrainingOpponent, evaluate_self_play
from parallax_zoo.agents.sharding import check_divisible


@dataclass(frozen=True)
class MAPPOConfig(PPOConfig):
    """PPO's hyperparameters with MAPPO's defaults, and the self-play evaluation settings."""

    agent_ids: bool = True
    centralized_critic: bool = True
    self_play: bool = False
    snapshots: int = 4
    eval_episodes: int = 32
    eval_max_steps: int = 200
    opponent: str = ""
    """The fixed opponent's name, as config.yaml records it; `make_train` takes the player itself."""
    opponent_share: float = 0.0

    RANGES: ClassVar[dict[str, FieldRange]] = {
        **PPOConfig.RANGES,
        "snapshots": FieldRange(1),
        "eval_episodes": FieldRange(1),
        "eval_max_steps": FieldRange(1),
        "opponent_share": FieldRange(0, 1),
    }

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


def training(config: MAPPOConfig, env: AnyEnv, mesh: Mesh | None = None, opponent: Player | None = None) -> Training:
    """MAPPO's pieces: PPO's (`ppo.training`) with the fixed `opponent` seated in the first
    `opponent_share` of the envs, and `init` seeded with the train half of the key (the other
    half seeds self-play's snapshot matches in `make_train`).

    `opponent` is the player `config.opponent` names, built by the caller (the uniformly random
    `players.RandomPlayer`, a `players.ScriptedPlayer`, ...); give it exactly when `opponent_share > 0`.
    """
    model = model_for(env, config)
    if not model.multi_agent:
        raise ValueError(
            "MAPPO trains multi-agent envs (MARLState); use parallax_zoo.agents.ppo for single-agent envs."
        )
    if (opponent is None) != (config.opponent_share == 0):
        raise ValueError(
            f"MAPPO: config.opponent={config.opponent!r} with opponent_share={config.opponent_share} needs "
            f"{'the opponent player passed as opponent=' if opponent is None else 'no opponent= player'}; "
            "parallax_zoo.agents.player_factories.training_opponent builds one from its name"
        )
    if config.self_play:
        check_divisible(config.eval_episodes, mesh, "make_train", "eval_episodes")
    seated = None if opponent is None else TrainingOpponent(opponent, round(config.opponent_share * config.num_envs))
    pieces = ppo.training(config, env, mesh, seated)

    def init(key: PRNGKeyArray) -> TrainState:
        train_key, _ = jax.random.split(key)
        return pieces.init(train_key)

    return dataclasses.replace(pieces, init=init)


def make_train(
    config: MAPPOConfig, env: AnyEnv, mesh: Mesh | None = None, *, opponent: Player | None = None
) -> Callable[[PRNGKeyArray], tuple[Policy, Metrics]]:
    """`train(key) -> (policy, metrics)` for a multi-agent env; jittable and vmappable over keys.

    With a device `mesh`, the training envs (and self-play evaluation episodes)
    are split across its devices, as in `ppo.make_train`. `opponent`: see `training`.

    With `self_play`, `metrics["eval"]` holds per-interval results vs the random
    player (`vs_random`) and vs the snapshot buffer (`vs_snapshots`, `snapshot_filled`).
    """
    pieces = training(config, env, mesh, opponent)

    def train(key: PRNGKeyArray) -> tuple[Policy, Metrics]:
        state = pieces.init(key)
        if not config.self_play:
            state, metrics = jax.lax.scan(pieces.update, state, None, length=pieces.num_updates)
            return pieces.policy(state), metrics

        def interval(
            carry: tuple[TrainState, SnapshotBuffer], interval_key: PRNGKeyArray
        ) -> tuple[tuple[TrainState, SnapshotBuffer], tuple[Metrics, Metrics]]:
            state, snapshots = carry
            state, metrics = jax.lax.scan(pieces.update, state, None, length=pieces.num_updates // config.snapshots)
            policy = pieces.policy(state)
            evaluation = evaluate_self_play(
                env, policy, snapshots, interval_key, config.eval_episodes, config.eval_max_steps, mesh
            )
            return (state, snapshots.push(policy)), (metrics, evaluation)

        _, eval_key = jax.random.split(key)
        carry = (state, SnapshotBuffer.create(pieces.policy(state), config.snapshots))
        (state, _), (metrics, evaluation) = jax.lax.scan(interval, carry, jax.random.split(eval_key, config.snapshots))
        metrics = jax.tree_util.tree_map(lambda m: m.reshape((config.num_updates,) + m.shape[2:]), metrics)
        return pieces.policy(state), {**metrics, "eval": evaluation}

    return train


def train(
    config: MAPPOConfig, key: PRNGKeyArray, env: AnyEnv, *, mesh: Mesh | None = None, opponent: Player | None = None
) -> tuple[Policy, Metrics]:
    """Run MAPPO once: `jax.jit(make_train(config, env, mesh, opponent=opponent))(key)`.

    `env` is the multi-agent env object; `opponent` is the fixed player seated
    when `opponent_share` is above zero. To train many seeds, `jax.vmap` the
    function `make_train` returns.
    """
    if not isinstance(config, MAPPOConfig):
        raise TypeError(
            f"mappo.train takes a MAPPOConfig, got {type(config).__name__}; train a PPOConfig with ppo.train"
        )
    return jax.jit(make_train(config, env, mesh, opponent=opponent))(key)
