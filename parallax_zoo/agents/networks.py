"""Policy and value networks (Flax linen MLPs) and the action head chosen by the action space.

`ActorCritic` is the static description of both networks: hashable, so it can
be a `jit` static argument or a pytree's metadata. Observations arrive per
agent slot, `[..., num_agents, obs_dim]`; single-agent envs have one slot.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float, PRNGKeyArray

from parallax.spaces import Box, Discrete, MultiBinary, MultiDiscrete, Space
from parallax_zoo.agents.distributions import Categorical, DiagGaussian, Distribution, MultiCategorical, mask_logits

Params = dict[str, Any]

ACTIVATIONS = {"tanh": nn.tanh, "relu": nn.relu, "gelu": nn.gelu, "silu": nn.silu}


@dataclass(frozen=True)
class ActionHead:
    """How one agent's action space maps to network outputs and back to env actions.

    `kind` is "categorical" (one `Discrete`), "multi_categorical" (`MultiDiscrete`,
    `MultiBinary` or a shaped `Discrete`; `nvec` per component) or "gaussian"
    (`Box`; flat actions clipped to `low`/`high` before they reach the env).
    """

    kind: Literal["categorical", "multi_categorical", "gaussian"]
    nvec: tuple[int, ...]
    shape: tuple[int, ...]
    dtype: str
    low: tuple[float, ...] = ()
    high: tuple[float, ...] = ()

    @property
    def logits_shape(self) -> tuple[int, ...]:
        """`(n,)` for one categorical choice, `(components, max n)` for several."""
        if self.kind == "categorical":
            return (self.nvec[0],)
        return (len(self.nvec), max(self.nvec))

    @property
    def flat_size(self) -> int:
        """Number of action components (1 for a single categorical choice)."""
        return int(np.prod(self.shape, dtype=np.int64))

    def to_env(self, action: Array) -> Array:
        """Turn network actions `[..., flat]` (or `[...]` for categorical) into env actions of `shape`."""
        if self.kind == "categorical":
            return action.astype(self.dtype)
        batch = action.shape[:-1]
        if self.kind == "gaussian":
            action = jnp.clip(action, jnp.asarray(self.low), jnp.asarray(self.high))
        return action.reshape(batch + self.shape).astype(self.dtype)

    def from_env(self, action: Array, batch_ndim: int) -> Array:
        """The inverse of `to_env`: env actions with `batch_ndim` leading axes to network actions."""
        if self.kind == "categorical":
            return action.astype(jnp.int32)
        flat = action.reshape(action.shape[:batch_ndim] + (self.flat_size,))
        return flat.astype(jnp.float32 if self.kind == "gaussian" else jnp.int32)


def categorical(head: ActionHead, logits: Array, action_mask: Array | None) -> Categorical | MultiCategorical:
    """The masked distribution over a discrete head's actions; logits shaped `[..., *head.logits_shape]`.

    For several components, the padding beyond each component's `nvec` is masked too.
    """
    if head.kind == "categorical":
        return Categorical(mask_logits(logits, action_mask))
    padding = jnp.arange(max(head.nvec)) < jnp.asarray(head.nvec)[:, None]
    mask = padding if action_mask is None else padding & action_mask
    return MultiCategorical(mask_logits(logits, mask))


def uniform(head: ActionHead, batch_shape: tuple[int, ...], action_mask: Array | None) -> Distribution:
    """The uniformly random player's distribution: uniform over legal actions, or N(0, 1) for `Box` actions."""
    if head.kind == "gaussian":
        zeros = jnp.zeros(batch_shape + (head.flat_size,))
        return DiagGaussian(zeros, zeros)
    return categorical(head, jnp.zeros(batch_shape + head.logits_shape), action_mask)


def agent_space(space: Space, num_agents: int | None) -> Space:
    """One agent's space: the stacked space of a multi-agent env without its leading `num_agents` axis."""
    if num_agents is None:
        return space
    if isinstance(space, Discrete):
        return Discrete(space.n, shape=space.shape[1:], dtype=space.dtype)
    if isinstance(space, Box):
        return Box(np.min(space.low, axis=0), np.max(space.high, axis=0), space.shape[1:], space.dtype)
    if isinstance(space, MultiDiscrete):
        return MultiDiscrete(np.max(space.nvec, axis=0), space.dtype)
    if isinstance(space, MultiBinary):
        return MultiBinary(space.shape[1:], space.dtype)
    raise TypeError(
        f"agent_space: cannot split {space!r} into per-agent spaces; "
        "multi-agent action spaces must be a stacked Discrete, Box, MultiDiscrete or MultiBinary (stack_space)."
    )


