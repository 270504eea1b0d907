"""`Adapter`: the shell every suite adapter shares, around the two functions that differ.

An adapter writes `_reset_unchecked(key)` and `_step_unchecked(state,
action)`, the suite's own reset and step mapped onto the protocol, and sets
`_action_space` and `_observation_space` in its constructor. This base class
gives it the protocol's surface (docs/protocol.md): the two spaces, and
`reset` and `step` that check their key and action with a clear error first
and then run those functions under `jax.jit`, so that stepping eagerly, as in
a Python loop, runs one compiled program rather than thousands of small ones.

Keys: a fresh state keeps the key its reset was given, which the suite's
reset draws from; each step hashes the state's key once (`next_key`,
`next_and_step_key`) at counters far above any a reset draws, for the
state's next key and, where the suite's step draws random numbers, the key
it draws from. So a reset costs no hash and a step one, which is visible on
cheap envs: the selective reset builds a fresh state for every env on
every step, and on XLA:CPU each hash is a loop of its own.
"""

from __future__ import annotations

from typing import Any, Generic

import jax
import jax.numpy as jnp
from jaxtyping import Array, PRNGKeyArray

from parallax.core import EitherStateT, is_key_dtype, require_key
from parallax.spaces import Space, check_action


class Adapter(Generic[EitherStateT]):
    """A foreign environment as a parallax `Env` or `MARLEnv`, generic in the state it returns.

    Subclasses call `super().__init__()` once their spaces are set; error
    messages name the subclass (`GymnaxAdapter.step: ...`).
    """

    _action_space: Space
    _observation_space: Space
    costly_reset: bool = False
    """Whether a reset costs about a step or more, so that `VmapWrapper` resets only the finished envs."""

    def __init__(self) -> None:
        self._reset = jax.jit(self._reset_unchecked)
        self._step = jax.jit(self._step_unchecked)

    @property
    def name(self) -> str:
        """The adapter's class name, as error messages and `repr` give it."""
        return type(self).__name__

    @property
    def action_space(self) -> Space:
        return self._action_space

    @property
    def observation_space(self) -> Space:
        return self._observation_space

    def reset(self, key: PRNGKeyArray) -> EitherStateT:
        require_key(key, f"{self.name}.reset")
        return self._reset(key)

    def step(self, state: EitherStateT, action: Array) -> EitherStateT:
        check_action(self.action_space, action, where=f"{self.name}.step")
        return self._step(state, action)

    def _reset_unchecked(self, key: PRNGKeyArray) -> EitherStateT:
        """The suite's reset as a protocol state; traced, so it may not inspect values."""
        raise NotImplementedError

    def _step_unchecked(self, state: EitherStateT, action: Array) -> EitherStateT:
        """The suite's step as a protocol state, for an action already checked; traced like `_reset_unchecked`."""
        raise NotImplementedError


def cast_like(tree: Any, signature: Any) -> Any:
    """`tree` with every leaf a strongly typed array of its signature's dtype, so reset and step agree."""
    return jax.tree_util.tree_map(lambda x, s: jnp.asarray(x, dtype=s.dtype), tree, signature)


def zeros_like_signature(signature: Any) -> Any:
    """Zeros of every leaf's shape and dtype: the `info` of a fresh state, shaped like a step's."""
    return jax.tree_util.tree_map(lambda s: jnp.zeros(s.shape, s.dtype), signature)


def raw_key(key: PRNGKeyArray) -> Array:
    """A `uint32[2]` key, for suites written for `jax.random.PRNGKey` (Jumanji, Brax, Playground)."""
    if is_key_dtype(key.dtype):
        return jax.random.key_data(key)
    return key


def reads_input(traced: Any, position: int) -> bool:
    """Whether a traced program (`jax.make_jaxpr`'s result) uses its input at `position`: a suite's step that draws from
    its key."""
    var = traced.jaxpr.invars[position]
    return any(v is var for eqn in traced.jaxpr.eqns for v in eqn.invars) or any(v is var for v in traced.jaxpr.outvars)


KEY_COUNTER = 0xFFFFFF00
"""`fold_in` data of the keys a step derives: no suite's reset draws anywhere near 2**32 numbers from its key."""


def next_key(key: PRNGKeyArray) -> PRNGKeyArray:
    """The state's next key, for a step that draws no random numbers: one hash."""
    return jax.random.fold_in(key, KEY_COUNTER)


def next_and_step_key(key: PRNGKeyArray) -> tuple[PRNGKeyArray, PRNGKeyArray]:
    """(the state's next key, the key the suite's step draws from): two counters of one hash."""
    counters = jnp.arange(KEY_COUNTER, KEY_COUNTER + 2, dtype=jnp.uint32)
    keys = jax.vmap(jax.random.fold_in, in_axes=(None, 0))(key, counters)
    return keys[0], keys[1]


__all__ = [
    "Adapter",
    "KEY_COUNTER",
    "cast_like",
    "next_and_step_key",
    "next_key",
    "raw_key",
    "reads_input",
    "zeros_like_signature",
]
