"""PPO: clipped objective, value clipping, entropy bonus, minibatch epochs, one jitted `train`.

Read `make_train` top to bottom: initialise, then `num_updates` times collect
a trajectory (`rollout.collect`), estimate advantages (`advantages`, docs/baselines.md)
and run `update_epochs` passes of minibatch gradient steps. Everything is one
`lax.scan`, so `jax.jit(make_train(config, env))(key)` compiles the whole run
and `jax.vmap` of it trains several seeds at once. Given a device `mesh`
(`sharding.default_mesh()`), the env batch and each minibatch are split across
the devices and the params replicated; the result is the unsharded one up to
float rounding. Multi-agent envs train with one actor shared across slots;
inactive slots are masked out of every loss term (MAPPO adds a centralised
critic and self-play on top, `mappo.py`). With `policy="recurrent"` the networks
carry a GRU hidden state (`recurrent.py`): the rollout carries it across steps and
updates, and each minibatch holds whole env sequences, replayed from their first
hidden state.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

import jax
import jax.numpy as jnp
import optax
from jax.sharding import Mesh
from jaxtyping import Array, PRNGKeyArray

from parallax.core import AnyEnv
from parallax.wrappers import RecordEpisodeStatistics, VmapWrapper
from parallax_zoo.agents.advantages import estimate_advantages
from parallax_zoo.agents.field_ranges import FieldRange, out_of_range
from parallax_zoo.agents.networks import ACTIVATIONS, ActorCritic, Params
from parallax_zoo.agents.normalizer import ObsNormalizer, RewardNormalizer
from parallax_zoo.agents.policy import Policy, actor_critic_for
from parallax_zoo.agents.recurrent import Memory, recurrent_actor_critic
from parallax_zoo.agents.rollout import Transition, collect, collect_recurrent, episode_stats
from parallax_zoo.agents.selfplay import TrainingOpponent, collect_against, collect_recurrent_against
from parallax_zoo.agents.sharding import check_divisible, replicate, shard_env_batch
from parallax_zoo.agents.shuffle import permutation
from parallax_zoo.agents.slots import read_slots

Metrics = dict[str, Any]


@dataclass(frozen=True)
class PPOConfig:
    """Every PPO hyperparameter; frozen, so it is hashable and can be saved as `config.yaml`."""

    env_id: str = ""
    num_envs: int = 4
    num_steps: int = 128
    total_timesteps: int = 500_000
    learning_rate: float = 2.5e-4
    anneal_lr: bool = True
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip_eps: float = 0.2
    clip_value: bool = True
    vf_clip: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    update_epochs: int = 4
    num_minibatches: int = 4
    normalize_advantages: bool = True
    normalize_obs: bool = False
    normalize_rewards: bool = False
    hidden_sizes: tuple[int, ...] = (64, 64)
    activation: str = "tanh"
    vtrace: bool = False
    rho_clip: float = 1.0
    c_clip: float = 1.0
    agent_ids: bool = False
    centralized_critic: bool = False
    policy: str = "feedforward"
    rnn_hidden: int = 128

    POLICIES: ClassVar[tuple[str, ...]] = ("feedforward", "recurrent")
    """`policy`: MLP actor and critic, or a GRU between an embedding (`hidden_sizes[0]`) and the heads."""

    RANGES: ClassVar[dict[str, FieldRange]] = {
        "num_envs": FieldRange(1),
        "num_steps": FieldRange(1),
        "total_timesteps": FieldRange(1),
        "learning_rate": FieldRange(0, 1, low_open=True),
        "gamma": FieldRange(0, 1),
        "gae_lambda": FieldRange(0, 1),
        "clip_eps": FieldRange(0, 1, low_open=True),
        "vf_clip": FieldRange(0, low_open=True),
        "ent_coef": FieldRange(0),
        "vf_coef": FieldRange(0),
        "max_grad_norm": FieldRange(0, low_open=True),
        "update_epochs": FieldRange(1),
        "num_minibatches": FieldRange(1),
        "hidden_sizes": FieldRange(1),
        "rho_clip": FieldRange(0, low_open=True),
        "c_clip": FieldRange(0, low_open=True),
        "rnn_hidden": FieldRange(1),
    }
    """The range of every numeric field, checked whenever a config is made (config.yaml, `--set`), before training."""

    def __post_init__(self) -> None:
        if not isinstance(self.hidden_sizes, (tuple, list)):
            raise ValueError(
                f"{type(self).__name__}: hidden_sizes must be a list of layer widths, got {self.hidden_sizes!r}."
            )
        object.__setattr__(self, "hidden_sizes", tuple(self.hidden_sizes))
        problems = out_of_range(self, type(self).RANGES)
        if problems:
            raise ValueError(f"{type(self).__name__}: " + "; ".join(problems) + ".")
        object.__setattr__(self, "hidden_sizes", tuple(int(h) for h in self.hidden_sizes))
        batch = self.num_envs * self.num_steps
        if self.total_timesteps < batch:
            problems.append(
                f"total_timesteps={self.total_timesteps} is less than one rollout of num_envs * num_steps = {batch}"
            )
        elif batch % self.num_minibatches != 0:
            problems.append(
                f"num_envs * num_steps = {batch} must be divisible by num_minibatches={self.num_minibatches}"
            )
        if self.activation not in ACTIVATIONS:
            problems.append(f"activation must be one of {sorted(ACTIVATIONS)}, got {self.activation!r}")
        if self.policy not in self.POLICIES:
            problems.append(f"policy must be one of {list(self.POLICIES)}, got {self.policy!r}")
        elif self.recurrent:
            problems += self._recurrent_problems()
        if problems:
            raise ValueError(f"{type(self).__name__}: " + "; ".join(problems) + ".")

    def _recurrent_problems(self) -> list[str]:
        problems = []
        if self.num_envs % self.num_minibatches != 0:
            problems.append(
                f"policy=recurrent keeps each env's sequence whole in a minibatch, so num_envs={self.num_envs} "
                f"must be divisible by num_minibatches={self.num_minibatches}"
            )
        if not self.hidden_sizes:
            problems.append("policy=recurrent needs hidden_sizes to name at least the embedding's width")
        if self.centralized_critic:
            problems.append("policy=recurrent has a per-slot critic on the GRU's output: set centralized_critic=false")
        return problems

    @property
    def recurrent(self) -> bool:
        """Whether the policy is the recurrent one (`policy="recurrent"`)."""
        return self.policy == "recurrent"

    @property
    def num_updates(self) -> int:
        """Rollout-and-learn iterations: `total_timesteps // (num_envs * num_steps)`."""
        return self.total_timesteps // (self.num_envs * self.num_steps)


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class TrainState:
    """Everything the training loop carries from one update to the next."""

    params: Params
    opt_state: Any
    normalizer: ObsNormalizer | None
    env_state: Any
    key: PRNGKeyArray
    memory: Memory | None = None
    reward_normalizer: RewardNormalizer | None = None


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class Batch:
    """A trajectory with its advantages and value targets, as the loss consumes it."""

    transition: Transition
    advantage: Array
    target: Array
    memory: Array | None = None
    """Recurrent policies: the hidden state before each sequence's first step (minibatches are whole sequences)."""


