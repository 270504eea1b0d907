"""A trained policy: the networks' static description, their params and the observation normaliser.

`Policy` is what training returns, checkpoints save, and evaluation and the
CLI act with. It is a pytree (params and normaliser are leaves, the network
description is static), so it can be passed into jitted code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float, PRNGKeyArray

from parallax.core import AnyEnv, MARLState
from parallax.wrappers import VmapWrapper
from parallax_zoo.agents.distributions import Distribution
from parallax_zoo.agents.networks import ActorCritic, Params, action_head, agent_space
from parallax_zoo.agents.normalizer import ObsNormalizer
from parallax_zoo.agents.recurrent import Memory, RecurrentActorCritic
from parallax_zoo.agents.slots import Slots, read_slots


def actor_critic_for(
    env: AnyEnv,
    hidden_sizes: tuple[int, ...] = (64, 64),
    activation: str = "tanh",
    agent_ids: bool = False,
    centralized_critic: bool = False,
) -> ActorCritic:
    """The networks' description for `env`, sized from its spaces and one abstract reset (nothing runs)."""
    state = jax.eval_shape(lambda key: VmapWrapper(env, 1).reset(key=key), jax.random.key(0))
    slots = jax.eval_shape(read_slots, state)
    multi_agent = isinstance(state, MARLState)
    num_agents = slots.active.shape[-1]
    return ActorCritic(
        head=action_head(agent_space(env.action_space, num_agents if multi_agent else None)),
        num_agents=num_agents,
        obs_dim=slots.observation.shape[-1],
        global_obs_dim=slots.global_observation.shape[-1],
        observation_shape=_observation_shape(state, slots, multi_agent),
        multi_agent=multi_agent,
        hidden_sizes=tuple(hidden_sizes),
        activation=activation,
        agent_ids=agent_ids,
        centralized_critic=centralized_critic,
    )


def _observation_shape(state: Any, slots: Slots, multi_agent: bool) -> tuple[int, ...]:
    """The observation shape of one env of `state` (a batch of one); an observation with fields is read flat, its
    fields concatenated per slot as `read_slots` does, so its shape is (agents, features), or (features,)."""
    observation = state.agents.observation if multi_agent else state.observation
    if hasattr(observation, "shape"):
        return tuple(observation.shape[1:])
    return tuple(slots.observation.shape[1:]) if multi_agent else tuple(slots.observation.shape[2:])


