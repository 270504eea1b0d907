"""Advantage estimation: GAE with optional V-trace clipping, exactly the recurrence in docs/baselines.md.

For slot-mask m_t, termination z_t, episode boundary d_t and ratio r_t:

    rho_t = min(r_t, rho_clip),   c_t = min(r_t, c_clip)
    delta_t = m_t rho_t [reward_t + gamma (1 - z_t) B_t - V_t]
    A_t = delta_t + gamma lambda m_t (1 - d_t) c_t A_{t+1},   A_T = 0
    R_t = V_t + m_t A_t

B_t is `bootstrap_value[t]` (value of the pre-reset observation) at a
truncation, `last_value` after the final step, `value[t + 1]` otherwise.
Termination suppresses bootstrapping even on a truncated step. Unit ratios
with unit caps give ordinary GAE. Inputs must be finite, padding included:
multiplying NaN by a zero mask does not remove it.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float


def estimate_advantages(
    value: Float[Array, " T ..."],
    reward: Float[Array, " T ..."],
    termination: Array,
    truncation: Array,
    bootstrap_value: Float[Array, " T ..."],
    last_value: Float[Array, ...],
    *,
    gamma: float,
    gae_lambda: float,
    active: Array | None = None,
    done: Array | None = None,
    ratio: Float[Array, " T ..."] | None = None,
    rho_clip: float = 1.0,
    c_clip: float = 1.0,
) -> tuple[Float[Array, " T ..."], Float[Array, " T ..."]]:
    """Return `(targets, advantages)`, gradients stopped, shaped like `value` (time first).

    `active` defaults to all true, `done` to `termination | truncation`, `ratio` to ones.
    """
    z = termination.astype(value.dtype)
    d = (termination | truncation if done is None else done).astype(value.dtype)
    m = jnp.ones_like(value) if active is None else active.astype(value.dtype)
    ratio = jnp.ones_like(value) if ratio is None else ratio
    rho = jnp.minimum(ratio, rho_clip)
    c = jnp.minimum(ratio, c_clip)
    next_value = jnp.concatenate([value[1:], last_value[None]], axis=0)
    bootstrap = jnp.where(truncation, bootstrap_value, next_value)
    delta = m * rho * (reward + gamma * (1.0 - z) * bootstrap - value)
    trace = gamma * gae_lambda * m * (1.0 - d) * c

    def backward(next_advantage: Array, step: tuple[Array, Array]) -> tuple[Array, Array]:
        delta_t, trace_t = step
        advantage = delta_t + trace_t * next_advantage
        return advantage, advantage

    # Unrolled: each step is two flops, so on XLA:CPU the loop's own bookkeeping would dominate.
    _, advantages = jax.lax.scan(backward, jnp.zeros_like(last_value), (delta, trace), reverse=True, unroll=16)
    targets = value + m * advantages
    return jax.lax.stop_gradient(targets), jax.lax.stop_gradient(advantages)
