"""Wrappers: batching, time limits, automatic resets and episode statistics.

Every wrapper returns the state type of the env it wraps, so a `State`
subclass keeps its extra fields, for JAX and for type checkers alike.
`reset` passes `state=` and `done=` through to a `VmapWrapper` further in.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Generic, cast

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Float, Int, PRNGKeyArray

from parallax.core import BaseEnv, EitherStateT, MARLState, State, fold_in_key, is_key_dtype, require_key
from parallax.spaces import Space, check_action


def _where_done(done: Array, on_done: Any, otherwise: Any) -> Any:
    """Leafwise `jnp.where(done, on_done, otherwise)`, `done` broadcast over trailing axes."""

    def select(a: Array, b: Array) -> Array:
        mask = jnp.reshape(done, done.shape + (1,) * (jnp.ndim(a) - done.ndim))
        return jnp.where(mask, a, b)

    return jax.tree_util.tree_map(select, on_done, otherwise)


class Wrapper(Generic[EitherStateT]):
    """Base class: forwards everything to `env`; subclasses override what they change.

    The spaces and `num_agents` (1 over a single-agent env) are forwarded as
    typed properties, which a subclass may assign in its `__init__` to change
    them; any other attribute is looked up on the wrapped env at runtime.
    """

    def __init__(self, env: BaseEnv[EitherStateT]):
        self.env = env

    @property
    def action_space(self) -> Space:
        override = self.__dict__.get("_action_space")
        return self.env.action_space if override is None else override

    @action_space.setter
    def action_space(self, space: Space) -> None:
        self._action_space = space

    @property
    def observation_space(self) -> Space:
        override = self.__dict__.get("_observation_space")
        return self.env.observation_space if override is None else override

    @observation_space.setter
    def observation_space(self, space: Space) -> None:
        self._observation_space = space

    @property
    def num_agents(self) -> int:
        """The wrapped env's agent slots; 1 for a single-agent env."""
        if "_num_agents" in self.__dict__:
            return self._num_agents
        return getattr(self.env, "num_agents", 1)

    @num_agents.setter
    def num_agents(self, num_agents: int) -> None:
        self._num_agents = num_agents

    @property
    def unwrapped(self) -> Any:
        """The innermost environment."""
        env: Any = self.env
        while isinstance(env, Wrapper):
            env = env.env
        return env

    def reset(
        self,
        key: PRNGKeyArray,
        *,
        state: EitherStateT | None = None,
        done: Bool[Array, ...] | None = None,
    ) -> EitherStateT:
        """Reset; `state=` and `done=` (a selective reset) are passed on only when given."""
        if state is None and done is None:
            return self.env.reset(key=key)
        return cast(Any, self.env).reset(key=key, state=state, done=done)

    def step(self, state: EitherStateT, action: Array) -> EitherStateT:
        return self.env.step(state, action)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "env":
            raise AttributeError(name)
        return getattr(self.env, name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.env!r})"


