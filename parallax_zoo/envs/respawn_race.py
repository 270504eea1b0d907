"""RespawnRace-v0: agents run laps; one that finishes or falls sits out `respawn_delay` steps, then restarts."""

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
from parallax_zoo.envs.race import others_index


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class RespawnState:
    """Each agent's cell, and the steps left before an inactive agent comes back (0 while active)."""

    position: Int[Array, " num_agents"]
    respawn_timer: Int[Array, " num_agents"]


class RespawnRace:
    """`num_agents` agents run laps of `track_length` cells; the episode only ends by time limit.

    Action per slot: 1 moves one cell forward, 0 waits; an action outside
    0..1 is clipped into it (docs/protocol.md, "Out-of-range actions"). Each forward move
    falls with probability `fall_probability` (drawn from the state's key):
    the agent stays put and goes inactive. An agent that reaches the finish
    gets +1 and goes inactive too. An agent that goes inactive in state `t`
    is inactive in states `t .. t + respawn_delay - 1` and active again, at
    cell 0, in state `t + respawn_delay`. `termination` is always false; the
    registry's `max_steps` ends the episode (truncation).

    Inactive slots follow the protocol's rules (docs/protocol.md): their actions are ignored, their
    observations and rewards are zero, and a reward pairs with the active
    mask of the previous state, so a respawned agent's first state carries 0.

    Always moving forward is optimal (waiting only delays; the risk per move
    does not change), and `optimal_return(num_steps)` is its exact expected
    return per agent over an episode of `num_steps` steps: about 6.44 laps
    with the defaults and the registered 100 steps.

    Observation per slot: its own progress (cell / `track_length`), then the
    others' progress in slot order (0 for inactive ones); zeros while inactive.
    `global_observation`: everyone's progress, the active flags as 0/1, and
    the respawn timers as fractions of `respawn_delay`.
    """

    respawns: bool = True
    """Inactive slots become active again; the PettingZoo exports keep such agents until the episode ends."""

    def __init__(
        self,
        num_agents: Annotated[int, Range(ge=1)] = 3,
        track_length: Annotated[int, Range(ge=1)] = 10,
        fall_probability: Annotated[float, Range(ge=0, lt=1)] = 0.02,
        respawn_delay: Annotated[int, Range(ge=1)] = 3,
        cell_pixels: Annotated[int, Range(ge=1)] = 12,
    ):
        arguments = {
            "num_agents": num_agents,
            "track_length": track_length,
            "fall_probability": fall_probability,
            "respawn_delay": respawn_delay,
            "cell_pixels": cell_pixels,
        }
        check_arguments(RespawnRace, arguments, "RespawnRace")
        self.num_agents = num_agents
        self.track_length = track_length
        self.fall_probability = float(fall_probability)
        self.respawn_delay = respawn_delay
        self.cell_pixels = cell_pixels
        self.action_space = stack_space(spaces.Discrete(2), num_agents)
        self.observation_space = stack_space(spaces.Box(0.0, 1.0, (num_agents,)), num_agents)
        self._others = others_index(num_agents)

    def reset(self, key: PRNGKeyArray) -> MARLState:
        require_key(key, "RespawnRace.reset")
        zeros = jnp.zeros(self.num_agents, jnp.int32)
        race = RespawnState(position=zeros, respawn_timer=zeros)
        return self._state(race, jnp.zeros(self.num_agents, jnp.float32), jnp.int32(0), key)

    def step(self, state: MARLState, action: Array) -> MARLState:
        check_action(self.action_space, action, (), "RespawnRace.step")
        race: RespawnState = state.env_state
        acted = state.agents.active
        key, fall_key = jax.random.split(state.key)
        forward = (clip_action(self.action_space, action) == 1) & acted
        fell = forward & (jax.random.uniform(fall_key, (self.num_agents,)) < self.fall_probability)
        position = race.position + (forward & ~fell)
        finished = position >= self.track_length
        leaves = fell | finished
        respawn_timer = jnp.where(leaves, self.respawn_delay, jnp.maximum(race.respawn_timer - 1, 0))
        position = jnp.where(leaves, 0, position)
        reward = jnp.where(finished, 1.0, 0.0).astype(jnp.float32)
        return self._state(
            RespawnState(position=position, respawn_timer=respawn_timer), reward, state.step_count + 1, key
        )

    def __repr__(self) -> str:
        return (
            f"RespawnRace(num_agents={self.num_agents}, track_length={self.track_length}, "
            f"fall_probability={self.fall_probability}, respawn_delay={self.respawn_delay})"
        )

    def optimal_return(self, num_steps: int) -> float:
        """Expected laps per agent in `num_steps` steps when always moving forward, by exact dynamic programming."""
        laps_left = np.zeros((self.track_length, self.respawn_delay + 1))
        p, d = self.fall_probability, self.respawn_delay
        for _ in range(num_steps):
            previous = laps_left
            laps_left = np.empty_like(previous)
            laps_left[:, 1:] = previous[0, :-1]
            advance = np.concatenate([previous[1:, 0], [1.0 + previous[0, d]]])
            laps_left[:, 0] = p * previous[0, d] + (1.0 - p) * advance
        return float(laps_left[0, 0])

    def render(self, state: MARLState) -> rendering.Image:
        """The track as an RGB image, one lane per agent; agents sitting out are not drawn."""
        return rendering.race_track(state.env_state.position, state.agents.active, self.track_length, self.cell_pixels)

    def _state(self, race: RespawnState, reward: Array, step_count: Array, key: PRNGKeyArray) -> MARLState:
        active = race.respawn_timer == 0
        progress = jnp.where(active, race.position.astype(jnp.float32) / self.track_length, 0.0)
        view = jnp.concatenate([progress[:, None], progress[self._others]], axis=1)
        return MARLState(
            env_state=race,
            agents=Agents(
                observation=jnp.where(active[:, None], view, 0.0),
                active=active,
                reward=reward,
            ),
            termination=jnp.bool_(False),
            truncation=jnp.bool_(False),
            info={},
            step_count=step_count,
            key=key,
            global_observation=jnp.concatenate(
                [progress, active.astype(jnp.float32), race.respawn_timer.astype(jnp.float32) / self.respawn_delay]
            ),
        )
