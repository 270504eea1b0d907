"""An env's states seen as per-agent-slot learning data (the protocol's one-liners, docs/protocol.md).

Single-agent states become one slot, so PPO, MAPPO and evaluation share one
code path: every per-slot field is `[*batch, num_agents, ...]`, where `batch`
is the shape of the episode-level `termination` (`[num_envs]` under `VmapWrapper`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float

from parallax.core import MARLState, State, action_mask_of


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class Slots:
    """What the actor and critic see of a state, one row per agent slot.

    `global_observation` is the env's `global_observation`, or all slots'
    observations concatenated where the env has none (single-agent: the observation).
    """

    observation: Float[Array, " *batch agents obs_dim"]
    global_observation: Float[Array, " *batch global_dim"]
    action_mask: Bool[Array, " *batch agents ..."] | None
    active: Bool[Array, " *batch agents"]
    reward: Float[Array, " *batch agents"]


def _flat_floats(observation: Any, leading: tuple[int, ...], where: str) -> Array:
    """`observation` as floats of shape `leading + (features,)`. An observation with fields (a dict or NamedTuple,
    e.g. every Jumanji env's) has each field flattened the same way and concatenated in the tree's order."""
    leaves = jax.tree_util.tree_leaves(observation)
    if not leaves or not all(hasattr(leaf, "shape") and hasattr(leaf, "dtype") for leaf in leaves):
        raise TypeError(
            f"{where}: the agents need observations made of arrays, got {type(observation).__name__}. "
            "Wrap the env so that its observations are arrays, or a dict or NamedTuple of arrays."
        )
    return jnp.concatenate([jnp.asarray(leaf, jnp.float32).reshape(leading + (-1,)) for leaf in leaves], axis=-1)


def read_slots(state: State | MARLState) -> Slots:
    """The per-slot view of a state (batched or not): observations flattened per slot (fields concatenated).

    Multi-agent states give `active = agents.active` and `reward = agents.reward`;
    single-agent states one always-active slot carrying `reward`.
    """
    batch = tuple(state.termination.shape)
    if isinstance(state, MARLState):
        agents = state.agents
        num_agents = agents.active.shape[-1]
        observation = _flat_floats(agents.observation, batch + (num_agents,), "read_slots")
        if state.global_observation is None:
            global_observation = observation.reshape(batch + (-1,))
        else:
            global_observation = _flat_floats(state.global_observation, batch, "read_slots")
        return Slots(
            observation=observation,
            global_observation=global_observation,
            action_mask=action_mask_of(state),
            active=agents.active,
            reward=agents.reward.astype(jnp.float32),
        )
    observation = _flat_floats(state.observation, batch + (1,), "read_slots")
    mask = action_mask_of(state)
    if mask is not None:
        mask = jnp.expand_dims(mask, len(batch))
    return Slots(
        observation=observation,
        global_observation=observation.reshape(batch + (-1,)),
        action_mask=mask,
        active=jnp.ones(batch + (1,), dtype=bool),
        reward=jnp.asarray(state.reward, jnp.float32).reshape(batch + (1,)),
    )


def slot_boundaries(next_state: State | MARLState, next_slots: Slots) -> tuple[Array, Array]:
    """Per-slot `(termination, truncation)` of the transition into `next_state`.

    A slot terminates (no bootstrap) when the episode terminates or the agent
    is inactive next (docs/protocol.md: bootstrap = active_t1 & ~termination_t1); it is
    truncated when the episode is cut short and it does not terminate.
    """
    episode_termination = jnp.expand_dims(next_state.termination, -1)
    episode_truncation = jnp.expand_dims(next_state.truncation, -1)
    termination = episode_termination | ~next_slots.active
    truncation = episode_truncation & ~termination
    return termination, truncation
