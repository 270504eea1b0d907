"""The recurrent actor-critic: a dense embedding, a GRU, then the actor and critic heads (docs/baselines.md).

For envs whose observation is partial (the bsuite memory tasks, XLand-MiniGrid), the policy keeps
a hidden state per agent slot, `Memory`, carried from step to step by the rollout and set back to
zeros before the first step of every episode. `RecurrentActorCritic` is an `ActorCritic` with a GRU
between the embedding and the heads, so `Policy`, checkpoints and evaluation take it as they take
the feedforward one. The GRU is flax's `GRUCell` (the same gates, initialisation and parameter
count) with its three gates' weights stored side by side, so a step is two matmuls rather than six,
and the replay of a sequence in training projects every step's input in one matmul before the scan.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Float, PRNGKeyArray

from parallax_zoo.agents.distributions import Distribution
from parallax_zoo.agents.networks import ACTIVATIONS, Actor, ActorCritic, Critic, Params, orthogonal


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class Memory:
    """A recurrent policy's hidden state per env slot, and which envs' episodes ended on the step just taken.

    The rollout resets `hidden` to zeros where `episode_ended` before acting again (`at_step_start`),
    exactly as the training replay does with the trajectory's `episode_start`.
    """

    hidden: Any
    """`[*batch, agents, hidden]`, or a tuple of them where several players share the slots (`players.Matchup`)."""
    episode_ended: Bool[Array, " *batch"]

    def at_step_start(self) -> Any:
        """The hidden state the next step starts from: zeros in envs whose episode just ended."""
        return jax.tree_util.tree_map(lambda hidden: reset_where(hidden, self.episode_ended), self.hidden)


def reset_where(hidden: Array, episode_start: Array) -> Array:
    """`hidden` `[*batch, agents, h]` with zeros where `episode_start` `[*batch]` is true."""
    return jnp.where(episode_start[..., None, None], 0.0, hidden)


def gru_init(key: PRNGKeyArray, inputs: int, features: int) -> Params:
    """Fresh GRU weights as `nn.GRUCell` draws them: input kernels lecun-normal, each gate's recurrent kernel
    orthogonal, biases zero; the gates (reset, update, candidate) side by side along the last axis."""
    input_key, *gate_keys = jax.random.split(key, 4)
    input_kernel = nn.initializers.lecun_normal()(input_key, (inputs, 3 * features))
    recurrent = orthogonal(1.0)
    return {
        "input_kernel": input_kernel,
        "input_bias": jnp.zeros((3 * features,)),
        "recurrent_kernel": jnp.concatenate([recurrent(k, (features, features)) for k in gate_keys], axis=-1),
        "candidate_bias": jnp.zeros((features,)),
    }


def gru_step(params: Params, hidden: Array, projected: Array) -> Array:
    """One GRU step from `projected = x @ input_kernel + input_bias`, flax `GRUCell`'s equations:
    r, z = sigmoid(x_r + h W_r), sigmoid(x_z + h W_z); n = tanh(x_n + r (h W_n + b_n)); h' = (1 - z) n + z h."""
    features = hidden.shape[-1]
    recurrent = hidden @ params["recurrent_kernel"]
    reset = jax.nn.sigmoid(projected[..., :features] + recurrent[..., :features])
    update = jax.nn.sigmoid(projected[..., features : 2 * features] + recurrent[..., features : 2 * features])
    candidate = jnp.tanh(
        projected[..., 2 * features :] + reset * (recurrent[..., 2 * features :] + params["candidate_bias"])
    )
    return (1.0 - update) * candidate + update * hidden


class Embedding(nn.Module):
    """The dense layer in front of the GRU (orthogonal init, gain sqrt 2), on one batch axis."""

    features: int
    activation: str = "tanh"

    @nn.compact
    def __call__(self, x: Array) -> Array:
        rows = x.reshape((-1, x.shape[-1]))
        out = ACTIVATIONS[self.activation](nn.Dense(self.features, kernel_init=orthogonal(np.sqrt(2.0)))(rows))
        return out.reshape(x.shape[:-1] + (self.features,))


