"""`to_gymnasium` and `to_gymnasium_vector`: a single-agent parallax env as a Gymnasium env or vector env.

The export holds the JAX state and calls the env's `reset` and `step`,
each jitted once, and hands Gymnasium NumPy values: observations in the
converted space, `float` rewards, `bool` flags, and for masked envs the
legal actions in `info["action_mask"]` (int8, as `Discrete.sample(mask=...)`
takes them). `reset(seed=s)` resets the env with a key split from
`jax.random.key(s)`, so the same seed gives the same episode.
docs/interop.md shows both exports in use.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from parallax.core import MARLState, action_mask_of
from parallax.interop.compiled import jit_once
from parallax.interop.gymnasium_spaces import checked_action, numpy_dtype_of, scalar_converter, to_gymnasium_space
from parallax.spaces import PyTreeSpace
from parallax.wrappers import VmapWrapper

RENDER_FPS = 8
"""Frames per second Gymnasium's video tools assume for the exports' RGB frames."""


def to_gymnasium(env: Any, render_mode: str | None = None) -> GymnasiumEnv:
    """A `gymnasium.Env` that steps the single-agent parallax `env` (unbatched, with its time limit applied).

    `render_mode="rgb_array"` makes `render()` return the env's RGB picture of
    the current state, for envs with a `render(state)` method.
    """
    return GymnasiumEnv(env, render_mode=render_mode)


def to_gymnasium_vector(env: Any, num_envs: int, render_mode: str | None = None) -> GymnasiumVectorEnv:
    """A `gymnasium.vector.VectorEnv` of `num_envs` copies of the single-agent `env`, stepped in one jitted call.

    It auto-resets in Gymnasium's next-step mode (declared in `metadata`):
    the step that ends an episode returns its true terminal observation, and
    the next step resets that env, ignoring its action.
    """
    return GymnasiumVectorEnv(env, num_envs, render_mode=render_mode)


def _require_single_agent(env: Any, export: str) -> Any:
    """The abstract reset state of `env`, after checking that `env` is one unbatched single-agent env."""
    if getattr(env, "num_envs", None) is not None:
        raise TypeError(
            f"{export} expects one unbatched env, got {env!r} with num_envs={env.num_envs}. "
            "Pass the env without VmapWrapper; to_gymnasium_vector(env, num_envs) batches it."
        )
    abstract = jax.eval_shape(lambda key: env.reset(key=key), jax.random.key(0))
    if isinstance(abstract, MARLState):
        raise TypeError(
            f"{export} exports single-agent envs; {env!r} is multi-agent (its states are MARLStates). "
            "Use parallax.interop.to_pettingzoo or to_pettingzoo_aec for it."
        )
    return abstract


def _render_modes(env: Any) -> list[str]:
    """`rgb_array` where the env draws its states: it has `render` and no `cannot_render` reason (gymnax's bsuite)."""
    drawable = callable(getattr(env, "render", None)) and getattr(env, "cannot_render", None) is None
    return ["rgb_array"] if drawable else []


def _check_render_mode(render_mode: str | None, modes: list[str], env: Any) -> None:
    if render_mode is not None and render_mode not in modes:
        supported = f"it supports {modes}" if modes else "it has no render(state) method, so only render_mode=None"
        raise ValueError(f"render_mode={render_mode!r} is not available for {env!r}: {supported}.")


def _cast_action(action: Any, dtype: Any) -> Any:
    if isinstance(dtype, np.dtype):
        return np.asarray(action, dtype=dtype)
    return jax.tree_util.tree_map(lambda a, d: np.asarray(a, dtype=d), action, dtype)


def _reset(env: Any, key: jax.Array) -> tuple:
    key, reset_key = jax.random.split(key)
    return key, env.reset(key=reset_key)


def _reset_each(env: Any, seeds: jax.Array) -> Any:
    """Env `i` starts as `to_gymnasium`'s env does after `reset(seed=seeds[i])`."""
    keys = jax.vmap(lambda seed: jax.random.split(jax.random.key(seed))[1])(seeds)
    return env.reset(key=keys)


def _reset_some(env: Any, key: jax.Array, state: Any, mask: jax.Array) -> tuple:
    key, reset_key = jax.random.split(key)
    return key, env.reset(key=reset_key, state=state, done=mask)


def _step(env: Any, state: Any, action: Any) -> tuple:
    """The next state, and its reward and flags packed in one array: one transfer to NumPy instead of three."""
    state = env.step(state, action)
    scalars = jnp.stack([state.reward, state.termination, state.truncation]).astype(jnp.float32)
    return state, scalars


def _step_autoreset(env: Any, key: jax.Array, state: Any, action: Any) -> tuple:
    """Next-step autoreset: envs whose state is done are reset instead of stepped, with reward 0 and no flags.

    A done env steps from its fresh start (the step is discarded), so no env is asked to step an ended episode,
    which `ValidateActions` refuses.
    """
    key, reset_key = jax.random.split(key)
    ended = state.done
    fresh = jax.lax.cond(jnp.any(ended), lambda: env.reset(key=reset_key, state=state, done=ended), lambda: state)
    stepped = env.step(fresh, action)
    restarted = jax.lax.cond(
        jnp.any(ended),
        lambda: env.reset(key=reset_key, state=stepped, done=ended),
        lambda: stepped,
    )
    return key, restarted


def _render(env: Any, state: Any) -> jax.Array:
    return env.render(state)


def _render_each(env: Any, states: Any) -> jax.Array:
    return jax.vmap(env.render)(states)


class _Reader:
    """Reads what Gymnasium is given from a state: NumPy observations in Gymnasium's form, the mask, the info."""

    def __init__(self, env: Any, abstract: Any):
        self.masked = action_mask_of(abstract) is not None
        self.tree = isinstance(env.observation_space, PyTreeSpace)
        self.convert = scalar_converter(env.observation_space)
        self.has_info = bool(jax.tree_util.tree_leaves(abstract.info))

    def observation(self, state: Any) -> Any:
        observation = (
            jax.tree_util.tree_map(np.asarray, state.observation) if self.tree else np.asarray(state.observation)
        )
        return observation if self.convert is None else self.convert(observation)

    def info(self, state: Any) -> dict[str, Any]:
        info = (
            dict(jax.tree_util.tree_map(np.asarray, state.info)) if self.has_info else {}
        )  # 8x faster than device_get
        if self.masked:
            info["action_mask"] = np.asarray(state.action_mask).astype(np.int8)
        return info


class GymnasiumEnv(gymnasium.Env):
    """A single-agent parallax env behind Gymnasium's `Env` API; `parallax_env` is the JAX env it steps."""

    def __init__(self, env: Any, render_mode: str | None = None):
        abstract = _require_single_agent(env, "to_gymnasium")
        self.parallax_env = env
        self.observation_space = to_gymnasium_space(env.observation_space)
        self.action_space = to_gymnasium_space(env.action_space)
        self.metadata = {"render_modes": _render_modes(env), "render_fps": RENDER_FPS}
        _check_render_mode(render_mode, self.metadata["render_modes"], env)
        self.render_mode = render_mode
        self._action_dtype = numpy_dtype_of(env.action_space)
        self._read = _Reader(env, abstract)
        self._reset = jit_once(_reset, env)
        self._step = jit_once(_step, env)
        self._key: jax.Array | None = None
        self._state: Any = None
        self._ended: tuple[Any, bool, bool, dict[str, Any]] | None = None
        """The last observation, flags and info once the episode has ended; None while it goes on."""
        self._warned = False

    @property
    def parallax_state(self) -> Any:
        """The current JAX state (None before the first `reset`)."""
        return self._state

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Start an episode; `seed` sets the key, and without one the key goes on from the last reset."""
        self._ended, self._warned = None, False
        super().reset(seed=seed)
        if seed is not None:
            self._key = jax.random.key(seed)
        elif self._key is None:
            self._key = jax.random.key(int(self.np_random.integers(2**31)))
        self._key, self._state = self._reset(self._key)
        return self._read.observation(self._state), self._read.info(self._state)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """One step; an action outside the action space raises `gymnasium.error.InvalidAction`.

        After `terminated` or `truncated`, a step warns once, as Gymnasium's own envs do, and pays 0 without stepping.
        """
        if self._state is None:
            raise gymnasium.error.ResetNeeded("step() was called before reset(); call reset() first.")
        checked_action(self.action_space, action, f"{type(self).__name__}.step")
        if self._ended is not None:
            if not self._warned:
                gymnasium.logger.warn(
                    "You are calling 'step()' even though this environment has already returned terminated = True or "
                    "truncated = True; call 'reset()' to start a new episode. Until then a step pays 0 and changes "
                    "nothing."
                )
                self._warned = True
            observation, termination, truncation, info = self._ended
            return observation, 0.0, termination, truncation, info
        self._state, scalars = self._step(self._state, _cast_action(action, self._action_dtype))
        reward, termination, truncation = np.asarray(scalars).tolist()
        read = self._read
        observation, info = read.observation(self._state), read.info(self._state)
        if termination == 1.0 or truncation == 1.0:
            self._ended = (observation, termination == 1.0, truncation == 1.0, info)
        return observation, reward, termination == 1.0, truncation == 1.0, info

    def render(self) -> np.ndarray | None:
        """The env's RGB picture (`uint8[H, W, 3]`) of the current state with `render_mode="rgb_array"`, else None."""
        if self.render_mode is None:
            gymnasium.logger.warn(
                "render() was called without a render_mode; make the env with render_mode='rgb_array'."
            )
            return None
        if self._state is None:
            raise gymnasium.error.ResetNeeded("render() was called before reset(); call reset() first.")
        return np.asarray(jit_once(_render, self.parallax_env)(self._state))

    def __repr__(self) -> str:
        return f"GymnasiumEnv({self.parallax_env!r})"


class GymnasiumVectorEnv(gymnasium.vector.VectorEnv):
    """`num_envs` copies of a single-agent parallax env behind Gymnasium's `VectorEnv` API, in next-step autoreset mode.

    `parallax_env` is the `VmapWrapper` it steps. `reset(seed=s)` splits
    `jax.random.key(s)` across the envs; a list of seeds starts env `i` as
    `to_gymnasium`'s env after `reset(seed=seeds[i])`;
    `options={"reset_mask": mask}` resets only the envs in `mask`.
    `info` holds the env's info and, for masked envs, `"action_mask"`, each
    batched with its `"_name"` flags as Gymnasium's vector envs do.
    """

    def __init__(self, env: Any, num_envs: int, render_mode: str | None = None):
        abstract = _require_single_agent(env, "to_gymnasium_vector")
        self.parallax_env = VmapWrapper(env, num_envs)
        self.num_envs = num_envs
        self.single_observation_space = to_gymnasium_space(env.observation_space)
        self.single_action_space = to_gymnasium_space(env.action_space)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.metadata = {
            "autoreset_mode": AutoresetMode.NEXT_STEP,
            "render_modes": _render_modes(env),
            "render_fps": RENDER_FPS,
        }
        _check_render_mode(render_mode, self.metadata["render_modes"], env)
        self.render_mode = render_mode
        self._action_dtype = numpy_dtype_of(env.action_space)
        self._read = _Reader(env, abstract)
        self._flags = np.ones(num_envs, np.bool_)
        self._reset = jit_once(_reset, self.parallax_env)
        self._step = jit_once(_step_autoreset, self.parallax_env)
        self._key: jax.Array | None = None
        self._state: Any = None

    @property
    def parallax_state(self) -> Any:
        """The current batched JAX state (None before the first `reset`)."""
        return self._state

    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed if isinstance(seed, int) else None)
        reset_mask = (options or {}).get("reset_mask")
        if isinstance(seed, (list, tuple)):
            if len(seed) != self.num_envs:
                raise ValueError(f"reset(seed=[...]) needs one seed per env ({self.num_envs}), got {len(seed)}.")
            self._key = jax.random.fold_in(jax.random.key(seed[0]), self.num_envs)  # for later autoresets
            self._state = jit_once(_reset_each, self.parallax_env)(np.asarray(seed, np.uint32))
        else:
            if seed is not None:
                self._key = jax.random.key(seed)
            elif self._key is None:
                self._key = jax.random.key(int(self.np_random.integers(2**31)))
            if reset_mask is not None and self._state is not None:
                mask = np.asarray(reset_mask)
                if mask.shape != (self.num_envs,) or mask.dtype != np.bool_:
                    raise ValueError(
                        f"options['reset_mask'] must be a bool array of shape ({self.num_envs},), "
                        f"got {mask.dtype} of shape {mask.shape}."
                    )
                self._key, self._state = jit_once(_reset_some, self.parallax_env)(self._key, self._state, mask)
            else:
                self._key, self._state = self._reset(self._key)
        return self._read.observation(self._state), self._info(self._state)

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if self._state is None:
            raise gymnasium.error.ResetNeeded("step() was called before reset(); call reset() first.")
        checked_action(self.action_space, actions, f"{type(self).__name__}.step")
        self._key, self._state = self._step(self._key, self._state, _cast_action(actions, self._action_dtype))
        state = self._state
        termination, truncation = np.asarray(state.termination), np.asarray(state.truncation)
        return self._read.observation(state), np.asarray(state.reward), termination, truncation, self._info(state)

    def render(self) -> tuple[np.ndarray, ...] | None:
        """One RGB picture per env with `render_mode="rgb_array"`, else None."""
        if self.render_mode is None:
            gymnasium.logger.warn(
                "render() was called without a render_mode; make the env with render_mode='rgb_array'."
            )
            return None
        if self._state is None:
            raise gymnasium.error.ResetNeeded("render() was called before reset(); call reset() first.")
        return tuple(np.asarray(jit_once(_render_each, self.parallax_env.env)(self._state)))

    def _info(self, state: Any) -> dict[str, Any]:
        return {
            name: value
            for key, info in self._read.info(state).items()
            for name, value in ((key, info), (f"_{key}", self._flags))
        }

    def __repr__(self) -> str:
        return f"GymnasiumVectorEnv({self.parallax_env.env!r}, num_envs={self.num_envs})"
