"""Small envs from the protocol's examples (docs/protocol.md), used to test the protocol itself.

`GridWorld`, `MaskedGridWorld` and `Race` follow the seed's examples; the
`Broken*` variants each break exactly one rule so that `check_env` must catch it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, PRNGKeyArray

from parallax import Agents, MARLState, Space, State, spaces, stack_space


class GridState(NamedTuple):
    pos: Array
    goal: Array


class GridWorld:
    """The protocol's single-agent example: walk a 5x5 grid to a random goal."""

    action_space: Space = spaces.Discrete(4)
    observation_space: Space = spaces.Box(0.0, 4.0, (4,))

    def reset(self, *, key: PRNGKeyArray) -> State:
        key, goal_key = jax.random.split(key)
        pos = jnp.zeros(2, dtype=jnp.float32)
        goal = jax.random.randint(goal_key, (2,), minval=1, maxval=5).astype(jnp.float32)
        return State(
            env_state=GridState(pos=pos, goal=goal),
            observation=jnp.concatenate([pos, goal]),
            reward=jnp.float32(0.0),
            termination=jnp.bool_(False),
            truncation=jnp.bool_(False),
            info={},
            step_count=jnp.int32(0),
            key=key,
        )

    def step(self, state: State, action: Array) -> State:
        moves = jnp.array([[0, 1], [0, -1], [1, 0], [-1, 0]], dtype=jnp.float32)
        pos = jnp.clip(state.env_state.pos + moves[action], 0.0, 4.0)
        goal = state.env_state.goal
        return State(
            env_state=GridState(pos=pos, goal=goal),
            observation=jnp.concatenate([pos, goal]),
            reward=jnp.exp(-jnp.linalg.norm(pos - goal)),
            termination=jnp.all(pos == goal),
            truncation=jnp.bool_(False),
            info={},
            step_count=state.step_count + 1,
            key=state.key,
        )


@jax.tree_util.register_dataclass
@dataclass
class MaskedState(State):
    action_mask: Bool[Array, 4]


def _grid_mask(grid: GridState) -> Array:
    x, y = grid.pos[0], grid.pos[1]
    return jnp.stack([y < 4.0, y > 0.0, x < 4.0, x > 0.0])


class MaskedGridWorld(GridWorld):
    """The protocol's custom-field example: moves off the grid are masked."""

    def reset(self, *, key: PRNGKeyArray) -> MaskedState:
        state = super().reset(key=key)
        return MaskedState(**vars(state), action_mask=_grid_mask(state.env_state))

    def step(self, state: MaskedState, action: Array) -> MaskedState:
        inner = State(**{f.name: getattr(state, f.name) for f in dataclasses.fields(State)})
        state_out = super().step(inner, action)
        return MaskedState(**vars(state_out), action_mask=_grid_mask(state_out.env_state))


class Race:
    """The protocol's multi-agent example: three agents race to 10 and go inactive on arrival."""

    num_agents = 3
    action_space: Space = stack_space(spaces.Discrete(2), num_agents)
    observation_space: Space = stack_space(spaces.Box(0.0, 10.0, ()), num_agents)

    def reset(self, *, key: PRNGKeyArray) -> MARLState:
        positions = jnp.zeros(self.num_agents)
        return MARLState(
            env_state=positions,
            agents=Agents(
                observation=positions,
                active=jnp.ones(self.num_agents, dtype=bool),
                reward=jnp.zeros(self.num_agents),
            ),
            termination=jnp.bool_(False),
            truncation=jnp.bool_(False),
            info={},
            step_count=jnp.int32(0),
            key=key,
        )

    def step(self, state: MARLState, action: Array) -> MARLState:
        acted = state.agents.active
        positions = state.env_state + action * acted
        active = positions < 10.0
        finished_now = acted & ~active
        return MARLState(
            env_state=positions,
            agents=Agents(
                observation=jnp.where(active, positions, 0.0),
                active=active,
                reward=jnp.where(finished_now, 1.0, 0.0),
            ),
            termination=~active.any(),
            truncation=jnp.bool_(False),
            info={},
            step_count=state.step_count + 1,
            key=state.key,
        )


def small_grid(goal_row: int = 1) -> GridWorld:
    """A factory function as a registry entry point: a `GridWorld` that remembers `goal_row`."""
    env = GridWorld()
    env.goal_row = goal_row  # type: ignore[attr-defined]
    return env
