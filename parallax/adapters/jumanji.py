"""`JumanjiAdapter`: a Jumanji environment as a parallax `Env`.

Jumanji's `step` never resets (its `AutoResetWrapper` does, and is refused
here), so the state returned at an episode's end holds the true terminal
observation. The episode ends on a `TimeStep` of step type LAST: a
truncation when it ends with discount 1 (where Jumanji gives each agent its
own discount, Connector and LevelBasedForaging: any agent's), or on the step
that reaches the env's `time_limit`; a termination otherwise. The time limit
needs the second rule because most of Jumanji 1.1.2's envs (Snake, Maze,
PacMan, Tetris, RubiksCube, ...) end it with discount 0, as if the episode
had ended by the rules; an ending by the rules on that very step cannot be
told apart and is reported as a truncation too.

Jumanji's multi-agent environments take one joint action and are adapted as
the single `Env` Jumanji presents; where Jumanji pays each agent its own
reward, `reward` is the team's sum and `info["agent_reward"]` keeps the
per-agent rewards. Spaces come from Jumanji's specs with per-entry bounds and
the dtypes the environment actually emits; an observation with fields (all
of Jumanji's) is a `PyTreeSpace` of the same structure.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, PRNGKeyArray
from jumanji import specs
from jumanji.env import Environment
from jumanji.environments.packing.tetris.env import Tetris
from jumanji.environments.routing.snake.env import Snake
from jumanji.environments.routing.tsp.env import TSP
from jumanji.types import StepType
from jumanji.wrappers import Wrapper

from parallax.adapters.base import Adapter, cast_like, next_key, raw_key, zeros_like_signature
from parallax.adapters.frames import RenderUnavailableError
from parallax.core import State
from parallax.spaces import Box, Discrete, MultiBinary, MultiDiscrete, PyTreeSpace, Space, clip_action

VIEWER_FIGURE_SIZE = (4.0, 4.0)
"""Inches of a Jumanji viewer's figure when recording (400 x 400 pixels at matplotlib's 100 dpi)."""


class JumanjiAdapter(Adapter[State]):
    """Wraps a bare Jumanji `Environment` (as `jumanji.make` returns it).

    `env_state` is Jumanji's state; `info` holds the `TimeStep`'s `extras`
    and `discount` (plus `agent_reward` where Jumanji rewards agents
    separately), with the same structure after `reset` and `step`. `reset`
    and `step` are jitted; the key advances on every step (`adapters/base.py`, "Keys"). Jumanji draws its
    own randomness from the key inside its state, which `reset` seeds.
    """

    costly_reset = True  # a generator's instance, about a step's worth

    def __init__(self, env: Environment):
        if isinstance(env, Wrapper):
            raise TypeError(
                f"JumanjiAdapter expects a bare Jumanji environment, got the wrapper {type(env).__name__}: "
                "its auto-reset or batching would hide terminal observations. Pass env.unwrapped "
                "(or jumanji.make(name) as it is) and use parallax's VmapWrapper instead."
            )
        if not isinstance(env, Environment):
            raise TypeError(
                f"JumanjiAdapter expects a jumanji Environment, got {type(env).__name__}. Create one with "
                "jumanji.make(name)."
            )
        self.env = env
        key = jax.random.PRNGKey(0)
        state_shape, first = jax.eval_shape(env.reset, key)
        action = jax.tree_util.tree_map(
            lambda s: jax.ShapeDtypeStruct(s.shape, jax.dtypes.canonicalize_dtype(s.dtype)),
            env.action_spec.generate_value(),
        )
        _, step = jax.eval_shape(env.step, state_shape, action)
        self._per_agent_reward = tuple(step.reward.shape) != ()
        self._info_signature = self._info(step)
        self._first_info_matches = jax.tree_util.tree_structure(self._info(first)) == jax.tree_util.tree_structure(
            self._info_signature
        )
        self._action_space = to_parallax_space(env.action_spec, action, action=True)
        self._observation_space = to_parallax_space(corrected_observation_spec(env), step.observation)
        super().__init__()

    @property
    def episode_length(self) -> int | None:
        """Jumanji's time limit, the step on which the episode is truncated; None for envs that end by their rules
        alone."""
        limit = getattr(self.env, "time_limit", None)
        return None if limit is None else int(limit)

    def _reset_unchecked(self, key: PRNGKeyArray) -> State:
        env_state, timestep = self.env.reset(raw_key(key))
        info = self._info(timestep) if self._first_info_matches else None
        return State(
            env_state=env_state,
            observation=timestep.observation,
            reward=jnp.zeros((), jnp.float32),
            termination=jnp.zeros((), jnp.bool_),
            truncation=jnp.zeros((), jnp.bool_),
            info=_cast_like(info, self._info_signature),
            step_count=jnp.zeros((), jnp.int32),
            key=key,
        )

    def _step_unchecked(self, state: State, action: Array) -> State:
        # An action outside the space means its nearest one (docs/protocol.md, "Out-of-range actions"): a NaN
        # heading made SearchAndRescue's searchers' state NaN.
        env_state, timestep = self.env.step(state.env_state, clip_action(self.action_space, action))
        step_count = state.step_count + 1
        last = timestep.step_type == StepType.LAST
        cut_short = jnp.any(timestep.discount != 0)
        if self.episode_length is not None:
            cut_short = cut_short | (step_count >= self.episode_length)
        return State(
            env_state=env_state,
            observation=timestep.observation,
            reward=jnp.sum(timestep.reward).astype(jnp.float32),
            termination=last & ~cut_short,
            truncation=last & cut_short,
            info=_cast_like(self._info(timestep), self._info_signature),
            step_count=step_count,
            key=next_key(state.key),
        )

    def _info(self, timestep: Any) -> dict[str, Any]:
        info = {**dict(timestep.extras), "discount": timestep.discount}
        if self._per_agent_reward:
            info["agent_reward"] = timestep.reward
        return info

    def render_trajectory(self, states: State) -> np.ndarray:
        """`uint8[T, H, W, 3]`: Jumanji's own viewer's picture of every step (matplotlib, off-screen)."""
        from parallax.adapters.host_frames import draw_trajectory, use_offscreen_matplotlib

        use_offscreen_matplotlib()
        from jumanji.viewer import MatplotlibViewer

        # Jumanji's envs keep their viewer as _viewer, viewer or _env_viewer
        viewers = [v for v in vars(self.env).values() if isinstance(v, MatplotlibViewer)]
        if not viewers:
            raise RenderUnavailableError(f"{type(self.env).__name__} has no matplotlib viewer to draw with")
        viewer = viewers[0]
        viewer._display = viewer._display_rgb_array  # its "rgb_array" mode: return pixels, show nothing
        if type(viewer).__name__ == "MMSTViewer":
            viewer._display = lambda figure: viewer._display_rgb_array(_framing_the_nodes(figure))
        viewer.figure_size = VIEWER_FIGURE_SIZE
        drawn = VIEWER_INPUT.get(type(self.env).__name__, lambda env_state: env_state)
        try:  # the viewer itself: some envs' `render` (Snake's) drop the picture it returns
            return draw_trajectory(states.env_state, lambda env_state: np.asarray(viewer.render(drawn(env_state))))
        finally:
            viewer.close()

    def __repr__(self) -> str:
        return f"JumanjiAdapter({type(self.env).__name__})"


VIEWER_INPUT: dict[str, Any] = {"Connector": lambda env_state: env_state.grid}
"""What an env's viewer draws, where it is not the whole state: Connector's `render` hands its viewer the grid."""


def _framing_the_nodes(figure: Any) -> Any:
    """MMST's figure with its axes around its nodes: its viewer adds them as artists, which autoscaling misses,
    and leaves the view at +-0.055 while the nodes lie in [0, 1], so its pictures would be blank."""
    for axes in figure.axes:
        centres = np.asarray([patch.center for patch in axes.patches if hasattr(patch, "center")])
        if len(centres):
            low, high = centres.min(axis=0) - 0.1, centres.max(axis=0) + 0.1
            axes.set_xlim(low[0], high[0])
            axes.set_ylim(low[1], high[1])
    return figure


def corrected_observation_spec(env: Environment) -> Any:
    """Jumanji's observation spec, with the entries that Jumanji 1.1.2 declares too narrowly widened.

    TSP's `position` is -1 before the first city is chosen (its reset
    observation), below the `DiscreteArray(num_cities)` it declares. Snake's
    and Tetris's `step_count` reaches `time_limit` on the last step, above
    the `DiscreteArray(time_limit)` they declare.
    """
    spec = env.observation_spec
    if isinstance(env, TSP):
        position = specs.BoundedArray((), jnp.int32, minimum=-1, maximum=env.num_cities - 1, name="position")
        return spec.replace(position=position)
    if isinstance(env, (Snake, Tetris)):
        step_count = specs.BoundedArray((), jnp.int32, minimum=0, maximum=env.time_limit, name="step_count")
        return spec.replace(step_count=step_count)
    return spec


def _cast_like(tree: Any, signature: Any) -> Any:
    """`tree` cast leaf by leaf to the signature's dtypes; zeros of the signature where `tree` is None."""
    if tree is None:
        return zeros_like_signature(signature)
    return cast_like(tree, signature)


