"""`GymnaxAdapter`: a gymnax 1.x environment as a parallax `Env`.

gymnax's own `step` auto-resets and so overwrites the terminal observation.
The adapter calls the environment's `step_env` instead, which never resets,
so the state returned at an episode's end holds the true terminal
observation (docs/protocol.md). Termination is `step_env`'s flag;
truncation is gymnax's own time limit, `is_truncated` against
`params.max_steps_in_episode`, reported separately.

gymnax gives out-of-range actions no meaning of their own (CartPole pushes
with 99 times the force for action 99, a NaN torque turns Pendulum's state
NaN), so the adapter clips every action into the action space first, a NaN
entry counting as 0 (docs/protocol.md, "Out-of-range actions").

Because the adapter never calls gymnax's `step`, a few bsuite counters that
gymnax's `DeepSea.step` carries across its own resets (`total_bad_episodes`,
`denoised_return`) restart with every episode here.
"""

from __future__ import annotations

from typing import Any

import gymnax.environments.spaces as gymnax_spaces
import jax
import jax.numpy as jnp
import numpy as np
from gymnax.environments.bsuite.memory_chain import MemoryChain
from gymnax.environments.bsuite.umbrella_chain import UmbrellaChain
from gymnax.environments.environment import Environment
from gymnax.environments.misc.gaussian_bandit import GaussianBandit
from gymnax.environments.misc.meta_maze import MetaMaze
from jaxtyping import Array, PRNGKeyArray

from parallax.adapters.base import Adapter, cast_like, reads_input, zeros_like_signature
from parallax.adapters.frames import GYMNAX_DRAWINGS, observation_frame
from parallax.core import State
from parallax.spaces import Box, Discrete, PyTreeSpace, Space, clip_action


class GymnaxAdapter(Adapter[State]):
    """Wraps a gymnax environment and its params; `params=None` means `env.default_params`.

    The params are static configuration, closed over by `reset` and `step`.
    `env_state` is gymnax's `EnvState`; `info` holds what `step_env` reports
    (zeros of the same shapes after `reset`, so the pytree never changes).
    `reset` and `step` are jitted, as gymnax's own are. The state's key is
    split on every step where `step_env` draws random numbers and left as it
    is where it does not (CartPole, say), which saves a split per env step.
    """

    def __init__(self, env: Environment, params: Any = None):
        if not (hasattr(env, "step_env") and hasattr(env, "reset_env")):
            raise TypeError(
                f"GymnaxAdapter expects a gymnax Environment (with step_env and reset_env), got {type(env).__name__}. "
                "Create one with `env, params = gymnax.make(name)`."
            )
        self.env = env
        self.params = env.default_params if params is None else params
        self._step_signature, self._step_uses_key = self._abstract_step()
        self._action_space = to_parallax_space(env.action_space(self.params))
        observation, *_ = self._step_signature
        declared = _corrected_observation_space(env, self.params)
        self._observation_space = to_parallax_space(declared, emitted=observation)
        super().__init__()

    @property
    def episode_length(self) -> int:
        """gymnax's time limit: the step on which `truncation` becomes true."""
        return int(self.params.max_steps_in_episode)

    def _reset_unchecked(self, key: PRNGKeyArray) -> State:
        state_key, reset_key = jax.random.split(key)
        observation, env_state = self.env.reset_env(reset_key, self.params)
        step_observation, step_env_state, _, _, step_info = self._step_signature
        return State(
            env_state=cast_like(env_state, step_env_state),
            observation=cast_like(observation, step_observation),
            reward=jnp.zeros((), jnp.float32),
            termination=jnp.zeros((), jnp.bool_),
            truncation=jnp.zeros((), jnp.bool_),
            info=zeros_like_signature(step_info),
            step_count=jnp.zeros((), jnp.int32),
            key=state_key,
        )

    def _step_unchecked(self, state: State, action: Array) -> State:
        if self._step_uses_key:
            next_key, step_key = jax.random.split(state.key)
        else:
            next_key = step_key = state.key
        observation, env_state, reward, terminated, info = self.env.step_env(
            step_key, state.env_state, clip_action(self.action_space, action), self.params
        )
        step_observation, step_env_state, _, _, step_info = self._step_signature
        return State(
            env_state=cast_like(env_state, step_env_state),
            observation=cast_like(observation, step_observation),
            reward=jnp.asarray(reward, jnp.float32),
            termination=jnp.asarray(terminated, jnp.bool_),
            truncation=jnp.asarray(self.env.is_truncated(env_state, self.params), jnp.bool_),
            info=cast_like(dict(info), step_info),
            step_count=state.step_count + 1,
            key=next_key,
        )

    def _abstract_step(self) -> tuple[tuple[Any, Any, Any, Any, dict[str, Any]], bool]:
        """Shapes and dtypes of what `step_env` returns (the reference every state is cast to), and whether it uses its
        key."""
        key = jax.random.key(0)
        _, env_state = jax.eval_shape(lambda k: self.env.reset_env(k, self.params), key)
        action_space = self.env.action_space(self.params)
        action = jax.ShapeDtypeStruct(tuple(action_space.shape), jnp.dtype(action_space.dtype))
        jaxpr, (observation, next_state, reward, terminated, info) = jax.make_jaxpr(
            lambda k, s, a: self.env.step_env(k, s, a, self.params), return_shape=True
        )(key, env_state, action)
        return (observation, next_state, reward, terminated, dict(info)), reads_input(jaxpr, 0)

    def render(self, state: State) -> Array:
        """`uint8[H, W, 3]` of the state, drawn in `jnp` (so it jits): the classic-control envs as their scene,
        every other gymnax env (gymnax draws none itself) as its observation (`frames.observation_frame`)."""
        drawing = GYMNAX_DRAWINGS.get(self.env.name)
        if drawing is None:
            return observation_frame(state.observation)
        return drawing(state.env_state, self.params)

    def __repr__(self) -> str:
        return f"GymnaxAdapter({self.env.name})"


