"""Race-v0: the protocol's multi-agent example, agents race to the finish and go inactive there."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Int, PRNGKeyArray

from parallax import Agents, MARLState, spaces, stack_space
from parallax.arguments import Range, check_arguments
from parallax.core import require_key
from parallax.spaces import check_action, clip_action
from parallax_zoo.envs import rendering


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class RaceState:
    """Each agent's cell on the track, `0 .. track_length`."""

    position: Int[Array, " num_agents"]


def others_index(num_agents: int) -> np.ndarray:
    """Row `i` lists every slot but `i`, in slot order: the layout of an agent's view of the others."""
    slots = np.arange(num_agents)
    return np.stack([np.delete(slots, i) for i in slots])


class Race:
    """`num_agents` agents start at cell 0 and race to cell `track_length`.

    Action per slot: 1 moves one cell forward, 0 waits; an action outside
    0..1 is clipped into it (docs/protocol.md, "Out-of-range actions"). An agent that reaches
    the finish goes inactive (rules 1-3, docs/protocol.md) and the episode terminates
    when every agent has finished.

    Reward per slot: +1 on the finishing step, minus `step_cost` on every step
    the agent was active for (the finishing one included), so speed matters.
    The optimal return is `1 - track_length * step_cost` per agent (0.9 with
    the defaults): move forward every step.

    Observation per slot: its own progress (cell / `track_length`), then the
    others' progress in slot order; zeros once the agent is inactive.
    `global_observation`: everyone's progress, then the active flags as 0/1.
    """

    def __init__(
        self,
        num_agents: Annotated[int, Range(ge=1)] = 3,
        track_length: Annotated[int, Range(ge=1)] = 10,
        step_cost: float = 0.01,
        cell_pixels: Annotated[int, Range(ge=1)] = 12,
    ):
        arguments = {
            "num_agents": num_agents,
            "track_length": track_length,
            "step_cost": step_cost,
            "cell_pixels": cell_pixels,
        }
        check_arguments(Race, arguments, "Race")
        self.num_agents = num_agents
        self.track_length = track_length
        self.step_cost = float(step_cost)
        self.cell_pixels = cell_pixels
        self.action_space = stack_space(spaces.Discrete(2), num_agents)
        self.observation_space = stack_space(spaces.Box(0.0, 1.0, (num_agents,)), num_agents)
        self._others = others_index(num_agents)

    def reset(self, key: PRNGKeyArray) -> MARLState:
        require_key(key, "Race.reset")
        race = RaceState(position=jnp.zeros(self.num_agents, jnp.int32))
        active = jnp.ones(self.num_agents, jnp.bool_)
        return self._state(race, active, jnp.zeros(self.num_agents, jnp.float32), jnp.int32(0), key)

    def step(self, state: MARLState, action: Array) -> MARLState:
        check_action(self.action_space, action, (), "Race.step")
        acted = state.agents.active
        forward = (clip_action(self.action_space, action) == 1) & acted
        position = jnp.minimum(state.env_state.position + forward, self.track_length)
        active = position < self.track_length
        finished_now = acted & ~active
        reward = jnp.where(finished_now, 1.0, 0.0) - self.step_cost * acted
        return self._state(
            RaceState(position=position), active, reward.astype(jnp.float32), state.step_count + 1, state.key
        )

    def __repr__(self) -> str:
        return f"Race(num_agents={self.num_agents}, track_length={self.track_length}, step_cost={self.step_cost})"

    def optimal_return(self) -> float:
        """Per-agent return of the optimal policy (always forward)."""
        return 1.0 - self.track_length * self.step_cost

    def render(self, state: MARLState) -> rendering.Image:
        """The track as an RGB image, one lane per agent; finished agents sit on the green finish column."""
        position = state.env_state.position
        visible = jnp.ones(self.num_agents, jnp.bool_)
        return rendering.race_track(position, visible, self.track_length, self.cell_pixels)

    def _state(self, race: RaceState, active: Array, reward: Array, step_count: Array, key: PRNGKeyArray) -> MARLState:
        progress = race.position.astype(jnp.float32) / self.track_length
        view = jnp.concatenate([progress[:, None], progress[self._others]], axis=1)
        return MARLState(
            env_state=race,
            agents=Agents(
                observation=jnp.where(active[:, None], view, 0.0),
                active=active,
                reward=reward,
            ),
            termination=~jnp.any(active),
            truncation=jnp.bool_(False),
            info={},
            step_count=step_count,
            key=key,
            global_observation=jnp.concatenate([progress, active.astype(jnp.float32)]),
        )