def to_parallax_space(spec: Any, emitted: Any, *, action: bool = False) -> Space:
    """The parallax space of a Jumanji spec, with the shapes and dtypes of `emitted` (what the env really returns).

    An integer action bounded below by 0 becomes a `MultiDiscrete` (MultiCVRP
    declares its actions that way); the same spec on an observation stays a `Box`.
    """
    tree = _space_tree(spec, emitted, action)
    return tree if _is_leaf_space(tree) else PyTreeSpace(tree)


def _space_tree(spec: Any, emitted: Any, action: bool) -> Any:
    """A leaf parallax space, or the observation's own container (a NamedTuple, say) holding one per field.

    Jumanji 1.1 keeps a nested spec's fields in `Spec._specs`, the only way to
    walk them, and builds the container from them as `generate_value` does.
    """
    if not isinstance(spec, specs.Array):
        fields = {name: _space_tree(sub, _field(emitted, name), action) for name, sub in spec._specs.items()}
        return spec._constructor(**fields)
    shape, dtype = tuple(emitted.shape), jnp.dtype(emitted.dtype)
    if dtype == jnp.bool_:
        return MultiBinary(shape, jnp.bool_)
    if isinstance(spec, specs.DiscreteArray):
        return (
            Discrete(spec.num_values, shape=shape, dtype=dtype)
            if shape == ()
            else Box(0, spec.num_values - 1, shape, dtype)
        )
    if isinstance(spec, specs.MultiDiscreteArray):
        return MultiDiscrete(np.asarray(spec.num_values), dtype=dtype)
    if isinstance(spec, specs.BoundedArray):
        low, high = _bound(spec.minimum, shape, dtype), _bound(spec.maximum, shape, dtype)
        if action and jnp.issubdtype(dtype, jnp.integer) and np.all(low == 0) and shape != ():
            return MultiDiscrete(high.astype(np.int64) + 1, dtype=dtype)
        return Box(low, high, shape, dtype)
    if jnp.issubdtype(dtype, jnp.integer):
        limits = jnp.iinfo(dtype)
        return Box(limits.min, limits.max, shape, dtype)
    return Box(-jnp.inf, jnp.inf, shape, dtype)


def _bound(value: Any, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """A spec bound broadcast to `shape`, clipped to the integer range where `dtype` is an integer."""
    bound = np.broadcast_to(np.asarray(value, np.float64), shape)
    if jnp.issubdtype(dtype, jnp.integer):
        limits = jnp.iinfo(dtype)
        return np.clip(bound, limits.min, limits.max)
    return bound


def _field(emitted: Any, name: str) -> Any:
    return emitted[name] if isinstance(emitted, dict) else getattr(emitted, name)


def _is_leaf_space(space: Any) -> bool:
    return isinstance(space, (Discrete, Box, MultiDiscrete, MultiBinary))


__all__ = ["JumanjiAdapter", "corrected_observation_spec", "to_parallax_space"]