def masked_mean(x: Array, mask: Array | None) -> Array:
    """Mean of `x` over entries where `mask` is true (0 where none are); `None` means all."""
    if mask is None:
        return jnp.mean(x)
    mask = mask.astype(x.dtype)
    return jnp.sum(x * mask) / jnp.maximum(jnp.sum(mask), 1.0)


def as_slot_rows(x: Array) -> Array:
    """A minibatch array `[rows, agents, ...]` as `[rows * agents, ...]`: one row per slot.

    The loss is a mean over slots, so it does not change; on XLA:CPU its elementwise
    work then runs along one long axis instead of a short trailing slot axis (of size 1
    for single-agent envs), which vectorises better.
    """
    return x.reshape((x.shape[0] * x.shape[1],) + x.shape[2:])


def ppo_loss(params: Params, policy: Policy, batch: Batch, config: PPOConfig) -> tuple[Array, Metrics]:
    """Clipped surrogate + clipped value loss - entropy bonus, each a mean over active slots only.

    A recurrent policy's minibatch is whole sequences `[T, envs, ...]`, replayed from `batch.memory`
    and then read as rows `[T * envs, ...]` like a feedforward one.
    """
    current = dataclasses.replace(policy, params=params)
    if batch.memory is None:
        slots = batch.transition.slots()
        dist, value = current.distribution(slots), current.value(slots)
    else:
        dist, value = current.replay(batch.memory, batch.transition.slots(), batch.transition.episode_start)
        sequences = (dataclasses.replace(batch, memory=None), dist, value)
        batch, dist, value = jax.tree_util.tree_map(as_slot_rows, sequences)
    step = batch.transition
    # A single-agent env's one slot is always active (`read_slots`), so its means need no mask.
    valid = as_slot_rows(step.active) if policy.model.multi_agent else None
    dist = jax.tree_util.tree_map(as_slot_rows, dist)
    log_ratio = dist.log_prob(as_slot_rows(step.action)) - as_slot_rows(step.log_prob)
    ratio = jnp.exp(log_ratio)
    advantage = as_slot_rows(batch.advantage)
    if config.normalize_advantages:
        mean = masked_mean(advantage, valid)
        std = jnp.sqrt(masked_mean((advantage - mean) ** 2, valid))
        advantage = (advantage - mean) / (std + 1e-8)
    clipped_ratio = jnp.clip(ratio, 1.0 - config.clip_eps, 1.0 + config.clip_eps)
    surrogate = jnp.minimum(ratio * advantage, clipped_ratio * advantage)
    policy_loss = -masked_mean(surrogate, valid)

    value, old_value, target = as_slot_rows(value), as_slot_rows(step.value), as_slot_rows(batch.target)
    value_error = (value - target) ** 2
    if config.clip_value:
        clipped = old_value + jnp.clip(value - old_value, -config.vf_clip, config.vf_clip)
        value_error = jnp.maximum(value_error, (clipped - target) ** 2)
    value_loss = 0.5 * masked_mean(value_error, valid)
    entropy = masked_mean(dist.entropy(), valid)
    total = policy_loss + config.vf_coef * value_loss - config.ent_coef * entropy
    metrics = {
        "loss": total,
        "policy_loss": policy_loss,
        "value_loss": value_loss,
        "entropy": entropy,
        "approx_kl": masked_mean((ratio - 1.0) - log_ratio, valid),
        "clip_fraction": masked_mean((jnp.abs(ratio - 1.0) > config.clip_eps).astype(jnp.float32), valid),
    }
    return total, metrics