def action_head(space: Space) -> ActionHead:
    """The policy head for one agent's action space; a clear error for spaces PPO cannot act in."""
    if not isinstance(space, (Discrete, MultiDiscrete, MultiBinary, Box)):
        raise TypeError(
            f"No policy head for action space {space!r}: the agents support Discrete, MultiDiscrete, "
            "MultiBinary and float Box actions. Wrap the env to expose one of these."
        )
    dtype = jnp.dtype(space.dtype).name
    if isinstance(space, Discrete):
        if space.shape == ():
            return ActionHead("categorical", (space.n,), (), dtype)
        size = int(np.prod(space.shape))
        return ActionHead("multi_categorical", (space.n,) * size, tuple(space.shape), dtype)
    if isinstance(space, MultiDiscrete):
        return ActionHead("multi_categorical", tuple(int(n) for n in space.nvec.reshape(-1)), space.shape, dtype)
    if isinstance(space, MultiBinary):
        size = int(np.prod(space.shape))
        return ActionHead("multi_categorical", (2,) * size, space.shape, dtype)
    if isinstance(space, Box) and jnp.issubdtype(space.dtype, jnp.floating):
        low = tuple(float(x) for x in space.low.reshape(-1))
        high = tuple(float(x) for x in space.high.reshape(-1))
        return ActionHead("gaussian", (), space.shape, dtype, low, high)
    raise TypeError(f"No policy head for integer Box actions {space!r}: use Discrete or MultiDiscrete instead.")


def orthogonal(scale: float) -> Any:
    """Flax's orthogonal initializer, drawn one matrix at a time even under `jax.vmap`.

    Vmapping training over seeds would otherwise batch its QR factorisation,
    and XLA:CPU's batched QR can deadlock (seen with jax 0.10.2 on 2 cores).
    Each draw equals the unbatched one, so weights do not depend on batching.
    """
    base = nn.initializers.orthogonal(scale)

    def init(key: PRNGKeyArray, shape: Any, dtype: Any = jnp.float32) -> Array:
        @jax.custom_batching.custom_vmap
        def draw(key: PRNGKeyArray) -> Array:
            return base(key, shape, dtype)

        @draw.def_vmap
        def draw_each(axis_size: int, in_batched: list[bool], keys: PRNGKeyArray) -> tuple[Array, bool]:
            if not in_batched[0]:
                return draw(keys), False
            return jax.lax.map(draw, keys), True

        return draw(key)

    return init


@jax.custom_vjp
def row_matmul(x: Float[Array, "rows inputs"], kernel: Float[Array, "inputs outputs"]) -> Float[Array, "rows outputs"]:
    """`x @ kernel`, whose kernel gradient `x.T @ g` runs as a plain matmul over a materialised `x.T`.

    Left to itself, XLA:CPU folds the transpose into the dot, and a dot contracting the rows (the
    leading axis) of both operands runs slower than a copy plus a row-major one: PPO on CartPole
    trains 1.06x faster at one seed, 1.09x at 16 seeds vmapped and 1.24x at 256 envs with the
    transpose kept apart (docs/baselines.md, "CartPole beside PureJaxRL").
    """
    return x @ kernel


def _row_matmul_forward(x: Array, kernel: Array) -> tuple[Array, tuple[Array, Array]]:
    return x @ kernel, (x, kernel)


def _row_matmul_backward(saved: tuple[Array, Array], grad: Array) -> tuple[Array, Array]:
    x, kernel = saved
    x_transposed = jax.lax.optimization_barrier(x.T)  # the barrier keeps XLA from folding the transpose back
    return grad @ kernel.T, x_transposed @ grad


row_matmul.defvjp(_row_matmul_forward, _row_matmul_backward)


ROW_MATMUL_MAX_INPUTS = 128
"""`Dense` layers up to this many inputs use `row_matmul`; wider ones (256x256 networks) ran no faster with it."""


class Dense(nn.Module):
    """`flax.linen.Dense` with the same parameters and initial values (`kernel`, `bias` of zeros), its
    matmul `row_matmul` over the input's leading axes read as rows (up to `ROW_MATMUL_MAX_INPUTS` inputs)."""

    features: int
    kernel_init: Any = nn.initializers.lecun_normal()

    @nn.compact
    def __call__(self, x: Float[Array, "... inputs"]) -> Float[Array, "... features"]:
        kernel = self.param("kernel", self.kernel_init, (x.shape[-1], self.features), jnp.float32)
        bias = self.param("bias", nn.initializers.zeros, (self.features,), jnp.float32)
        rows, batch = as_rows(x)
        matmul = row_matmul if x.shape[-1] <= ROW_MATMUL_MAX_INPUTS else jnp.matmul
        return (matmul(rows, kernel) + bias).reshape(batch + (self.features,))


class MLP(nn.Module):
    """Dense layers with orthogonal init (gain sqrt 2), the usual PPO torso."""

    hidden_sizes: Sequence[int]
    activation: str = "tanh"

    @nn.compact
    def __call__(self, x: Array) -> Array:
        act = ACTIVATIONS[self.activation]
        for size in self.hidden_sizes:
            x = act(Dense(size, kernel_init=orthogonal(np.sqrt(2.0)))(x))
        return x


