"""`when_any`: a conditional whose skip survives `vmap` (the rollout's truncation values and resets)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from parallax_zoo.agents.when_any import when_any


class Counter:
    """A player-like operand that is not a pytree: it passes through `when_any` as it is."""

    def __init__(self) -> None:
        self.calls = 0

    def double(self, x: jax.Array) -> jax.Array:
        jax.debug.callback(self.count)
        return jnp.where(x > 0, 2 * x, 0.0)

    def count(self) -> None:
        self.calls += 1


def batched_when_any(counter: Counter) -> jax.stages.Wrapped:
    """Seeds vmapped over `when_any`, as a user vmaps the whole training."""

    def one_seed(x: jax.Array) -> jax.Array:
        return when_any(x > 0, lambda c, x: c.double(x), lambda c, x: jnp.zeros_like(x), counter, x)

    return jax.jit(jax.vmap(one_seed))


def test_under_vmap_the_work_runs_only_on_steps_where_some_seed_needs_it():
    counter = Counter()
    run = batched_when_any(counter)
    assert np.array_equal(run(jnp.zeros((3, 2))), np.zeros((3, 2)))
    jax.effects_barrier()
    assert counter.calls == 0  # a `lax.cond` here would be a select, computing on every step
    needed = jnp.array([[0.0, 0.0], [0.0, 1.5], [0.0, 0.0]])
    assert np.array_equal(run(needed), 2 * np.asarray(needed))
    jax.effects_barrier()
    assert counter.calls > 0


def test_without_vmap_it_is_a_plain_conditional():
    counter = Counter()
    run = jax.jit(lambda x: when_any(x > 0, lambda c, x: c.double(x), lambda c, x: jnp.zeros_like(x), counter, x))
    assert np.array_equal(run(jnp.array([0.0, 3.0])), [0.0, 6.0])
    assert np.array_equal(run(jnp.array([0.0, -1.0])), [0.0, 0.0])
    jax.effects_barrier()
    assert counter.calls == 1


def test_nested_vmaps_keep_the_skip():
    counter = Counter()
    one_seed = lambda x: when_any(x > 0, lambda c, x: c.double(x), lambda c, x: jnp.zeros_like(x), counter, x)  # noqa: E731
    run = jax.jit(jax.vmap(jax.vmap(one_seed)))
    assert np.array_equal(run(jnp.zeros((2, 3, 4))), np.zeros((2, 3, 4)))
    jax.effects_barrier()
    assert counter.calls == 0
    x = jnp.zeros((2, 3, 4)).at[1, 2, 3].set(1.0)
    assert np.array_equal(run(x), 2 * np.asarray(x))
