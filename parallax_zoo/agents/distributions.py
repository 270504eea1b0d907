"""Action distributions for the policy heads: log_prob, entropy, sample and mode.

Written here rather than imported (no distrax), each as a registered
dataclass so a distribution can cross `jit`, `vmap` and `lax.scan`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float, PRNGKeyArray


class Distribution(Protocol):
    """What PPO needs from a policy's action distribution."""

    def log_prob(self, action: Array) -> Float[Array, ...]: ...

    def entropy(self) -> Float[Array, ...]: ...

    def sample(self, key: PRNGKeyArray) -> Array: ...

    def mode(self) -> Array: ...


def mask_logits(logits: Array, mask: Array | None) -> Array:
    """Illegal actions get the most negative finite logit, so their probability is exactly zero."""
    if mask is None:
        return logits
    return jnp.where(mask, logits, jnp.finfo(logits.dtype).min)


def _entropy_from_logits(logits: Array) -> Array:
    """`-sum p log p` over the last axis, with `0 log 0 = 0` for masked actions."""
    log_p = jax.nn.log_softmax(logits, axis=-1)
    p = jnp.exp(log_p)
    return -jnp.sum(jnp.where(p > 0.0, p * log_p, 0.0), axis=-1)


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class Categorical:
    """One choice among `n` actions; `logits` has shape `[..., n]` (already masked)."""

    logits: Float[Array, "... n"]

    def log_prob(self, action: Array) -> Float[Array, ...]:
        # A select-and-sum rather than a gather: its gradient is a select too, where a gather's is a
        # scatter-add, which XLA:CPU runs as a loop. Only the chosen entry is non-zero, so it is exact.
        log_p = jax.nn.log_softmax(self.logits, axis=-1)
        chosen = action[..., None].astype(jnp.int32) == jnp.arange(log_p.shape[-1])
        return jnp.sum(jnp.where(chosen, log_p, 0.0), axis=-1)

    def entropy(self) -> Float[Array, ...]:
        return _entropy_from_logits(self.logits)

    def sample(self, key: PRNGKeyArray) -> Array:
        return jax.random.categorical(key, self.logits, axis=-1).astype(jnp.int32)

    def mode(self) -> Array:
        return jnp.argmax(self.logits, axis=-1).astype(jnp.int32)


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class MultiCategorical:
    """Independent choices, one per component; `logits` is `[..., components, max_n]`.

    Components with fewer than `max_n` actions are padded with masked logits,
    so log-probabilities and entropies sum over components.
    """

    logits: Float[Array, "... d k"]

    def log_prob(self, action: Array) -> Float[Array, ...]:
        return jnp.sum(Categorical(self.logits).log_prob(action), axis=-1)

    def entropy(self) -> Float[Array, ...]:
        return jnp.sum(_entropy_from_logits(self.logits), axis=-1)

    def sample(self, key: PRNGKeyArray) -> Array:
        return Categorical(self.logits).sample(key)

    def mode(self) -> Array:
        return Categorical(self.logits).mode()


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class DiagGaussian:
    """A Gaussian with diagonal covariance over a flat action vector `[..., d]`."""

    mean: Float[Array, "... d"]
    log_std: Float[Array, "... d"]

    def log_prob(self, action: Array) -> Float[Array, ...]:
        z = (action - self.mean) * jnp.exp(-self.log_std)
        return jnp.sum(-0.5 * z**2 - self.log_std - 0.5 * math.log(2.0 * math.pi), axis=-1)

    def entropy(self) -> Float[Array, ...]:
        per_dim = self.log_std + 0.5 * math.log(2.0 * math.pi * math.e)
        return jnp.sum(jnp.broadcast_to(per_dim, self.mean.shape), axis=-1)

    def sample(self, key: PRNGKeyArray) -> Array:
        return self.mean + jnp.exp(self.log_std) * jax.random.normal(key, self.mean.shape, self.mean.dtype)

    def mode(self) -> Array:
        return self.mean