def as_rows(x: Array) -> tuple[Array, tuple[int, ...]]:
    """`x` as a matrix `[rows, features]`, and its leading shape to restore the outputs with.

    Dense layers on one batch axis keep every matmul, forward and backward, a plain
    2-D one; with several (a slot axis of size 1, say) XLA:CPU transposes the
    activations for each weight gradient.
    """
    return x.reshape((-1, x.shape[-1])), x.shape[:-1]


class Actor(nn.Module):
    """MLP torso and the action head's output layer; returns the action distribution."""

    head: ActionHead
    hidden_sizes: Sequence[int]
    activation: str = "tanh"

    @nn.compact
    def __call__(self, x: Array, action_mask: Array | None = None) -> Distribution:
        rows, batch = as_rows(x)
        x = MLP(self.hidden_sizes, self.activation)(rows)
        small = orthogonal(0.01)
        if self.head.kind != "gaussian":
            logits = Dense(int(np.prod(self.head.logits_shape)), kernel_init=small)(x)
            return categorical(self.head, logits.reshape(batch + self.head.logits_shape), action_mask)
        mean = Dense(self.head.flat_size, kernel_init=small)(x).reshape(batch + (self.head.flat_size,))
        log_std = self.param("log_std", nn.initializers.zeros, (self.head.flat_size,))
        return DiagGaussian(mean, jnp.broadcast_to(log_std, mean.shape))


class Critic(nn.Module):
    """MLP torso and one scalar value."""

    hidden_sizes: Sequence[int]
    activation: str = "tanh"

    @nn.compact
    def __call__(self, x: Array) -> Float[Array, ...]:
        rows, batch = as_rows(x)
        x = MLP(self.hidden_sizes, self.activation)(rows)
        return Dense(1, kernel_init=orthogonal(1.0))(x).reshape(batch)


@dataclass(frozen=True)
class ActorCritic:
    """Static description of the actor and critic for an env's agent slots.

    The actor is shared across slots and sees one slot's observation (plus
    the slot's one-hot id if `agent_ids`). The critic sees the slot's own
    observation, or with `centralized_critic` the env's global observation
    plus the slot's one-hot id, and returns one value per slot.
    """

    head: ActionHead
    num_agents: int
    obs_dim: int
    global_obs_dim: int
    observation_shape: tuple[int, ...]
    multi_agent: bool
    hidden_sizes: tuple[int, ...] = (64, 64)
    activation: str = "tanh"
    agent_ids: bool = False
    centralized_critic: bool = False

    @property
    def actor(self) -> Actor:
        return Actor(self.head, self.hidden_sizes, self.activation)

    @property
    def critic(self) -> Critic:
        return Critic(self.hidden_sizes, self.activation)

    def init(self, key: PRNGKeyArray) -> Params:
        """Fresh parameters: `{"actor": ..., "critic": ...}`."""
        actor_key, critic_key = jax.random.split(key)
        observation = jnp.zeros((self.num_agents, self.obs_dim))
        global_observation = jnp.zeros((self.global_obs_dim,))
        actor = self.actor.init(actor_key, self._actor_input(observation))
        critic = self.critic.init(critic_key, self._critic_input(observation, global_observation))
        return {"actor": actor["params"], "critic": critic["params"]}

    def distribution(self, params: Params, observation: Array, action_mask: Array | None = None) -> Distribution:
        """The policy at observations `[..., num_agents, obs_dim]`; masks `[..., num_agents, n]`."""
        inputs = self._actor_input(observation)
        return cast(Distribution, self.actor.apply({"params": params["actor"]}, inputs, action_mask))

    def value(self, params: Params, observation: Array, global_observation: Array) -> Float[Array, "... num_agents"]:
        """Per-slot values from observations `[..., num_agents, obs_dim]` and global ones `[..., global_dim]`."""
        inputs = self._critic_input(observation, global_observation)
        return cast(Array, self.critic.apply({"params": params["critic"]}, inputs))

    def env_action(self, action: Array) -> Array:
        """Slot actions `[*batch, num_agents, ...]` to the env's action (no slot axis for single-agent envs)."""
        env_action = self.head.to_env(action)
        if self.multi_agent:
            return env_action
        return jnp.squeeze(env_action, axis=-1 - len(self.head.shape))

    def _slot_ids(self, batch_shape: tuple[int, ...]) -> Array:
        return jnp.broadcast_to(jnp.eye(self.num_agents), batch_shape + (self.num_agents, self.num_agents))

    def _actor_input(self, observation: Array) -> Array:
        if not self.agent_ids:
            return observation
        return jnp.concatenate([observation, self._slot_ids(observation.shape[:-2])], axis=-1)

    def _critic_input(self, observation: Array, global_observation: Array) -> Array:
        if not self.centralized_critic:
            return self._actor_input(observation)
        batch_shape = observation.shape[:-2]
        slots_shape = batch_shape + (self.num_agents, self.global_obs_dim)
        shared = jnp.broadcast_to(global_observation[..., None, :], slots_shape)
        return jnp.concatenate([shared, self._slot_ids(batch_shape)], axis=-1)