def advantages_for(
    policy: Policy, trajectory: Transition, last_value: Array, config: PPOConfig, memory: Array | None = None
) -> tuple[Array, Array]:
    """Targets and advantages of a trajectory under `policy` (docs/baselines.md).

    Plain GAE uses the collection-time values. With `vtrace`, values and
    importance ratios come from the current policy, clipped at `rho_clip`/`c_clip`
    (a recurrent one replays the trajectory from `memory`, its hidden state before the first step).
    """
    value, ratio = trajectory.value, None
    if config.vtrace:
        slots = trajectory.slots()
        if memory is None:
            dist, value = policy.distribution(slots), policy.value(slots)
        else:
            dist, value = policy.replay(memory, slots, trajectory.episode_start)
        ratio = jnp.exp(dist.log_prob(trajectory.action) - trajectory.log_prob)
    return estimate_advantages(
        value,
        trajectory.reward,
        trajectory.termination,
        trajectory.truncation,
        trajectory.bootstrap_value,
        last_value,
        gamma=config.gamma,
        gae_lambda=config.gae_lambda,
        active=trajectory.active,
        ratio=ratio,
        rho_clip=config.rho_clip if config.vtrace else 1.0,
        c_clip=config.c_clip if config.vtrace else 1.0,
    )


FLAT_OPTIMIZER_MAX_PARAMS = 2**16
"""Up to this many parameters the optimizer updates them as one flat vector (`make_optimizer`)."""