@dataclass(frozen=True)
class RecurrentActorCritic(ActorCritic):
    """An `ActorCritic` whose actor and critic share a dense embedding (`hidden_sizes[0]` wide) and a GRU of
    `rnn_hidden` units; each head then has the layers `hidden_sizes[1:]`. Values are per slot, from the GRU's
    output (no centralised critic). `distribution` and `value` without a hidden state act as at an episode's
    first step; `step` and `replay` carry it."""

    rnn_hidden: int = 128

    @property
    def head_sizes(self) -> tuple[int, ...]:
        return tuple(self.hidden_sizes[1:])

    @property
    def actor(self) -> Actor:
        return Actor(self.head, self.head_sizes, self.activation)

    @property
    def critic(self) -> Critic:
        return Critic(self.head_sizes, self.activation)

    @property
    def embedding(self) -> Embedding:
        return Embedding(self.hidden_sizes[0], self.activation)

    def init(self, key: PRNGKeyArray) -> Params:
        """Fresh parameters: `{"embedding", "gru", "actor", "critic"}`."""
        embedding_key, gru_key, actor_key, critic_key = jax.random.split(key, 4)
        observation = self._actor_input(jnp.zeros((self.num_agents, self.obs_dim)))
        features = jnp.zeros((self.num_agents, self.rnn_hidden))
        return {
            "embedding": self.embedding.init(embedding_key, observation)["params"],
            "gru": gru_init(gru_key, self.hidden_sizes[0], self.rnn_hidden),
            "actor": self.actor.init(actor_key, features)["params"],
            "critic": self.critic.init(critic_key, features)["params"],
        }

    def initial_hidden(self, batch_shape: Sequence[int]) -> Float[Array, " *batch agents hidden"]:
        """Zeros: the hidden state before an episode's first step."""
        return jnp.zeros((*batch_shape, self.num_agents, self.rnn_hidden))

    def project(self, params: Params, observation: Array) -> Array:
        """The GRU's input projection of observations `[..., num_agents, obs_dim]` (any leading axes at once)."""
        embedded = cast(Array, self.embedding.apply({"params": params["embedding"]}, self._actor_input(observation)))
        return embedded @ params["gru"]["input_kernel"] + params["gru"]["input_bias"]

    def heads(self, params: Params, features: Array, action_mask: Array | None) -> tuple[Distribution, Array]:
        """The action distribution and value from the GRU's outputs `[..., num_agents, rnn_hidden]`."""
        dist = cast(Distribution, self.actor.apply({"params": params["actor"]}, features, action_mask))
        value = cast(Array, self.critic.apply({"params": params["critic"]}, features))
        return dist, value

    def step(
        self, params: Params, hidden: Array, observation: Array, action_mask: Array | None = None
    ) -> tuple[Array, Distribution, Array]:
        """One step from `hidden` `[*batch, num_agents, rnn_hidden]`: the new hidden state, the policy and the value."""
        hidden = gru_step(params["gru"], hidden, self.project(params, observation))
        dist, value = self.heads(params, hidden, action_mask)
        return hidden, dist, value

    def replay(
        self, params: Params, hidden: Array, observation: Array, episode_start: Array, action_mask: Array | None
    ) -> tuple[Distribution, Array]:
        """The policy and values along sequences `[T, *batch, ...]` from the hidden state before their first step,
        reset to zeros before every step where `episode_start` `[T, *batch]` is true."""
        projected = self.project(params, observation)

        def advance(hidden: Array, step: tuple[Array, Array]) -> tuple[Array, Array]:
            projected_t, start_t = step
            hidden = gru_step(params["gru"], reset_where(hidden, start_t), projected_t)
            return hidden, hidden

        _, features = jax.lax.scan(advance, hidden, (projected, episode_start))
        return self.heads(params, features, action_mask)

    def distribution(self, params: Params, observation: Array, action_mask: Array | None = None) -> Distribution:
        """The policy at observations `[..., num_agents, obs_dim]` as at an episode's first step (zero hidden state)."""
        return self.step(params, self.initial_hidden(observation.shape[:-2]), observation, action_mask)[1]

    def value(self, params: Params, observation: Array, global_observation: Array) -> Float[Array, "... num_agents"]:
        """Per-slot values as at an episode's first step (zero hidden state); the global observation is unused."""
        return self.step(params, self.initial_hidden(observation.shape[:-2]), observation)[2]


def recurrent_actor_critic(model: ActorCritic, rnn_hidden: int) -> RecurrentActorCritic:
    """The recurrent networks for the env `model` was sized for (`policy.actor_critic_for`)."""
    fields: dict[str, Any] = {name: getattr(model, name) for name in ActorCritic.__dataclass_fields__}
    return RecurrentActorCritic(**fields, rnn_hidden=rnn_hidden)
