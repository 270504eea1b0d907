"""What the Brax and MuJoCo Playground adapters share.

Both packages' environments have `reset(rng)` and `step(state, action)`
returning a state with `obs`, `reward`, `done` (a 0/1 float) and `metrics`,
actions in [-1, 1] of length `action_size`, and both are usually handed
over inside brax's training wrappers. This module strips those wrappers,
repeats actions, sets truncation at the episode length and maps the result
onto `parallax.State`; it imports neither package.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, PRNGKeyArray

from parallax.adapters.base import Adapter, cast_like, next_key, raw_key
from parallax.adapters.frames import RenderUnavailableError, mujoco_renderer_problem
from parallax.adapters.mujoco_warnings import mujoco_warnings_as_python_warnings
from parallax.core import State
from parallax.spaces import Box, PyTreeSpace, Space, clip_action


def first_given(*values: Any) -> Any:
    """The first of `values` that is not None (an explicit argument, then a wrapper's, then a default); None if none
    is."""
    return next((value for value in values if value is not None), None)


def strip_wrappers(
    env: Any,
    *,
    removable: tuple[type, ...],
    refused: tuple[type, ...],
    episode_wrapper: type,
    adapter: str,
) -> tuple[Any, int | None, int | None]:
    """Remove the outer wrappers of types `removable`: (bare env, their episode_length, their action_repeat).

    Auto-reset, vmap and evaluation wrappers would hide terminal observations
    or add a batch axis the adapter cannot see; the episode wrapper's length
    and action repeat are kept and applied by the adapter. A wrapper of a type
    in `refused` (domain randomisation: a system per env) cannot be kept or
    dropped silently, so it raises; so does a removable wrapper found beneath
    some other wrapper, which the adapter could not strip without losing it.
    """
    episode_length: int | None = None
    action_repeat: int | None = None
    while True:
        if isinstance(env, refused):
            raise ValueError(
                f"{adapter}: {type(env).__name__} gives each env its own randomised system, which the adapter "
                "cannot keep. Adapt the environment without domain randomisation (wrap it only after adapting)."
            )
        if not isinstance(env, removable):
            break
        if isinstance(env, episode_wrapper):
            episode_length, action_repeat = int(env.episode_length), int(env.action_repeat)
        env = env.env
    inner = getattr(env, "env", None)
    while inner is not None:
        if isinstance(inner, removable + refused):
            raise ValueError(
                f"{adapter}: found {type(inner).__name__} beneath {type(env).__name__}; the adapter strips "
                "training wrappers only from the outside. Wrap the bare environment in your own wrappers instead."
            )
        inner = getattr(inner, "env", None)
    return env, episode_length, action_repeat


def observation_space_for(observation: Any) -> Space:
    """An unbounded `Box` per observation array (a `PyTreeSpace` for dict observations), from shapes and dtypes."""
    if isinstance(observation, jax.ShapeDtypeStruct):
        return Box(-jnp.inf, jnp.inf, observation.shape, observation.dtype)
    return PyTreeSpace(jax.tree_util.tree_map(lambda leaf: Box(-jnp.inf, jnp.inf, leaf.shape, leaf.dtype), observation))


class PhysicsAdapter(Adapter[State]):
    """Maps a Brax-style physics env (already stripped of training wrappers) onto the parallax protocol.

    `env_state` is the foreign state, `info` its `metrics`. `termination` is
    the env's own `done`; `truncation` is set once `step_count *
    action_repeat` reaches `episode_length`, counted in the env's own steps
    as brax's `EpisodeWrapper` counts them. An action is repeated
    `action_repeat` times and the rewards summed, stopping at the step on
    which the env ends so that the terminal observation is the true one.
    Actions are clipped to [-1, 1] first, a NaN entry counting as 0 (docs/protocol.md,
    "Out-of-range actions").
    """

    # A physics model's first kinematics cost a tenth of a step (Brax hopper, 2048 envs): resetting only the
    # finished envs saved 2-3% of training time and added 4-5 s of compile, so these resets are not costly.
    costly_reset = False

    def __init__(self, env: Any, *, episode_length: int, action_repeat: int):
        for field, value in (("episode_length", episode_length), ("action_repeat", action_repeat)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{self.name} needs {field} to be an int >= 1, got {value!r}")
        self.env = env
        self.episode_length = episode_length
        self.action_repeat = action_repeat
        self._steps_per_episode = math.ceil(episode_length / action_repeat)
        abstract = jax.eval_shape(env.reset, jax.random.PRNGKey(0))
        self._reset_signature = abstract
        self._observation_space = observation_space_for(abstract.obs)
        self._action_space = Box(-1.0, 1.0, (int(env.action_size),), jnp.float32)
        super().__init__()

    def _reset_unchecked(self, key: PRNGKeyArray) -> State:
        # Strongly typed leaves, as a step returns them: Playground's CheetahRun resets `data.time` to a weakly
        # typed 0.0, and a state from reset would otherwise make the first step compile twice.
        foreign = cast_like(self.env.reset(raw_key(key)), self._reset_signature)
        return State(
            env_state=foreign,
            observation=foreign.obs,
            reward=jnp.zeros((), jnp.float32),
            termination=jnp.zeros((), jnp.bool_),
            truncation=jnp.zeros((), jnp.bool_),
            info=dict(foreign.metrics),
            step_count=jnp.zeros((), jnp.int32),
            key=key,
        )

    def _step_unchecked(self, state: State, action: Array) -> State:
        foreign, reward = self._repeated_step(state.env_state, clip_action(self.action_space, action))
        step_count = state.step_count + 1
        return State(
            env_state=foreign,
            observation=foreign.obs,
            reward=reward,
            termination=jnp.asarray(foreign.done, jnp.float32) != 0,
            truncation=step_count >= self._steps_per_episode,
            info=dict(foreign.metrics),
            step_count=step_count,
            key=next_key(state.key),
        )

    def _repeated_step(self, foreign: Any, action: Array) -> tuple[Any, Array]:
        step: Callable[[Any, Array], Any] = self.env.step
        if self.action_repeat == 1:
            nxt = step(foreign, action)
            return nxt, jnp.asarray(nxt.reward, jnp.float32)

        def repeat(carry: tuple[Any, Array, Array], _: None) -> tuple[tuple[Any, Array, Array], None]:
            current, total, ended = carry
            nxt = step(current, action)
            kept = jax.tree_util.tree_map(lambda old, new: jnp.where(ended, old, new), current, nxt)
            total = total + jnp.where(ended, 0.0, jnp.asarray(nxt.reward, jnp.float32))
            ended = ended | (jnp.asarray(nxt.done, jnp.float32) != 0)
            return (kept, total, ended), None

        start = (foreign, jnp.zeros((), jnp.float32), jnp.zeros((), jnp.bool_))
        (foreign, total, _), _ = jax.lax.scan(repeat, start, None, length=self.action_repeat)
        return foreign, total

    @property
    def cannot_render(self) -> str | None:
        """Why frames cannot be drawn here (MuJoCo's renderer needs OpenGL), asked before an episode is played, so
        that a recording fails at once rather than after minutes of compiling; None where they may be."""
        problem = mujoco_renderer_problem()
        return None if problem is None else f"{self.name} renders with {problem}"

    def render_trajectory(self, states: State, height: int = 240, width: int = 320) -> np.ndarray:
        """`uint8[T, height, width, 3]` of states stacked on a leading time axis, through the env's own renderer.

        The foreign renderer (MuJoCo's, on the host) is not jittable, so an
        episode is recorded first and drawn after.
        """
        problem = mujoco_renderer_problem()
        if problem is not None:
            raise RenderUnavailableError(f"{self.name} renders with {problem}")
        trajectory = [
            jax.tree_util.tree_map(lambda leaf, i=i: leaf[i], self._renderable(states))
            for i in range(int(states.step_count.shape[0]))
        ]
        try:
            with mujoco_warnings_as_python_warnings():
                frames = self.env.render(trajectory, height=height, width=width)
        except Exception as error:  # MuJoCo raises FatalError or AttributeError when no GL context can be made
            raise RenderUnavailableError(
                f"{self.name}: MuJoCo's renderer could not start ({type(error).__name__}: {error}); "
                "install libEGL (apt install libegl1) and set MUJOCO_GL=egl before starting Python"
            ) from None
        return np.stack([np.asarray(frame, np.uint8) for frame in frames])

    def _renderable(self, states: State) -> Any:
        """What the foreign `render` takes per step: the foreign state (Playground's)."""
        return states.env_state

    def __repr__(self) -> str:
        return (
            f"{self.name}({type(self.env).__name__}, episode_length={self.episode_length}, "
            f"action_repeat={self.action_repeat})"
        )


__all__ = ["PhysicsAdapter", "observation_space_for", "strip_wrappers"]