class VmapWrapper(Wrapper[EitherStateT]):
    """Steps `num_envs` copies of an env with `jax.vmap`, and resets selectively.

    `reset(key=k)` resets every env; `reset(key=k, state=s, done=d)` resets only
    the envs where `d` is true and leaves the others bit-identical, so terminal
    observations can be read from `s` before the reset. `key` is one key (split
    across the envs) or one key per env.

    A selective reset builds a fresh state for every env and keeps the finished
    envs' ones, unless `reset_batch` is set: then it resets only the finished
    envs, `reset_batch` at a time (gathered, reset, scattered back), so its
    cost follows the number that finished. That pays where a reset costs about
    a step or more (a generated world or level, a physics model's first
    kinematics): envs whose `costly_reset` is true get `num_envs // 8` by
    default (docs/protocol.md, "Wrappers").
    """

    def __init__(self, env: BaseEnv[EitherStateT], num_envs: int, *, reset_batch: int | None = None):
        if not isinstance(num_envs, int) or isinstance(num_envs, bool) or num_envs < 1:
            raise ValueError(f"VmapWrapper needs num_envs to be an int >= 1, got {num_envs!r}")
        if reset_batch is not None and (
            not isinstance(reset_batch, int) or isinstance(reset_batch, bool) or not 1 <= reset_batch <= num_envs
        ):
            raise ValueError(
                f"VmapWrapper needs reset_batch to be None or an int from 1 to num_envs ({num_envs}), "
                f"got {reset_batch!r}"
            )
        super().__init__(env)
        self._num_envs = num_envs
        if reset_batch is None and getattr(env, "costly_reset", False):
            reset_batch = max(1, num_envs // 8)
        self.reset_batch = reset_batch

    @property
    def num_envs(self) -> int:
        return self._num_envs

    def reset(
        self,
        key: PRNGKeyArray,
        *,
        state: EitherStateT | None = None,
        done: Bool[Array, ...] | None = None,
    ) -> EitherStateT:
        require_key(key, "VmapWrapper.reset")
        if (state is None) != (done is None):
            given, missing = ("state", "done") if done is None else ("done", "state")
            raise ValueError(
                f"VmapWrapper.reset: selective reset needs both state= and done=; got {given}= without {missing}=. "
                "Pass both to reset only the finished envs, or neither to reset them all."
            )
        keys = self._per_env_keys(key)
        if state is None or done is None:
            return self._fresh(keys)
        done = jnp.asarray(done)
        if done.shape != (self.num_envs,) or done.dtype != jnp.bool_:
            raise ValueError(
                f"VmapWrapper.reset: done must be a bool array of shape ({self.num_envs},), "
                f"got {done.dtype} of shape {done.shape}."
            )
        if self.reset_batch is None:
            return _where_done(done, self._fresh(keys), state)
        return self._reset_finished_only(keys, state, done)

    def _fresh(self, keys: PRNGKeyArray) -> EitherStateT:
        return jax.vmap(lambda k: self.env.reset(key=k))(keys)

    def _reset_finished_only(self, keys: PRNGKeyArray, state: EitherStateT, done: Array) -> EitherStateT:
        """Reset the finished envs `reset_batch` at a time, each from its own key, until none is left waiting.

        A loop rather than a branch, so that under `vmap` (seeds batched) it
        still runs only as many rounds as the batch member with the most finished
        envs needs.
        """
        batch, num_envs = self.reset_batch, self.num_envs

        def reset_some(carry: tuple[EitherStateT, Array]) -> tuple[EitherStateT, Array]:
            state, waiting = carry
            index = jnp.nonzero(waiting, size=batch, fill_value=num_envs)[0]  # num_envs: past the end, dropped
            fresh = self._fresh(keys[jnp.minimum(index, num_envs - 1)])
            state = jax.tree_util.tree_map(lambda old, new: old.at[index].set(new, mode="drop"), state, fresh)
            return state, waiting.at[index].set(False, mode="drop")

        state, _ = jax.lax.while_loop(lambda carry: carry[1].any(), reset_some, (state, done))
        return state

    def step(self, state: EitherStateT, action: Array) -> EitherStateT:
        check_action(self.action_space, action, (self.num_envs,), where="VmapWrapper.step")
        return jax.vmap(self.env.step)(state, action)

    def _per_env_keys(self, key: PRNGKeyArray) -> PRNGKeyArray:
        batch_shape = key.shape if is_key_dtype(key.dtype) else key.shape[:-1]
        if batch_shape == ():
            return jax.random.split(key, self.num_envs)
        if batch_shape == (self.num_envs,):
            return key
        raise ValueError(
            f"VmapWrapper.reset: key must be a single key or one key per env, shape ({self.num_envs},); "
            f"got key batch shape {batch_shape}."
        )

    def __repr__(self) -> str:
        batch = "" if self.reset_batch is None else f", reset_batch={self.reset_batch}"
        return f"VmapWrapper({self.env!r}, num_envs={self.num_envs}{batch})"


class TimeLimit(Wrapper[EitherStateT]):
    """Sets `truncation` once `step_count` reaches `max_steps`."""

    def __init__(self, env: BaseEnv[EitherStateT], max_steps: int):
        if not isinstance(max_steps, int) or max_steps < 1:
            raise ValueError(f"TimeLimit needs max_steps to be an int >= 1, got {max_steps!r}")
        super().__init__(env)
        self.max_steps = max_steps

    def step(self, state: EitherStateT, action: Array) -> EitherStateT:
        next_state = self.env.step(state, action)
        truncation = next_state.truncation | (next_state.step_count >= self.max_steps)
        return dataclasses.replace(next_state, truncation=truncation)

    def __repr__(self) -> str:
        return f"TimeLimit({self.env!r}, max_steps={self.max_steps})"


class AutoResetWrapper(Wrapper[EitherStateT]):
    """Starts a new episode as soon as one ends, inside or outside `VmapWrapper`.

    On the step that ends an episode the returned state carries that step's
    reward, `termination`, `truncation` and `info`, and everything else
    (observation, env_state, step_count, the agents' observations and masks)
    from a fresh reset: the terminal observation is replaced. Use
    `VmapWrapper`'s selective reset instead where the terminal observation is
    needed.

    The key advances on every step and through every reset: the reset key is
    folded from the key the step used (docs/adding-an-environment.md: never reuse the
    step's key for the next episode), and an episode that goes on carries
    that key, whose reset was discarded, into its next step.
    """

    RESET_STREAM = 0x5E5E7

    def step(self, state: EitherStateT, action: Array) -> EitherStateT:
        next_state = self.env.step(state, action)
        reset_key = fold_in_key(state.key, self.RESET_STREAM)
        fresh = cast(Any, self.env).reset(key=reset_key)
        if isinstance(next_state, MARLState):
            agents = dataclasses.replace(fresh.agents, reward=next_state.agents.reward)
            restarted = dataclasses.replace(fresh, agents=agents)
        else:
            restarted = dataclasses.replace(fresh, reward=cast(State, next_state).reward)
        restarted = dataclasses.replace(
            restarted,
            termination=next_state.termination,
            truncation=next_state.truncation,
            info=next_state.info,
        )
        continued = dataclasses.replace(next_state, key=reset_key)
        return _where_done(next_state.done, restarted, continued)


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class EpisodeStats:
    """Running and last-finished episode return and length (per agent for multi-agent envs)."""

    episode_return: Float[Array, ...]
    episode_length: Int[Array, ...]
    current_return: Float[Array, ...]
    current_length: Int[Array, ...]
    finished: Bool[Array, ...]


class RecordEpisodeStatistics(Wrapper[EitherStateT]):
    """Keeps `info["episode"]`: an `EpisodeStats` with the return and length of the last finished episode.

    `finished` is true on the step that ends an episode, when `episode_return`
    and `episode_length` have just been updated. Works inside or outside
    `VmapWrapper`, and across its selective resets.
    """

    KEY = "episode"

    def reset(
        self,
        key: PRNGKeyArray,
        *,
        state: EitherStateT | None = None,
        done: Bool[Array, ...] | None = None,
    ) -> EitherStateT:
        if state is None or done is None:
            fresh = super().reset(key=key, state=state, done=done)
            return self._with_stats(fresh, self._zero_stats(fresh))
        fresh = super().reset(key=key, state=self._without_stats(state), done=done)
        old: EpisodeStats = state.info[self.KEY]
        zero_current = EpisodeStats(
            episode_return=old.episode_return,
            episode_length=old.episode_length,
            current_return=jnp.zeros_like(old.current_return),
            current_length=jnp.zeros_like(old.current_length),
            finished=jnp.zeros_like(old.finished),
        )
        return self._with_stats(fresh, _where_done(jnp.asarray(done), zero_current, old))

    def step(self, state: EitherStateT, action: Array) -> EitherStateT:
        stats: EpisodeStats = state.info[self.KEY]
        next_state = self.env.step(self._without_stats(state), action)
        current_return = stats.current_return + _reward(next_state)
        current_length = stats.current_length + 1
        done = next_state.done
        updated = EpisodeStats(
            episode_return=_where_done(done, current_return, stats.episode_return),
            episode_length=_where_done(done, current_length, stats.episode_length),
            current_return=_where_done(done, jnp.zeros_like(current_return), current_return),
            current_length=_where_done(done, jnp.zeros_like(current_length), current_length),
            finished=done,
        )
        return self._with_stats(next_state, updated)

    def _zero_stats(self, state: EitherStateT) -> EpisodeStats:
        reward = _reward(state)
        return EpisodeStats(
            episode_return=jnp.zeros_like(reward),
            episode_length=jnp.zeros_like(state.step_count),
            current_return=jnp.zeros_like(reward),
            current_length=jnp.zeros_like(state.step_count),
            finished=jnp.zeros_like(state.done),
        )

    def _with_stats(self, state: EitherStateT, stats: EpisodeStats) -> EitherStateT:
        return dataclasses.replace(state, info={**state.info, self.KEY: stats})

    def _without_stats(self, state: EitherStateT) -> EitherStateT:
        info = {k: v for k, v in state.info.items() if k != self.KEY}
        return dataclasses.replace(state, info=info)


class ValidateActions(Wrapper[EitherStateT]):
    """Refuses an action outside the action space, and a step from an episode that has ended.

    Without it an out-of-range action has each env's documented meaning
    (docs/protocol.md, "Out-of-range actions"); with it, `step` checks
    `action_space.contains(action)` and that the episode goes on with
    Equinox's `error_if`, which raises from compiled code too: eagerly, under
    `jit`, `vmap` and `lax.scan` alike, so the Gymnasium and PettingZoo exports
    keep working. A failed check names the space (and, called eagerly, the
    action). Equinox is imported on the first validated step (the `validate`
    extra).

    An ended episode is a `done` state with `step_count > 0`: a state that
    `AutoResetWrapper` restarted carries the old episode's flags with a fresh
    `step_count` of 0, and steps on. Around a `VmapWrapper` it checks every env.
    """

    def step(self, state: EitherStateT, action: Array) -> EitherStateT:
        error_if = _error_if()
        batch_shape = (self.num_envs,) if hasattr(self.env, "num_envs") else ()
        name = f"{type(self.unwrapped).__name__}.step"
        check_action(self.action_space, action, batch_shape, where=name)
        contains = self.action_space.contains
        inside = jax.vmap(contains)(action) if batch_shape else contains(action)
        action = error_if(
            action,
            ~jnp.all(inside),
            f"{name}: {_named(action)} is outside the action space {_describe(self.action_space)}",
        )
        ended = state.done & (state.step_count > 0)
        flags = _named_flags(state)
        action = error_if(
            action, jnp.any(ended), f"{name}: the episode has ended{flags}; reset it before stepping again"
        )
        return self.env.step(state, action)


def _error_if() -> Any:
    """Equinox's `error_if`, imported when a validated env first steps (`import parallax` loads jax only)."""
    try:
        import equinox
    except ImportError as error:
        raise ImportError(
            "ValidateActions (make(..., validate=True)) checks actions with Equinox: pip install "
            "'parallax-zoo[validate]'"
        ) from error
    return equinox.error_if


def _values(tree: Any) -> Any:
    """`tree`'s values as NumPy arrays where they are known now (a call outside `jit`, `vmap` and `scan`), else None."""
    try:
        return jax.tree_util.tree_map(np.asarray, tree)
    except jax.errors.TracerArrayConversionError:
        return None


def _named(action: Any) -> str:
    """`action 7` where the action's value is known now; `the action` inside a transformation."""
    values = _values(action)
    return "the action" if values is None else f"action {values}"


def _named_flags(state: State | MARLState) -> str:
    """` (termination True, truncation False)` where the flags' values are known now, else nothing."""
    flags = _values((state.termination, state.truncation))
    return "" if flags is None else f" (termination {flags[0]}, truncation {flags[1]})"


def _describe(space: Space) -> str:
    """A space's repr, with its dtype where the repr leaves it out."""
    dtype = space.dtype
    if isinstance(dtype, np.dtype) and dtype.name not in repr(space):
        return f"{space!r} of dtype {dtype.name}"
    return repr(space)


def _reward(state: State | MARLState) -> Array:
    """The reward to accumulate: the scalar one, or the per-agent slots."""
    if isinstance(state, MARLState):
        return state.agents.reward
    return state.reward


__all__ = [
    "AutoResetWrapper",
    "EpisodeStats",
    "RecordEpisodeStatistics",
    "TimeLimit",
    "ValidateActions",
    "VmapWrapper",
    "Wrapper",
]
