"""GridWorld-v0 and GridWorld-Masked-v0: the protocol's single-agent example, with a reward fit for RL."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Annotated

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Float, Int, PRNGKeyArray

from parallax import State, spaces
from parallax.arguments import Range, check_arguments
from parallax.core import require_key
from parallax.spaces import check_action, clip_action
from parallax_zoo.envs import rendering

MOVES = np.array([[0, 1], [0, -1], [1, 0], [-1, 0]], dtype=np.int32)
"""Action `a` adds `MOVES[a]` to `(x, y)`: 0 up (+y), 1 down (-y), 2 right (+x), 3 left (-x), as in the protocol's
example."""


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class GridState:
    """The agent's cell and the goal's cell, as integer `(x, y)` pairs."""

    position: Int[Array, 2]
    goal: Int[Array, 2]


@jax.tree_util.register_dataclass
@dataclass(kw_only=True)
class MaskedState(State):
    """A `State` that also carries the legal moves (the protocol's custom-field example)."""

    action_mask: Bool[Array, 4]


class GridWorld:
    """Walk from `(0, 0)` to a random goal on a `size x size` grid (the protocol's example).

    Observation: `[x, y, goal_x, goal_y]` as float32. The goal is uniform over
    the cells with both coordinates in `1 .. size - 1`. A move off the grid
    leaves the agent where it is. The episode terminates on the goal. An
    action outside `0 .. 3` is clipped into it (below 0 moves up, above 3
    moves left; docs/protocol.md, "Out-of-range actions").

    Reward: the protocol's example pays `exp(-distance)` on every step, which makes loitering
    next to the goal worth more than reaching it. Here the same quantity is
    used as a potential: each step pays `exp(-d') - exp(-d) - step_cost`,
    where `d` and `d'` are the Euclidean distances to the goal before and
    after the move. The shaping part telescopes, so an episode that reaches
    the goal in `n` steps returns `1 - exp(-d0) - n * step_cost`, and the
    optimal return for goal `g` is `1 - exp(-|g|_2) - step_cost * |g|_1`
    (any shortest path). `optimal_return()` averages it over the goals:
    about 0.904 with the defaults.
    """

    def __init__(
        self,
        size: Annotated[int, Range(ge=2)] = 5,
        step_cost: Annotated[float, Range(ge=0)] = 0.01,
        cell_pixels: Annotated[int, Range(ge=1)] = 16,
    ):
        """`size` is at least 2 so that a goal differs from the start."""
        check_arguments(
            GridWorld, {"size": size, "step_cost": step_cost, "cell_pixels": cell_pixels}, type(self).__name__
        )
        self.size = size
        self.step_cost = float(step_cost)
        self.cell_pixels = cell_pixels
        self.action_space = spaces.Discrete(4)
        self.observation_space = spaces.Box(0.0, float(size - 1), (4,))

    def reset(self, key: PRNGKeyArray) -> State:
        require_key(key, f"{type(self).__name__}.reset")
        key, goal_key = jax.random.split(key)
        grid = GridState(
            position=jnp.zeros(2, jnp.int32),
            goal=jax.random.randint(goal_key, (2,), 1, self.size, dtype=jnp.int32),
        )
        return self._state(grid, jnp.float32(0.0), jnp.int32(0), key)

    def step(self, state: State, action: Array) -> State:
        check_action(self.action_space, action, (), f"{type(self).__name__}.step")
        grid: GridState = state.env_state
        move = jnp.asarray(MOVES)[clip_action(self.action_space, action)]
        position = jnp.clip(grid.position + move, 0, self.size - 1)
        moved = dataclasses.replace(grid, position=position)
        reward = _potential(moved) - _potential(grid) - self.step_cost
        return self._state(moved, reward.astype(jnp.float32), state.step_count + 1, state.key)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(size={self.size}, step_cost={self.step_cost})"

    def legal_moves(self, position: Int[Array, 2]) -> Bool[Array, 4]:
        """Which of the four moves stay on the grid."""
        target = position + jnp.asarray(MOVES)
        return jnp.all((target >= 0) & (target < self.size), axis=-1)

    def optimal_return(self) -> float:
        """The expected return of an optimal policy, averaged over the uniform goal distribution."""
        cells = np.arange(1, self.size, dtype=np.float64)
        gx, gy = np.meshgrid(cells, cells)
        returns = 1.0 - np.exp(-np.hypot(gx, gy)) - self.step_cost * (gx + gy)
        return float(returns.mean())

    def render(self, state: State) -> rendering.Image:
        """The grid as an RGB image: the goal a green square, the agent a blue disc (y grows upwards)."""
        grid: GridState = state.env_state
        cell = self.cell_pixels
        image = rendering.grid_lines(rendering.canvas(self.size * cell, self.size * cell), cell)
        goal_row, goal_col = self.size - 1 - grid.goal[1], grid.goal[0]
        image = rendering.fill_rect(
            image, goal_row * cell + 1, goal_col * cell + 1, cell - 1, cell - 1, rendering.GREEN
        )
        agent_row, agent_col = self.size - 1 - grid.position[1], grid.position[0]
        return rendering.fill_circle(
            image, (agent_row + 0.5) * cell, (agent_col + 0.5) * cell, 0.35 * cell, rendering.BLUE
        )

    def _state(self, grid: GridState, reward: Float[Array, ""], step_count: Int[Array, ""], key: PRNGKeyArray) -> State:
        return State(
            env_state=grid,
            observation=jnp.concatenate([grid.position, grid.goal]).astype(jnp.float32),
            reward=reward,
            termination=jnp.all(grid.position == grid.goal),
            truncation=jnp.bool_(False),
            info={},
            step_count=step_count,
            key=key,
        )


class MaskedGridWorld(GridWorld):
    """GridWorld-Masked-v0: `GridWorld` whose state carries `action_mask`, the moves that stay on the grid.

    An illegal move is harmless (the agent stays and pays the step cost), so
    the optimal return is `GridWorld`'s.
    """

    def reset(self, key: PRNGKeyArray) -> MaskedState:
        return self._with_mask(super().reset(key=key))

    def step(self, state: State, action: Array) -> MaskedState:
        return self._with_mask(super().step(state, action))

    def _with_mask(self, state: State) -> MaskedState:
        fields = {field.name: getattr(state, field.name) for field in dataclasses.fields(State)}
        return MaskedState(**fields, action_mask=self.legal_moves(state.env_state.position))


def _potential(grid: GridState) -> Float[Array, ""]:
    """`exp(-distance to goal)`: 1 on the goal, falling off with Euclidean distance."""
    offset = (grid.position - grid.goal).astype(jnp.float32)
    return jnp.exp(-jnp.sqrt(jnp.sum(offset**2)))