def to_parallax_space(space: Any, emitted: Any = None) -> Space:
    """The parallax space for a gymnax space, keeping per-dimension bounds.

    `emitted` is the shape and dtype the environment actually returns; where
    given it sets the dtype (gymnax's Catch, for one, declares int32 and
    emits float32), so the space always contains what the env emits.
    Dict and Tuple spaces become one `PyTreeSpace` over the nested structure.
    """
    tree = _space_tree(space, emitted)
    return PyTreeSpace(tree) if isinstance(tree, (dict, tuple)) else tree


def _space_tree(space: Any, emitted: Any) -> Any:
    """A leaf parallax space, or a dict or tuple of them mirroring gymnax's Dict and Tuple spaces."""
    if isinstance(space, gymnax_spaces.Dict):
        return {name: _space_tree(sub, _child(emitted, name)) for name, sub in space.spaces.items()}
    if isinstance(space, gymnax_spaces.Tuple):
        return tuple(_space_tree(sub, _child(emitted, i)) for i, sub in enumerate(space.spaces))
    shape = tuple(space.shape) if emitted is None else tuple(emitted.shape)
    dtype = jnp.dtype(space.dtype if emitted is None else emitted.dtype)
    if isinstance(space, gymnax_spaces.Discrete):
        if jnp.issubdtype(dtype, jnp.integer):
            return Discrete(space.n, shape=shape, dtype=dtype)
        return Box(0, space.n - 1, shape, dtype)
    if isinstance(space, gymnax_spaces.Box):
        return Box(_bound(space.low, dtype), _bound(space.high, dtype), shape, dtype)
    raise TypeError(
        f"GymnaxAdapter cannot convert the gymnax space {space!r}: it supports Discrete, Box, Dict and Tuple spaces."
    )


def _corrected_observation_space(env: Environment, params: Any) -> Any:
    """gymnax's observation space, with the bounds that gymnax 1.0.1 gets wrong replaced.

    The replacements are read off the environments' `get_obs`: MemoryChain's
    time-remaining entry reaches -1/memory_length on the final step and its
    context bits are -1 or +1; UmbrellaChain's time-remaining entry, 1 - t/L
    in float32, rounds to just below 0 at t = L; GaussianBandit's first entry
    is the last (Gaussian, unbounded) reward, MetaMaze's second-to-last the
    last reward (up to `params.reward`), and both end with the time, which
    `normalize_time` maps onto [-1, 2 t_max / 100 - 1].
    """
    declared = env.observation_space(params)
    if isinstance(env, UmbrellaChain):
        low = np.zeros(declared.shape)
        low[2] = -np.finfo(np.float32).eps
        return gymnax_spaces.Box(jnp.asarray(low), jnp.ones(declared.shape), declared.shape, declared.dtype)
    if isinstance(env, MetaMaze):
        rewards = (0.0, params.reward, params.punishment, params.reward + params.punishment)
        time_low, time_high = _time_range(params)
        low = np.concatenate([np.zeros(declared.shape[0] - 2), [min(rewards), time_low]])
        high = np.concatenate([np.ones(declared.shape[0] - 2), [max(rewards), time_high]])
        return gymnax_spaces.Box(jnp.asarray(low), jnp.asarray(high), declared.shape, declared.dtype)
    if isinstance(env, MemoryChain):
        bits = env.num_bits
        low = np.array([-1.0, 0.0] + [-1.0] * bits)
        high = np.array([1.0, bits - 1.0] + [1.0] * bits)
        return gymnax_spaces.Box(jnp.asarray(low), jnp.asarray(high), declared.shape, declared.dtype)
    if isinstance(env, GaussianBandit):
        time_low, time_high = _time_range(params)
        low = np.array([-np.inf, 0.0, 0.0, time_low])
        high = np.array([np.inf, 1.0, 1.0, time_high])
        return gymnax_spaces.Box(jnp.asarray(low), jnp.asarray(high), declared.shape, declared.dtype)
    return declared


def _time_range(params: Any) -> tuple[float, float]:
    """The range of the time entry of GaussianBandit's and MetaMaze's observations."""
    steps = float(params.max_steps_in_episode)
    if params.normalize_time:
        return -1.0, 2.0 * steps / 100.0 - 1.0
    return 0.0, steps


def _child(emitted: Any, index: Any) -> Any:
    if emitted is None:
        return None
    if isinstance(index, str) and not isinstance(emitted, dict):
        return getattr(emitted, index)
    return emitted[index]


def _bound(value: Any, dtype: np.dtype) -> np.ndarray:
    """A gymnax bound as a numpy array; clipped to the integer range where `dtype` is an integer."""
    bound = np.asarray(value, dtype=np.float64)
    if jnp.issubdtype(dtype, jnp.integer):
        limits = jnp.iinfo(dtype)
        return np.clip(bound, limits.min, limits.max)
    return bound


__all__ = ["GymnaxAdapter", "to_parallax_space"]
