"""The protocol's data types and interfaces (docs/protocol.md).

`State` and `MARLState` are the pytrees that every `reset` and `step` returns;
`Env`, `VectorEnv`, `MARLEnv` and `MARLVectorEnv` are structural protocols:
an environment satisfies one by having the right attributes, no base class.
The protocols are generic in the state type, so a subclass of `State` with an
extra field (an action mask, say) stays visible to type checkers through any
stack of wrappers; a bare `Env` means `Env[State]`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float, Int, PRNGKeyArray
from typing_extensions import TypeVar

from parallax.spaces import Space


@jax.tree_util.register_dataclass
@dataclass(kw_only=True)
class State:
    """Everything a single-agent environment knows after a `reset` or `step`."""

    env_state: Any
    observation: Any
    reward: Float[Array, ...]
    termination: Bool[Array, ...]
    truncation: Bool[Array, ...]
    info: dict[str, Any]
    step_count: Int[Array, ...]
    key: PRNGKeyArray

    @property
    def done(self) -> Bool[Array, ...]:
        """The episode ended, naturally or cut short."""
        return jnp.logical_or(self.termination, self.truncation)


@jax.tree_util.register_dataclass
@dataclass(kw_only=True)
class Agents:
    """Per-agent data, each field stacked on a leading `num_agents` axis."""

    observation: Any
    active: Bool[Array, " num_agents"]
    reward: Float[Array, " num_agents"]
    action_mask: Bool[Array, " num_agents num_actions"] | None = None


@jax.tree_util.register_dataclass
@dataclass(kw_only=True)
class MARLState:
    """A multi-agent step: episode-level flags plus per-agent `Agents` slots.

    `termination` and `truncation` are episode-level scalars; an agent's own
    lifecycle lives in `agents.active` (the six rules, docs/protocol.md).
    """

    env_state: Any
    agents: Agents
    termination: Bool[Array, ...]
    truncation: Bool[Array, ...]
    info: dict[str, Any]
    step_count: Int[Array, ...]
    key: PRNGKeyArray
    global_observation: Any = None

    @property
    def done(self) -> Bool[Array, ...]:
        """The episode ended, naturally or cut short."""
        return jnp.logical_or(self.termination, self.truncation)


AnyState = State | MARLState
StateT = TypeVar("StateT", bound=State, default=State)
MARLStateT = TypeVar("MARLStateT", bound=MARLState, default=MARLState)
EitherStateT = TypeVar("EitherStateT", bound=State | MARLState, default=State)


@runtime_checkable
class BaseEnv(Protocol[EitherStateT]):
    """What every environment, single- or multi-agent, batched or not, has in common.

    Wrappers accept any `BaseEnv` and return the state type it returns.
    """

    @property
    def action_space(self) -> Space: ...

    @property
    def observation_space(self) -> Space: ...

    def reset(self, *, key: PRNGKeyArray) -> EitherStateT: ...

    def step(self, state: EitherStateT, action: Array) -> EitherStateT: ...


@runtime_checkable
class Env(Protocol[StateT]):
    """A single-agent environment: two pure functions and its spaces."""

    @property
    def action_space(self) -> Space: ...

    @property
    def observation_space(self) -> Space: ...

    def reset(self, *, key: PRNGKeyArray) -> StateT: ...

    def step(self, state: StateT, action: Array) -> StateT: ...


@runtime_checkable
class VectorEnv(Protocol[StateT]):
    """`num_envs` environments stepped together, with selective reset."""

    @property
    def action_space(self) -> Space: ...

    @property
    def observation_space(self) -> Space: ...

    @property
    def num_envs(self) -> int: ...

    def reset(
        self,
        *,
        key: PRNGKeyArray,
        state: StateT | None = None,
        done: Bool[Array, " envs"] | None = None,
    ) -> StateT: ...

    def step(self, state: StateT, action: Array) -> StateT: ...


@runtime_checkable
class MARLEnv(Protocol[MARLStateT]):
    """A multi-agent environment over `num_agents` shape-homogeneous slots."""

    @property
    def num_agents(self) -> int: ...

    @property
    def action_space(self) -> Space: ...

    @property
    def observation_space(self) -> Space: ...

    def reset(self, *, key: PRNGKeyArray) -> MARLStateT: ...

    def step(self, state: MARLStateT, action: Array) -> MARLStateT: ...


AnyEnv = Env[Any] | MARLEnv[Any]
"""A single- or multi-agent environment (not batched): what code that serves both, such as evaluation, takes."""


@runtime_checkable
class MARLVectorEnv(Protocol[MARLStateT]):
    """`num_envs` multi-agent environments stepped together, with selective reset."""

    @property
    def num_agents(self) -> int: ...

    @property
    def action_space(self) -> Space: ...

    @property
    def observation_space(self) -> Space: ...

    @property
    def num_envs(self) -> int: ...

    def reset(
        self,
        *,
        key: PRNGKeyArray,
        state: MARLStateT | None = None,
        done: Bool[Array, " envs"] | None = None,
    ) -> MARLStateT: ...

    def step(self, state: MARLStateT, action: Array) -> MARLStateT: ...


def action_mask_of(state: Any) -> Array | None:
    """The legal-action mask a state carries: `agents.action_mask`, an `action_mask` field, or None."""
    if isinstance(state, MARLState):
        return state.agents.action_mask
    return getattr(state, "action_mask", None)


def is_key_dtype(dtype: Any) -> bool:
    """True for the dtype of a typed key array (`jax.random.key`)."""
    return jnp.issubdtype(dtype, jax.dtypes.prng_key)


def is_key(key: Any) -> bool:
    """True for a JAX PRNG key: a typed key array or a raw `uint32[..., 2]` one."""
    dtype = getattr(key, "dtype", None)
    if dtype is None:
        return False
    if is_key_dtype(dtype):
        return True
    return dtype == jnp.uint32 and getattr(key, "ndim", 0) >= 1 and key.shape[-1] == 2


def require_key(key: Any, where: str) -> None:
    """Raise a `TypeError` that names `where` unless `key` is a PRNG key."""
    if not is_key(key):
        got = type(key).__name__
        if hasattr(key, "dtype"):
            got = f"{got} of dtype {key.dtype} and shape {tuple(key.shape)}"
        raise TypeError(
            f"{where} expects a JAX PRNG key (jax.random.key(seed)), got {got}. "
            "Create one with jax.random.key(0) and split it with jax.random.split."
        )


def fold_in_key(key: PRNGKeyArray, data: int) -> PRNGKeyArray:
    """`jax.random.fold_in` for a key or a batch of keys: one new key each, at half the cost of a split."""
    fold = lambda k: jax.random.fold_in(k, data)  # noqa: E731
    for _ in range(key.ndim if is_key_dtype(key.dtype) else key.ndim - 1):
        fold = jax.vmap(fold)
    return fold(key)
