"""`XMiniGridAdapter`: an XLand-MiniGrid environment and its params as a parallax `Env`.

XLand-MiniGrid's `step` never resets (its `GymAutoResetWrapper` and
`DmEnvAutoResetWrapper` do, and are refused here), so the state returned at
an episode's end holds the true terminal observation. The episode ends on a
`TimeStep` of step type LAST: a termination when its discount is 0 (the goal
is reached), a truncation when it is 1 (`params.max_steps` ran out).

Observations are the agent's `uint8` view of `(view_size, view_size, 2)`:
a tile id, then a colour id, per cell. The observation wrappers
(`DirectionObservationWrapper`, `RulesAndGoalsObservationWrapper`) turn it
into a dict, which becomes a `PyTreeSpace`.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, PRNGKeyArray
from xminigrid.core.constants import NUM_COLORS, NUM_TILES
from xminigrid.environment import Environment
from xminigrid.types import StepType
from xminigrid.wrappers import DmEnvAutoResetWrapper, GymAutoResetWrapper, Wrapper

from parallax.adapters.base import Adapter, next_key
from parallax.core import State
from parallax.spaces import Box, Discrete, PyTreeSpace, Space

AUTO_RESET_WRAPPERS = (GymAutoResetWrapper, DmEnvAutoResetWrapper)

FRAME_SIDE = 320
"""About how many pixels a drawn grid's long side gets: tiles of 8 to 32 pixels."""


class XMiniGridAdapter(Adapter[State]):
    """Wraps an XLand-MiniGrid environment with its params; `params=None` means `env.default_params()`.

    The params are static configuration, closed over by `reset` and `step`
    (an XLand ruleset included: `xminigrid.make(name, ruleset=...)`).
    `env_state` is XLand-MiniGrid's `TimeStep`, which its `step` takes;
    `info` holds its `discount`. `reset` and `step` are jitted; the key
    advances on every step (`adapters/base.py`, "Keys"). XLand-MiniGrid's steps are deterministic.
    """

    costly_reset = True  # a generated grid, about a step's worth

    def __init__(self, env: Environment, params: Any = None):
        if not isinstance(env, Environment):
            raise TypeError(
                f"XMiniGridAdapter expects an xminigrid Environment, got {type(env).__name__}. "
                "Create one with `env, params = xminigrid.make(name)`."
            )
        _refuse_auto_reset(env)
        self.env = env
        self.params = env.default_params() if params is None else params
        if self.params.max_steps is None:
            raise ValueError(
                "XMiniGridAdapter needs params.max_steps, the episode length XLand-MiniGrid truncates at; "
                "params from env.default_params() or xminigrid.make have it."
            )
        first = jax.eval_shape(lambda key: env.reset(self.params, key), jax.random.key(0))
        self._action_space = Discrete(int(env.num_actions(self.params)))
        self._observation_space = _observation_space(first.observation)
        super().__init__()

    @property
    def episode_length(self) -> int:
        """XLand-MiniGrid's `params.max_steps`: the step on which `truncation` becomes true."""
        return int(self.params.max_steps)

    def _reset_unchecked(self, key: PRNGKeyArray) -> State:
        timestep = self.env.reset(self.params, key)
        return State(
            env_state=timestep,
            observation=timestep.observation,
            reward=jnp.zeros((), jnp.float32),
            termination=jnp.zeros((), jnp.bool_),
            truncation=jnp.zeros((), jnp.bool_),
            info={"discount": jnp.ones((), jnp.float32)},
            step_count=jnp.zeros((), jnp.int32),
            key=key,
        )

    def _step_unchecked(self, state: State, action: Array) -> State:
        timestep = self.env.step(self.params, state.env_state, action)
        last = timestep.step_type == StepType.LAST
        discount = jnp.asarray(timestep.discount, jnp.float32)
        return State(
            env_state=timestep,
            observation=timestep.observation,
            reward=jnp.asarray(timestep.reward, jnp.float32),
            termination=last & (discount == 0),
            truncation=last & (discount != 0),
            info={"discount": discount},
            step_count=state.step_count + 1,
            key=next_key(state.key),
        )

    def render_trajectory(self, states: State) -> np.ndarray:
        """`uint8[T, H, W, 3]`: XLand-MiniGrid's own picture of every step (`xminigrid.rendering.rgb_render`),
        the whole grid with the agent's field of view highlighted, drawn on the host."""
        from xminigrid.rendering.rgb_render import render

        from parallax.adapters.host_frames import draw_trajectory

        tile_size = max(8, min(32, FRAME_SIDE // max(int(self.params.height), int(self.params.width))))

        def draw(timestep: Any) -> np.ndarray:
            agent = jax.tree_util.tree_map(np.asarray, timestep.state.agent)
            return render(np.asarray(timestep.state.grid), agent, int(self.params.view_size), tile_size)

        return draw_trajectory(states.env_state, draw)

    def __repr__(self) -> str:
        return f"XMiniGridAdapter({type(self.env).__name__}, {self.params.height}x{self.params.width})"


def _refuse_auto_reset(env: Environment) -> None:
    layer: Any = env
    while isinstance(layer, Wrapper):
        if isinstance(layer, AUTO_RESET_WRAPPERS):
            raise TypeError(
                f"XMiniGridAdapter: {type(layer).__name__} resets finished episodes inside step, which would hide "
                "terminal observations. Adapt the environment without it; use parallax's AutoResetWrapper "
                "or VmapWrapper's selective reset instead."
            )
        layer = layer._env


def grid_view_space(shape: tuple[int, ...], dtype: Any) -> Box:
    """The space of an agent's view: per cell a tile id below `NUM_TILES`, then a colour id below `NUM_COLORS`."""
    high = np.broadcast_to(np.array([NUM_TILES - 1, NUM_COLORS - 1]), shape)
    return Box(np.zeros(shape), high, shape, dtype)


def _observation_space(observation: Any) -> Space:
    """The grid view's space, or a `PyTreeSpace` over the dict an observation wrapper makes of it."""
    if not isinstance(observation, dict):
        return grid_view_space(tuple(observation.shape), observation.dtype)
    spaces: dict[str, Space] = {}
    for name, leaf in observation.items():
        shape, dtype = tuple(leaf.shape), jnp.dtype(leaf.dtype)
        if name == "img":
            spaces[name] = grid_view_space(shape, dtype)
        elif name == "direction":
            spaces[name] = Box(0.0, 1.0, shape, dtype)  # a one-hot of the four directions
        elif jnp.issubdtype(dtype, jnp.integer):
            limits = jnp.iinfo(dtype)
            spaces[name] = Box(limits.min, limits.max, shape, dtype)
        else:
            spaces[name] = Box(-jnp.inf, jnp.inf, shape, dtype)
    return PyTreeSpace(spaces)


__all__ = ["XMiniGridAdapter", "grid_view_space"]
