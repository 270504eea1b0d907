"""`CraftaxAdapter`: a Craftax (or Craftax-Classic) environment as a parallax `Env`.

Craftax's auto-resetting envs overwrite the terminal observation; the adapter
calls `step_env`, which never resets (docs/suites.md), and is best
handed the suite's `...NoAutoReset` classes (`make_craftax_env_from_name(name,
auto_reset=False)`). Craftax ends an episode when the player dies (or walks
into lava, or beats the final boss) and at `params.max_timesteps`; the first
are termination, the time limit is truncation, told apart by asking the env's
own `is_terminal` again with the time limit lifted.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from craftax.environment_base import spaces as craftax_spaces
from jaxtyping import Array, PRNGKeyArray

from parallax.adapters.base import Adapter, cast_like, next_and_step_key, zeros_like_signature
from parallax.core import State
from parallax.spaces import Box, Discrete, clip_action

NO_TIME_LIMIT = int(np.iinfo(np.int32).max)


class CraftaxAdapter(Adapter[State]):
    """Wraps a Craftax env and its params; `params=None` means `env.default_params`.

    `env_state` is Craftax's `EnvState`; `info` what `step_env` reports (the
    achievements and `discount`; zeros after `reset`). The key advances on
    every step. `episode_length` is `params.max_timesteps`, the step on which
    `truncation` becomes true. Actions outside `0..num_actions - 1` are clipped
    into it (docs/protocol.md, "Out-of-range actions").
    """

    costly_reset = True  # a generated world: fourteen steps' worth at 256 envs

    def __init__(self, env: Any, params: Any = None):
        if not (hasattr(env, "step_env") and hasattr(env, "reset_env") and hasattr(env, "is_terminal")):
            raise TypeError(
                f"CraftaxAdapter expects a Craftax environment (with step_env, reset_env and is_terminal), got "
                f"{type(env).__name__}. Create one with craftax.craftax_env.make_craftax_env_from_name(name, "
                "auto_reset=False)."
            )
        self.env = env
        self.params = env.default_params if params is None else params
        self._untimed_params = self.params.replace(max_timesteps=NO_TIME_LIMIT)
        self._signature = self._abstract_step()
        observation = self._signature[0]
        declared = env.observation_space(self.params)
        self._observation_space = Box(
            np.broadcast_to(np.asarray(declared.low, np.float64), observation.shape),
            np.broadcast_to(np.asarray(declared.high, np.float64), observation.shape),
            observation.shape,
            observation.dtype,
        )
        self._pixel_renderer: Any = None
        action_space = env.action_space(self.params)
        if not isinstance(action_space, craftax_spaces.Discrete):
            raise TypeError(f"CraftaxAdapter expects a Discrete action space, got {type(action_space).__name__}")
        self._action_space = Discrete(int(action_space.n))
        super().__init__()

    @property
    def episode_length(self) -> int:
        """Craftax's time limit: the step on which `truncation` becomes true."""
        return int(self.params.max_timesteps)

    def _reset_unchecked(self, key: PRNGKeyArray) -> State:
        observation, env_state = self.env.reset_env(key, self.params)
        step_observation, step_env_state, step_info = self._signature
        return State(
            env_state=cast_like(env_state, step_env_state),
            observation=cast_like(observation, step_observation),
            reward=jnp.zeros((), jnp.float32),
            termination=jnp.zeros((), jnp.bool_),
            truncation=jnp.zeros((), jnp.bool_),
            info=zeros_like_signature(step_info),
            step_count=jnp.zeros((), jnp.int32),
            key=key,
        )

    def _step_unchecked(self, state: State, action: Array) -> State:
        next_key, step_key = next_and_step_key(state.key)
        observation, env_state, reward, done, info = self.env.step_env(
            step_key, state.env_state, clip_action(self.action_space, action), self.params
        )
        done = jnp.asarray(done, jnp.bool_)
        termination = done & jnp.asarray(self.env.is_terminal(env_state, self._untimed_params), jnp.bool_)
        step_observation, step_env_state, step_info = self._signature
        return State(
            env_state=cast_like(env_state, step_env_state),
            observation=cast_like(observation, step_observation),
            reward=jnp.asarray(reward, jnp.float32),
            termination=termination,
            truncation=done & ~termination,
            info=cast_like(dict(info), step_info),
            step_count=state.step_count + 1,
            key=next_key,
        )

    def _abstract_step(self) -> tuple[Any, Any, dict[str, Any]]:
        """Shapes and dtypes of what `step_env` returns: the reference every state is cast to."""
        key = jax.random.key(0)
        _, env_state = jax.eval_shape(lambda k: self.env.reset_env(k, self.params), key)
        action = jax.ShapeDtypeStruct((), jnp.int32)
        observation, next_state, _, _, info = jax.eval_shape(
            lambda k, s, a: self.env.step_env(k, s, a, self.params), key, env_state, action
        )
        return observation, next_state, dict(info)

    def render(self, state: State) -> Array:
        """`uint8[H, W, 3]` of the state through Craftax's own pixel renderer (jittable): a Pixels env's observation
        is that picture already (scaled to [0, 1]); a Symbolic env is drawn with the game's textures at
        `BLOCK_PIXEL_SIZE_IMG` pixels a block."""
        if state.observation.ndim == 3:
            return jnp.clip(jnp.round(state.observation * 255), 0, 255).astype(jnp.uint8)
        if self._pixel_renderer is None:
            self._pixel_renderer = _pixel_renderer(self.env)
        pixels = self._pixel_renderer(state.env_state)
        return jnp.clip(jnp.round(pixels), 0, 255).astype(jnp.uint8)

    def __repr__(self) -> str:
        return f"CraftaxAdapter({self.env.name})"


def _pixel_renderer(env: Any) -> Any:
    """Craftax's (or Craftax-Classic's) `render_craftax_pixels` for `env`, textures loaded from the craftax package."""
    if type(env).__module__.startswith("craftax.craftax_classic"):
        from craftax.craftax_classic.constants import BLOCK_PIXEL_SIZE_IMG
        from craftax.craftax_classic.renderer import make_craftax_pixel_renderer
    else:
        from craftax.craftax.constants import BLOCK_PIXEL_SIZE_IMG
        from craftax.craftax.renderer import make_craftax_pixel_renderer
    return make_craftax_pixel_renderer(BLOCK_PIXEL_SIZE_IMG)


__all__ = ["CraftaxAdapter"]
