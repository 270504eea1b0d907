"""TeamRace-v0: two teams race on one track and may trip each other; zero-sum, +1/-1 per team."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, cast

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Int, PRNGKeyArray

from parallax import Agents, MARLState, spaces, stack_space
from parallax.arguments import Range, check_arguments
from parallax.core import require_key
from parallax.spaces import check_action, clip_action
from parallax_zoo.envs import rendering
from parallax_zoo.envs.race import RaceState

WAIT, RUN, TRIP = 0, 1, 2
"""The three actions of every slot."""

TEAM_COLORS = np.asarray([rendering.BLUE, rendering.BLUE, rendering.ORANGE, rendering.ORANGE], np.uint8)


@jax.tree_util.register_dataclass
@dataclass(kw_only=True)
class TeamAgents(Agents):
    """`Agents` plus each slot's team, 0 or 1 (docs/protocol.md: teams are environment metadata on the slots)."""

    team: Int[Array, " num_agents"]


class TeamRace:
    """Two teams of two (slots 0-1 are team 0, slots 2-3 team 1) race from cell 0 to `track_length`.

    Actions per slot: 0 waits, 1 runs one cell forward, 2 trips: every
    opponent within `reach` cells of the tripper (before this step's moves)
    is knocked back `knockback` cells (not below 0). Moves are simultaneous:
    a runner who is tripped ends at `cell + 1 - knockback`. An action outside
    0..2 is clipped into it (docs/protocol.md, "Out-of-range actions").

    The first team with a member on the finish wins: +1 in both of its slots,
    -1 in both of the other team's, on that step, and the episode terminates.
    Both teams finishing on the same step is a draw (0 everywhere); so is the
    time limit. All four slots stay active for the whole game.

    Interaction matters: two naive teams (`naive_action`: always run) draw,
    but a team whose first member trips whenever an opponent is in reach
    (`blocking_action`) pins a naive team at cell 0 and wins in
    `track_length` steps, the best return (+1) against it.

    Observation per slot, as progress (cell / `track_length`): its own, its
    teammate's, the two opponents' in slot order; then 0 or 1, its rank in
    its team, so that a shared policy can give teammates different roles.
    `global_observation`: the four slots' progress in slot order.
    """

    num_agents = 4
    team_size = 2

    def __init__(
        self,
        track_length: Annotated[int, Range(ge=1)] = 10,
        knockback: Annotated[int, Range(ge=0)] = 3,
        reach: Annotated[int, Range(ge=0)] = 1,
        cell_pixels: Annotated[int, Range(ge=1)] = 12,
    ):
        arguments = {"track_length": track_length, "knockback": knockback, "reach": reach, "cell_pixels": cell_pixels}
        check_arguments(TeamRace, arguments, "TeamRace")
        self.track_length = track_length
        self.knockback = knockback
        self.reach = reach
        self.cell_pixels = cell_pixels
        self.team = np.repeat(np.arange(2), self.team_size)
        self.action_space = stack_space(spaces.Discrete(3), self.num_agents)
        self.observation_space = stack_space(spaces.Box(0.0, 1.0, (5,)), self.num_agents)
        self._view = _egocentric_order(self.team)
        self._rank = np.tile(np.arange(self.team_size), 2).astype(np.float32)
        self._opponents = self.team[:, None] != self.team[None, :]

    def reset(self, key: PRNGKeyArray) -> MARLState:
        require_key(key, "TeamRace.reset")
        race = RaceState(position=jnp.zeros(self.num_agents, jnp.int32))
        return self._state(race, jnp.zeros(self.num_agents, jnp.float32), jnp.bool_(False), jnp.int32(0), key)

    def step(self, state: MARLState, action: Array) -> MARLState:
        check_action(self.action_space, action, (), "TeamRace.step")
        action = clip_action(self.action_space, action)
        position = state.env_state.position
        within_reach = jnp.abs(position[:, None] - position[None, :]) <= self.reach
        tripped = jnp.any((action == TRIP)[:, None] & self._opponents & within_reach, axis=0)
        moved = position + (action == RUN) - self.knockback * tripped
        position = jnp.clip(moved, 0, self.track_length)
        team_home = jnp.any((position >= self.track_length).reshape(2, self.team_size), axis=1)
        team_0_score = team_home[0].astype(jnp.float32) - team_home[1].astype(jnp.float32)
        reward = jnp.where(jnp.asarray(self.team) == 0, team_0_score, -team_0_score)
        return self._state(RaceState(position=position), reward, jnp.any(team_home), state.step_count + 1, state.key)

    def __repr__(self) -> str:
        return f"TeamRace(track_length={self.track_length}, knockback={self.knockback}, reach={self.reach})"

    def render(self, state: MARLState) -> rendering.Image:
        """The track as an RGB image, one lane per slot; team 0 blue, team 1 orange."""
        position = state.env_state.position
        visible = jnp.ones(self.num_agents, jnp.bool_)
        return rendering.race_track(position, visible, self.track_length, self.cell_pixels, TEAM_COLORS)

    def _state(
        self, race: RaceState, reward: Array, termination: Array, step_count: Array, key: PRNGKeyArray
    ) -> MARLState:
        progress = race.position.astype(jnp.float32) / self.track_length
        view = jnp.concatenate([progress[self._view], jnp.asarray(self._rank)[:, None]], axis=1)
        return MARLState(
            env_state=race,
            agents=TeamAgents(
                observation=view,
                active=jnp.ones(self.num_agents, jnp.bool_),
                reward=reward,
                team=jnp.asarray(self.team, jnp.int32),
            ),
            termination=termination,
            truncation=jnp.bool_(False),
            info={},
            step_count=step_count,
            key=key,
            global_observation=progress,
        )


def _egocentric_order(team: np.ndarray) -> np.ndarray:
    """Row `i`: slot `i`, its teammate, then the opponents in slot order."""
    slots = np.arange(team.size)
    rows = []
    for i in slots:
        mates = slots[(team == team[i]) & (slots != i)]
        rows.append(np.concatenate([[i], mates, slots[team != team[i]]]))
    return np.stack(rows)


def naive_action(state: MARLState) -> Array:
    """The naive scripted policy: every slot always runs. Works on one state or a batch."""
    return naive_policy(state.agents.observation)


def naive_policy(observation: Array) -> Array:
    """The naive team as a rule on per-slot observations `[*batch, agents, 5]`: every slot runs.

    registry.yaml names it as TeamRace's `naive` opponent, for evaluation and for training against it.
    """
    return jnp.full(observation.shape[:-1], RUN, jnp.int32)


def blocking_action(state: MARLState, reach: int = 1) -> Array:
    """A scripted team tactic: each team's first member trips while an opponent is within `reach`, else runs.

    The second member always runs. Works on one state or a batch.
    """
    position = state.env_state.position
    team = cast(TeamAgents, state.agents).team
    near = jnp.abs(position[..., :, None] - position[..., None, :]) <= reach
    opponent_near = jnp.any(near & (team[..., :, None] != team[..., None, :]), axis=-1)
    first_member = jnp.asarray(np.tile([True, False], 2))
    return jnp.where(first_member & opponent_near, TRIP, RUN).astype(jnp.int32)