@dataclass(frozen=True)
class Policy:
    """Networks, params and (optional) observation normaliser: everything needed to act."""

    model: ActorCritic
    params: Params
    normalizer: ObsNormalizer | None = None

    @property
    def num_parameters(self) -> int:
        """Scalars in the actor's and critic's parameters together."""
        return sum(int(leaf.size) for leaf in jax.tree_util.tree_leaves(self.params))

    def __repr__(self) -> str:
        """The architecture and parameter count, not the arrays."""
        model = self.model
        hidden = "x".join(map(str, model.hidden_sizes))
        critic = "centralized (global observation)" if model.centralized_critic else "per slot"
        torso = (
            f"MLP {hidden}"
            if not isinstance(model, RecurrentActorCritic)
            else (
                f"embedding {model.hidden_sizes[0]}, GRU {model.rnn_hidden}, heads "
                f"{hidden.partition('x')[2] or 'linear'}"
            )
        )
        return (
            f"Policy({model.head.kind} actor and {critic} critic, {torso} {model.activation}; "
            f"{model.num_agents} slot{'s' if model.num_agents > 1 else ''}, observation {model.observation_shape}"
            f"{', agent ids' if model.agent_ids else ''}; {self.num_parameters:,} parameters"
            f"{', observation normaliser' if self.normalizer is not None else ''})"
        )

    def check_fits(self, env: AnyEnv) -> None:
        """Raise `ValueError` unless this policy's networks fit `env`, listing the expected and the found shapes."""
        expected = actor_critic_for(env)
        fields = ("num_agents", "observation_shape", "obs_dim", "head")
        found = {name: getattr(self.model, name) for name in fields}
        wanted = {name: getattr(expected, name) for name in fields}
        wrong = [name for name in fields if found[name] != wanted[name]]
        if wrong:
            lines = "; ".join(f"{name}: the env needs {wanted[name]}, the policy has {found[name]}" for name in wrong)
            raise ValueError(f"this policy does not fit {env!r}: {lines}. Load a policy trained on this env.")

    def _observation(self, slots: Slots) -> Array:
        if self.normalizer is None:
            return slots.observation
        return self.normalizer.observation.normalize(slots.observation)

    def _global_observation(self, slots: Slots) -> Array:
        if self.normalizer is None:
            return slots.global_observation
        return self.normalizer.global_observation.normalize(slots.global_observation)

    def distribution(self, slots: Slots) -> Distribution:
        """The action distribution for every slot."""
        return self.model.distribution(self.params, self._observation(slots), slots.action_mask)

    def value(self, slots: Slots) -> Float[Array, " *batch agents"]:
        """The critic's value for every slot."""
        return self.model.value(self.params, self._observation(slots), self._global_observation(slots))

    def act_slots(self, slots: Slots, key: PRNGKeyArray, greedy: bool = False) -> tuple[Array, Array, Array]:
        """Slot actions, their log-probabilities and the slots' values (the rollout's step)."""
        dist = self.distribution(slots)
        action = dist.mode() if greedy else dist.sample(key)
        return action, dist.log_prob(action), self.value(slots)

    def env_action(self, action: Array) -> Array:
        """Slot actions to the env's action."""
        return self.model.env_action(action)

    @property
    def recurrent(self) -> bool:
        """Whether the policy keeps a hidden state from step to step (`RecurrentActorCritic`)."""
        return isinstance(self.model, RecurrentActorCritic)

    def _recurrent_model(self) -> RecurrentActorCritic:
        if not isinstance(self.model, RecurrentActorCritic):
            raise TypeError("this policy is feedforward: it keeps no hidden state (train with policy=recurrent)")
        return self.model

    def initial_memory(self, batch_shape: tuple[int, ...]) -> Memory:
        """The memory before every env's first step: zero hidden state per slot."""
        return Memory(self._recurrent_model().initial_hidden(batch_shape), jnp.zeros(batch_shape, dtype=bool))

    def act_memory(
        self, hidden: Array, slots: Slots, key: PRNGKeyArray, greedy: bool = False
    ) -> tuple[Array, Array, Array, Array]:
        """A recurrent step from `hidden` (already reset where an episode starts): the new hidden state,
        slot actions, their log-probabilities and the slots' values."""
        model = self._recurrent_model()
        hidden, dist, value = model.step(self.params, hidden, self._observation(slots), slots.action_mask)
        action = dist.mode() if greedy else dist.sample(key)
        return hidden, action, dist.log_prob(action), value

    def value_memory(self, hidden: Array, slots: Slots) -> Array:
        """The slots' values one step on from `hidden` (the hidden state itself is not kept)."""
        return self._recurrent_model().step(self.params, hidden, self._observation(slots))[2]

    def replay(self, hidden: Array, slots: Slots, episode_start: Array | None) -> tuple[Distribution, Array]:
        """The policy and values along a trajectory's slots `[T, *batch, ...]` from the hidden state before its
        first step, reset where `episode_start` `[T, *batch]` (`RecurrentActorCritic.replay`)."""
        model = self._recurrent_model()
        if episode_start is None:
            raise ValueError("Policy.replay: the trajectory has no episode_start; collect it with collect_recurrent")
        return model.replay(self.params, hidden, self._observation(slots), episode_start, slots.action_mask)

    def act(
        self,
        observation: Array,
        key: PRNGKeyArray | None = None,
        action_mask: Array | None = None,
        greedy: bool = True,
    ) -> Array:
        """The env action for an observation shaped like the env's (any leading batch axes).

        `action_mask` is the env's mask (per agent for multi-agent envs); sampling
        (`greedy=False`) needs a `key`.
        """
        if self.recurrent:
            raise TypeError(
                "Policy.act: this policy is recurrent; call policy.step(observation, hidden) and pass back "
                "the hidden state it returns (hidden=None at an episode's first step)."
            )
        if not greedy and key is None:
            raise ValueError("Policy.act: sampling (greedy=False) needs key=jax.random.key(...)")
        slots = observation_slots(self.model, observation, action_mask, "Policy.act")
        dist = self.distribution(slots)
        action = dist.mode() if greedy or key is None else dist.sample(key)
        return self.env_action(action)

    def step(
        self,
        observation: Array,
        hidden: Array | None = None,
        key: PRNGKeyArray | None = None,
        action_mask: Array | None = None,
        greedy: bool = True,
    ) -> tuple[Array, Array]:
        """A recurrent policy's `act`: the env action and the new hidden state, from the previous step's hidden
        state (`None` at an episode's first step: zeros). Pass the hidden state back on the episode's next step."""
        model = self._recurrent_model()
        slots = observation_slots(self.model, observation, action_mask, "Policy.step")
        if hidden is None:
            hidden = model.initial_hidden(slots.active.shape[:-1])
        if not greedy and key is None:
            raise ValueError("Policy.step: sampling (greedy=False) needs key=jax.random.key(...)")
        hidden, dist, _ = model.step(self.params, hidden, self._observation(slots), slots.action_mask)
        return self.env_action(dist.mode() if greedy or key is None else dist.sample(key)), hidden


def observation_slots(model: ActorCritic, observation: Array, action_mask: Array | None, caller: str) -> Slots:
    """The slots of an observation shaped like the env's (any leading batch axes), as `model` reads them.

    The global observation is left as the slots' observations side by side: acting needs no critic.
    """
    observation = jnp.asarray(observation, jnp.float32)
    shape = model.observation_shape
    if observation.shape[observation.ndim - len(shape) :] != shape:
        raise ValueError(
            f"{caller}: expected observations ending in shape {shape} (the env's observation shape), "
            f"got shape {observation.shape}."
        )
    batch = observation.shape[: observation.ndim - len(shape)]
    slots_observation = observation.reshape(batch + (model.num_agents, model.obs_dim))
    if action_mask is not None and not model.multi_agent:
        action_mask = jnp.expand_dims(jnp.asarray(action_mask), len(batch))
    return Slots(
        observation=slots_observation,
        global_observation=slots_observation.reshape(batch + (-1,)),
        action_mask=action_mask,
        active=jnp.ones(batch + (model.num_agents,), dtype=bool),
        reward=jnp.zeros(batch + (model.num_agents,)),
    )


jax.tree_util.register_dataclass(Policy, data_fields=["params", "normalizer"], meta_fields=["model"])
