"""Running mean and variance of observations and of returns, for PPO's optional normalisations.

The statistics live in the train state and are saved with the params, so
evaluation normalises exactly as training did.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

CLIP = 10.0
EPSILON = 1e-8


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class RunningMeanStd:
    """Mean and variance of every feature seen so far, and how many samples that is."""

    mean: Float[Array, " dim"]
    var: Float[Array, " dim"]
    count: Float[Array, ""]

    @classmethod
    def create(cls, dim: int) -> RunningMeanStd:
        """No samples yet: mean 0, variance 1, a tiny count so the first batch dominates."""
        return cls(mean=jnp.zeros(dim), var=jnp.ones(dim), count=jnp.asarray(1e-4))

    def update(self, batch: Float[Array, "... dim"], weight: Array | None = None) -> RunningMeanStd:
        """Merge a batch's moments (Chan et al.'s parallel algorithm); leading axes are samples.

        `weight` (shaped like the sample axes) leaves out samples with weight 0,
        such as inactive agent slots, whose zero observations are padding.
        """
        samples = batch.reshape(-1, batch.shape[-1])
        if weight is None:
            weights = jnp.ones(samples.shape[0])
        else:
            weights = jnp.asarray(weight, jnp.float32).reshape(-1)
        batch_count = jnp.maximum(weights.sum(), 1e-8)
        batch_mean = (weights[:, None] * samples).sum(axis=0) / batch_count
        batch_var = (weights[:, None] * (samples - batch_mean) ** 2).sum(axis=0) / batch_count
        delta = batch_mean - self.mean
        total = self.count + batch_count
        mean = self.mean + delta * batch_count / total
        m2 = self.var * self.count + batch_var * batch_count + delta**2 * self.count * batch_count / total
        return RunningMeanStd(mean=mean, var=m2 / total, count=total)

    def normalize(self, x: Float[Array, "... dim"]) -> Float[Array, "... dim"]:
        """Standardise and clip to [-10, 10]."""
        return jnp.clip((x - self.mean) / jnp.sqrt(self.var + EPSILON), -CLIP, CLIP)


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class ObsNormalizer:
    """One running normaliser for the slots' observations and one for the global observation."""

    observation: RunningMeanStd
    global_observation: RunningMeanStd

    @classmethod
    def create(cls, obs_dim: int, global_obs_dim: int) -> ObsNormalizer:
        return cls(RunningMeanStd.create(obs_dim), RunningMeanStd.create(global_obs_dim))

    def update(self, observation: Array, global_observation: Array, active: Array) -> ObsNormalizer:
        """Fold in a rollout's raw observations `[..., agents, obs_dim]` (active slots only) and global ones."""
        return ObsNormalizer(
            self.observation.update(observation, active),
            self.global_observation.update(global_observation),
        )


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class RewardNormalizer:
    """Rewards divided by the running standard deviation of each slot's discounted return, as PureJaxRL's
    `NormalizeVecReward` does for continuous control (docs/baselines.md, "Continuous actions beside PureJaxRL"):
    the critic then learns returns of about unit scale whatever the env's reward scale. Only training sees the
    scaled rewards; episode returns and evaluation stay in the env's own units."""

    returns: Float[Array, "envs agents"]
    """Each env slot's discounted return so far in its episode."""
    stats: RunningMeanStd

    @classmethod
    def create(cls, num_envs: int, num_agents: int) -> RewardNormalizer:
        return cls(jnp.zeros((num_envs, num_agents)), RunningMeanStd.create(1))

    def scale(
        self, reward: Float[Array, "T envs agents"], episode_end: Array, active: Array, gamma: float
    ) -> tuple[RewardNormalizer, Float[Array, "T envs agents"]]:
        """Fold a rollout's discounted returns (active slots only) into the statistics, then scale its rewards."""

        def accumulate(returns: Array, step: tuple[Array, Array]) -> tuple[Array, Array]:
            step_reward, end = step
            returns = returns * gamma + step_reward
            return jnp.where(end, 0.0, returns), returns

        carried, returns = jax.lax.scan(accumulate, self.returns, (reward, episode_end))
        stats = self.stats.update(returns[..., None], active)
        scaled = reward / jnp.sqrt(stats.var[0] + EPSILON)
        return RewardNormalizer(carried, stats), scaled