def make_optimizer(config: PPOConfig, num_params: int = 0) -> optax.GradientTransformation:
    """Adam behind global-norm gradient clipping; the learning rate falls linearly to 0 if `anneal_lr`.

    Up to `FLAT_OPTIMIZER_MAX_PARAMS` parameters it updates them as one flat vector (`optax.flatten`):
    the same arithmetic per entry, but a handful of fused loops per step instead of several per weight
    array, to compile and to run. Beyond that, gathering the gradients into the vector and splitting
    the updates back cost more than the loops save (a 256x256 actor and critic: a third more CPU time).
    """
    learning_rate: float | optax.Schedule = config.learning_rate
    if config.anneal_lr:
        steps = config.num_updates * config.update_epochs * config.num_minibatches
        learning_rate = optax.linear_schedule(config.learning_rate, 0.0, steps)
    optimizer = optax.chain(optax.clip_by_global_norm(config.max_grad_norm), optax.adam(learning_rate, eps=1e-5))
    return optax.flatten(optimizer) if num_params <= FLAT_OPTIMIZER_MAX_PARAMS else optimizer


Rows = TypeVar("Rows")
"""A pytree of trajectory-shaped leaves, such as a `Batch`."""


def shuffled_rows(batch: Rows, key: PRNGKeyArray, config: PPOConfig) -> Rows:
    """The batch's `num_envs * num_steps` rows (any pytree of `[num_steps, num_envs, ...]` leaves) in a random
    order, as `[num_minibatches, rows, ...]`."""
    size = config.num_envs * config.num_steps
    order = permutation(key, size)
    return jax.tree_util.tree_map(
        lambda x: x.reshape((size,) + x.shape[2:])[order].reshape(
            (config.num_minibatches, size // config.num_minibatches) + x.shape[2:]
        ),
        batch,
    )


def whole_sequences(batch: Batch, key: PRNGKeyArray, num_minibatches: int) -> Batch:
    """The batch's envs in a random order, split into `num_minibatches` groups of whole sequences:
    time-major leaves `[T, envs, ...]` become `[num_minibatches, T, envs / num_minibatches, ...]`, the
    hidden state `[envs, ...]` becomes `[num_minibatches, envs / num_minibatches, ...]`."""
    memory = batch.memory
    assert memory is not None
    order = permutation(key, memory.shape[0])
    groups = (num_minibatches, memory.shape[0] // num_minibatches)

    def split(x: Array) -> Array:
        x = x[:, order]
        return jnp.swapaxes(x.reshape((x.shape[0],) + groups + x.shape[2:]), 0, 1)

    sequences = jax.tree_util.tree_map(split, dataclasses.replace(batch, memory=None))
    return dataclasses.replace(sequences, memory=memory[order].reshape(groups + memory.shape[1:]))


def make_learner(
    config: PPOConfig, optimizer: optax.GradientTransformation, mesh: Mesh | None = None
) -> Callable[..., tuple[Policy, Any, Metrics]]:
    """`learn(policy, opt_state, trajectory, last_value, key, memory=None)`: `update_epochs` passes of shuffled
    minibatches. A recurrent policy's `memory` is its hidden state before the trajectory's first step.

    With a `mesh`, each minibatch's rows are split across its devices, so gradients are data-parallel.
    """
    grad_fn = jax.value_and_grad(ppo_loss, has_aux=True)

    def learn(
        policy: Policy,
        opt_state: Any,
        trajectory: Transition,
        last_value: Array,
        key: PRNGKeyArray,
        memory: Array | None = None,
    ) -> tuple[Policy, Any, Metrics]:
        fixed = None if config.vtrace else advantages_for(policy, trajectory, last_value, config, memory)

        def epoch(carry: tuple[Policy, Any], epoch_key: PRNGKeyArray) -> tuple[tuple[Policy, Any], Metrics]:
            policy, opt_state = carry
            if fixed is None:
                targets, advantages = advantages_for(policy, trajectory, last_value, config, memory)
            else:
                targets, advantages = fixed
            batch = Batch(trajectory, advantages, targets, memory)
            if memory is not None:
                minibatches = whole_sequences(batch, epoch_key, config.num_minibatches)
                minibatches = shard_env_batch(minibatches, mesh, env_axis=2)
                minibatches = dataclasses.replace(minibatches, memory=shard_env_batch(minibatches.memory, mesh, 1))
            else:
                minibatches = shuffled_rows(batch, epoch_key, config)
                minibatches = shard_env_batch(minibatches, mesh, env_axis=1)

            def minibatch_step(carry: tuple[Policy, Any], minibatch: Batch) -> tuple[tuple[Policy, Any], Metrics]:
                policy, opt_state = carry
                (_, metrics), grads = grad_fn(policy.params, policy, minibatch, config)
                updates, opt_state = optimizer.update(grads, opt_state, policy.params)
                params = optax.apply_updates(policy.params, updates)
                return (dataclasses.replace(policy, params=params), opt_state), metrics

            return jax.lax.scan(minibatch_step, (policy, opt_state), minibatches)

        (policy, opt_state), metrics = jax.lax.scan(
            epoch, (policy, opt_state), jax.random.split(key, config.update_epochs)
        )
        return policy, opt_state, jax.tree_util.tree_map(jnp.mean, metrics)

    return learn


def episode_metrics(trajectory: Transition, final_state: Any) -> Metrics:
    """`episode_return`: mean over envs of each env's latest finished episode return (slots averaged),
    envs that never finished left out; `episodes`: how many episodes finished in this trajectory."""
    stats = episode_stats(final_state)
    returns = stats.episode_return.reshape(stats.episode_length.shape + (-1,)).mean(axis=-1)
    ever_finished = stats.episode_length > 0
    return {
        "episode_return": jnp.sum(jnp.where(ever_finished, returns, 0.0)) / jnp.maximum(ever_finished.sum(), 1),
        "episodes": trajectory.episode_finished.sum(),
    }


def vector_env(env: AnyEnv, num_envs: int) -> RecordEpisodeStatistics:
    """The training env: `num_envs` copies with selective reset and episode statistics."""
    return RecordEpisodeStatistics(VmapWrapper(env, num_envs))


def model_for(env: AnyEnv, config: PPOConfig) -> ActorCritic:
    """The networks `config` asks for, sized for `env` (a `RecurrentActorCritic` for `policy="recurrent"`)."""
    model = actor_critic_for(env, config.hidden_sizes, config.activation, config.agent_ids, config.centralized_critic)
    return recurrent_actor_critic(model, config.rnn_hidden) if config.recurrent else model


def init_train_state(
    config: PPOConfig,
    model: ActorCritic,
    env: RecordEpisodeStatistics,
    optimizer: optax.GradientTransformation,
    key: PRNGKeyArray,
    mesh: Mesh | None = None,
) -> TrainState:
    """Fresh params, optimizer state, normaliser and env states (env batch split across `mesh`, the rest replicated)."""
    key, params_key, reset_key = jax.random.split(key, 3)
    params = replicate(model.init(params_key), mesh)
    normalizer = ObsNormalizer.create(model.obs_dim, model.global_obs_dim) if config.normalize_obs else None
    env_state = shard_env_batch(env.reset(key=reset_key), mesh)
    memory = None
    if config.recurrent:
        memory = shard_env_batch(Policy(model, params).initial_memory((config.num_envs,)), mesh)
    rewards = None
    if config.normalize_rewards:  # each env's running return lives with its env on the mesh; the statistics replicated
        rewards = RewardNormalizer.create(config.num_envs, model.num_agents)
        rewards = dataclasses.replace(rewards, returns=shard_env_batch(rewards.returns, mesh))
    return TrainState(params, optimizer.init(params), normalizer, env_state, key, memory, rewards)


def make_update(
    config: PPOConfig,
    model: ActorCritic,
    env: RecordEpisodeStatistics,
    optimizer: optax.GradientTransformation,
    mesh: Mesh | None = None,
    opponent: TrainingOpponent | None = None,
) -> Callable[[TrainState, Any], tuple[TrainState, Metrics]]:
    """One PPO iteration as a `lax.scan` body: collect, estimate advantages, learn, update the normaliser.

    With a `mesh`, the rollout's env batch is split across its devices and the params stay replicated.
    With an `opponent` (multi-agent games), it plays its side of the first `opponent.envs` envs and
    its slots count as inactive for learning.
    """
    learn = make_learner(config, optimizer, mesh)

    def scale_rewards(
        rewards: RewardNormalizer | None, trajectory: Transition
    ) -> tuple[RewardNormalizer | None, Transition]:
        """The trajectory the learner sees: its rewards scaled with `normalize_rewards`, else as collected."""
        if rewards is None:
            return None, trajectory
        end = trajectory.termination | trajectory.truncation
        rewards, scaled = rewards.scale(trajectory.reward, end, trajectory.active, config.gamma)
        return rewards, dataclasses.replace(trajectory, reward=scaled)

    def update(state: TrainState, _: Any) -> tuple[TrainState, Metrics]:
        key, rollout_key, learn_key = jax.random.split(state.key, 3)
        policy = Policy(model, state.params, state.normalizer)
        if state.memory is not None:
            return recurrent_update(policy, state, key, rollout_key, learn_key)
        if opponent is None:
            env_state, trajectory = collect(env, policy, state.env_state, rollout_key, config.num_steps, mesh)
        else:
            env_state, trajectory = collect_against(
                env, policy, opponent, state.env_state, rollout_key, config.num_steps, mesh
            )
        last_value = policy.value(read_slots(env_state))
        rewards, learned = scale_rewards(state.reward_normalizer, trajectory)
        policy, opt_state, loss_metrics = learn(policy, state.opt_state, learned, last_value, learn_key)
        normalizer = state.normalizer
        if normalizer is not None:
            normalizer = normalizer.update(trajectory.observation, trajectory.global_observation, trajectory.active)
        params = replicate(policy.params, mesh)
        next_state = TrainState(params, opt_state, normalizer, env_state, key, reward_normalizer=rewards)
        return next_state, {**episode_metrics(trajectory, env_state), **loss_metrics}

    def recurrent_update(
        policy: Policy, state: TrainState, key: PRNGKeyArray, rollout_key: PRNGKeyArray, learn_key: PRNGKeyArray
    ) -> tuple[TrainState, Metrics]:
        memory = state.memory
        assert memory is not None
        if opponent is None:
            env_state, next_memory, trajectory = collect_recurrent(
                env, policy, state.env_state, memory, rollout_key, config.num_steps, mesh
            )
        else:
            env_state, next_memory, trajectory = collect_recurrent_against(
                env, policy, opponent, state.env_state, memory, rollout_key, config.num_steps, mesh
            )
        last_value = policy.value_memory(next_memory.at_step_start(), read_slots(env_state))
        rewards, learned = scale_rewards(state.reward_normalizer, trajectory)
        policy, opt_state, loss_metrics = learn(policy, state.opt_state, learned, last_value, learn_key, memory.hidden)
        normalizer = state.normalizer
        if normalizer is not None:
            normalizer = normalizer.update(trajectory.observation, trajectory.global_observation, trajectory.active)
        params = replicate(policy.params, mesh)
        next_state = TrainState(params, opt_state, normalizer, env_state, key, next_memory, rewards)
        return next_state, {**episode_metrics(trajectory, env_state), **loss_metrics}

    return update


@dataclass(frozen=True)
class Training:
    """The pieces a training run scans over: `state = init(key)`, then `update` (the `lax.scan` body)
    `num_updates` times, then `policy(state)`. `make_train` runs them in one scan; baseline training
    (`parallax_zoo.baselines.training`) runs the same `update` in segments, so both train the same weights."""

    model: ActorCritic
    init: Callable[[PRNGKeyArray], TrainState]
    update: Callable[[TrainState, Any], tuple[TrainState, Metrics]]
    num_updates: int

    def policy(self, state: TrainState) -> Policy:
        """The policy a train state holds."""
        return Policy(self.model, state.params, state.normalizer)


def training(
    config: PPOConfig, env: AnyEnv, mesh: Mesh | None = None, opponent: TrainingOpponent | None = None
) -> Training:
    """PPO's pieces for `env` (an unbatched parallax env, TimeLimit applied, as `make` returns it).

    With a device `mesh` (`sharding.default_mesh()`), `num_envs` and the rows per
    minibatch must be multiples of its size. `opponent` seats a fixed player in some
    envs of a multi-agent game (`mappo.training` sets it).
    """
    check_divisible(config.num_envs, mesh, "make_train")
    minibatch_rows = config.num_envs * config.num_steps // config.num_minibatches
    check_divisible(minibatch_rows, mesh, "make_train", "rows per minibatch (num_envs * num_steps / num_minibatches)")
    model = model_for(env, config)
    training_env = vector_env(env, config.num_envs)
    shapes = jax.eval_shape(model.init, jax.random.key(0))
    optimizer = make_optimizer(config, sum(leaf.size for leaf in jax.tree_util.tree_leaves(shapes)))

    def init(key: PRNGKeyArray) -> TrainState:
        return init_train_state(config, model, training_env, optimizer, key, mesh)

    update = make_update(config, model, training_env, optimizer, mesh, opponent)
    return Training(model, init, update, config.num_updates)


def make_train(
    config: PPOConfig, env: AnyEnv, mesh: Mesh | None = None
) -> Callable[[PRNGKeyArray], tuple[Policy, Metrics]]:
    """`train(key) -> (policy, metrics)`: the whole run, jittable and vmappable over keys.

    `env` is an unbatched parallax env (TimeLimit applied, as `make` returns it).
    Metrics have a leading `num_updates` axis. With a device `mesh`
    (`sharding.default_mesh()`), `num_envs` and the rows per minibatch must be
    multiples of its size.
    """
    pieces = training(config, env, mesh)

    def train(key: PRNGKeyArray) -> tuple[Policy, Metrics]:
        state, metrics = jax.lax.scan(pieces.update, pieces.init(key), None, length=pieces.num_updates)
        return pieces.policy(state), metrics

    return train


def train(config: PPOConfig, key: PRNGKeyArray, env: AnyEnv, *, mesh: Mesh | None = None) -> tuple[Policy, Metrics]:
    """Run PPO once: `jax.jit(make_train(config, env, mesh))(key)`.

    `env` is the env object (`parallax_zoo.make(config.env_id)` builds a registered one).
    Each call compiles afresh; to train many seeds, `jax.vmap` the function
    `make_train` returns. `mesh` splits the env batch across devices (`sharding.default_mesh()`).
    A `MAPPOConfig` trains with `mappo.train`.
    """
    if type(config) is not PPOConfig:
        raise TypeError(
            f"ppo.train takes a PPOConfig, got {type(config).__name__}; train a {type(config).__name__} with "
            "mappo.train"
        )
    return jax.jit(make_train(config, env, mesh))(key)
