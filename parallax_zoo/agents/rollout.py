"""Trajectory collection: one `lax.scan` over a `VmapWrapper` env with selective reset.

Each step reads the per-slot view of the state, acts, steps the env, keeps
the pre-reset next observation (truncated episodes bootstrap from its value,
docs/baselines.md), and only then resets the finished envs. The scan body is kept
to acting and stepping: the critic runs once after the scan, over every
step's observation and the final one (the params are fixed during a rollout,
so the values are the ones a per-step critic would give). A step's pre-reset
next observation is the next step's observation except in envs that reset, and
of those only the truncated ones bootstrap from it, so the critic runs at the next
observation only on steps where some slot was truncated. Every step's keys
are split before the scan, to the same keys the step would split (the reset key
is split across the envs only when a step resets).
PPO and MAPPO collect with `collect`; evaluation plays the same steps a chunk at a time
(`first_episode_returns`) and stops once every env's first episode has ended.
A recurrent policy (`Policy.recurrent`) collects
through the same step with its `Memory` carried by the scan (`collect_recurrent`): the hidden state is
reset before each step whose previous step ended the env's episode (the pre-reset state's `done`), and
its values come from the step itself, the truncated envs' bootstrap values from one more step.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Protocol, cast

import jax
import jax.numpy as jnp
from jax.sharding import Mesh
from jaxtyping import Array, Bool, Float, PRNGKeyArray

from parallax.core import MARLState, State
from parallax.wrappers import EpisodeStats, RecordEpisodeStatistics, VmapWrapper
from parallax_zoo.agents.player import Player
from parallax_zoo.agents.recurrent import Memory
from parallax_zoo.agents.sharding import check_divisible, shard_env_batch
from parallax_zoo.agents.slots import Slots, read_slots, slot_boundaries
from parallax_zoo.agents.when_any import when_any


class RecurrentRolloutPolicy(Player, Protocol):
    """What `collect_recurrent` needs from a policy with a hidden state (`Policy` with a recurrent model)."""

    @property
    def recurrent(self) -> bool: ...

    def initial_memory(self, batch_shape: tuple[int, ...]) -> Memory: ...

    def act_memory(self, hidden: Array, slots: Slots, key: PRNGKeyArray) -> tuple[Array, Array, Array, Array]: ...

    def value_memory(self, hidden: Array, slots: Slots) -> Array: ...


def is_recurrent(policy: Player) -> bool:
    """Whether `policy` keeps a hidden state, so that `collect` carries its `Memory`."""
    return bool(getattr(policy, "recurrent", False))


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class Transition:
    """One step of every env's slots; a trajectory is a `Transition` whose fields lead with time.

    The protocol's pairing (docs/protocol.md): `active` is the mask at the step's start (valid), `reward`
    is the next state's `agents.reward`; `termination`/`truncation` are per slot
    (`slot_boundaries`). `bootstrap_value` is the value of the next, pre-reset
    observation; `episode_return` is the last finished episode's return per
    slot, fresh where `episode_finished`.
    """

    observation: Float[Array, " *batch agents obs_dim"]
    global_observation: Float[Array, " *batch global_dim"]
    action_mask: Bool[Array, " *batch agents ..."] | None
    action: Array
    log_prob: Float[Array, " *batch agents"]
    value: Float[Array, " *batch agents"]
    reward: Float[Array, " *batch agents"]
    active: Bool[Array, " *batch agents"]
    termination: Bool[Array, " *batch agents"]
    truncation: Bool[Array, " *batch agents"]
    bootstrap_value: Float[Array, " *batch agents"]
    episode_return: Float[Array, " *batch agents"]
    episode_finished: Bool[Array, " *batch"]
    episode_start: Bool[Array, " *batch"] | None = None
    """Recurrent policies only: the step before ended the env's episode, so the hidden state was reset."""

    def slots(self) -> Slots:
        """What the policy saw at this step, to evaluate it again under new params."""
        return Slots(self.observation, self.global_observation, self.action_mask, self.active, self.reward)


def episode_stats(state: State | MARLState) -> EpisodeStats:
    """The `EpisodeStats` that `RecordEpisodeStatistics` keeps in `info`, with a clear error if absent."""
    stats = state.info.get(RecordEpisodeStatistics.KEY)
    if not isinstance(stats, EpisodeStats):
        raise ValueError(
            "collect: the env must be wrapped as RecordEpisodeStatistics(VmapWrapper(env, num_envs)) "
            "so that finished episodes' returns are recorded."
        )
    return stats


def step_keys(key: PRNGKeyArray, num_steps: int) -> tuple[PRNGKeyArray, PRNGKeyArray]:
    """Each step's action key and reset key, both `[num_steps]`: step `t` splits `split(key, num_steps)[t]` in two.

    `VmapWrapper.reset` splits the reset key across the envs inside the reset branch, so only
    steps that reset pay for it, and no `[num_steps, num_envs]` block of keys is compiled.
    """
    keys = jax.vmap(jax.random.split)(jax.random.split(key, num_steps))
    return keys[:, 0], keys[:, 1]


def rollout_step(
    env: Any, policy: Player, state: State | MARLState, act_key: PRNGKeyArray, reset_key: PRNGKeyArray
) -> tuple[State | MARLState, Transition, Array]:
    """Act in every env, step, record the transition, then reset the finished envs.

    `reset_key` is one key or one per env, as `VmapWrapper.reset` takes it. Returns
    which envs reset beside the transition; its `bootstrap_value` is the value of the
    pre-reset next observation in the truncated slots (0 in the others: advantages read it
    only there) and its `value` is 0, for `collect` to fill in after the scan. The critic
    runs only on steps where some slot was truncated, which on most envs is far rarer than
    an episode ending (a Brax hopper falls long before its time limit).
    """
    slots = read_slots(state)
    action, log_prob, _ = policy.act_slots(slots, act_key)
    next_state, transition, next_slots = record_step(env, policy, state, slots, action, log_prob)
    truncated = transition.truncation
    bootstrap_value = when_any(truncated, truncated_values, no_values, policy, next_slots, truncated)
    state = reset_finished(env, next_state, reset_key)
    return state, dataclasses.replace(transition, bootstrap_value=bootstrap_value), next_state.done


def record_step(
    env: Any, policy: Player, state: State | MARLState, slots: Slots, action: Array, log_prob: Array
) -> tuple[State | MARLState, Transition, Slots]:
    """Step every env with the slots' `action` and record the transition (values left at zero); the next
    state is returned before any reset, with its slots."""
    next_state = env.step(state, policy.env_action(action))
    next_slots = read_slots(next_state)
    termination, truncation = slot_boundaries(next_state, next_slots)
    stats = episode_stats(next_state)
    no_value = jnp.zeros(slots.active.shape, jnp.float32)
    transition = Transition(
        observation=slots.observation,
        global_observation=slots.global_observation,
        action_mask=slots.action_mask,
        action=action,
        log_prob=log_prob,
        value=no_value,
        reward=next_slots.reward,
        active=slots.active,
        termination=termination,
        truncation=truncation,
        bootstrap_value=no_value,
        episode_return=jnp.asarray(stats.episode_return, jnp.float32).reshape(no_value.shape),
        episode_finished=stats.finished,
    )
    return next_state, transition, next_slots


def truncated_values(policy: Player, next_slots: Slots, truncated: Array) -> Array:
    """The critic's value of each truncated slot's pre-reset next observation, 0 elsewhere."""
    return jnp.where(truncated, policy.value(next_slots), 0.0)


def truncated_memory_values(
    policy_and_hidden: tuple[RecurrentRolloutPolicy, Array], next_slots: Slots, truncated: Array
) -> Array:
    """`truncated_values` of a recurrent policy, one step on from its hidden state."""
    policy, hidden = policy_and_hidden
    return jnp.where(truncated, policy.value_memory(hidden, next_slots), 0.0)


def no_values(policy: Any, next_slots: Slots, truncated: Array) -> Array:
    """`truncated_values` on a step without truncations."""
    return jnp.zeros(truncated.shape, jnp.float32)


def reset_finished(env: Any, next_state: State | MARLState, reset_key: PRNGKeyArray) -> State | MARLState:
    """Reset the envs whose episode just ended (only on steps where some did, `when_any`)."""

    def reset(finished: State | MARLState, key: PRNGKeyArray) -> State | MARLState:
        return env.reset(key=key, state=finished, done=finished.done)

    return when_any(next_state.done, reset, lambda going_on, _: going_on, next_state, reset_key)


def recurrent_rollout_step(
    env: Any,
    policy: RecurrentRolloutPolicy,
    state: State | MARLState,
    memory: Memory,
    act_key: PRNGKeyArray,
    reset_key: PRNGKeyArray,
) -> tuple[State | MARLState, Memory, Transition]:
    """`rollout_step` for a recurrent policy: reset the hidden state where the previous step ended an episode,
    act and record the step's values, then bootstrap truncated envs from one more step of their hidden state."""
    slots = read_slots(state)
    hidden, action, log_prob, value = policy.act_memory(memory.at_step_start(), slots, act_key)
    next_state, transition, next_slots = record_step(env, policy, state, slots, action, log_prob)
    truncated = transition.truncation
    bootstrap_value = when_any(truncated, truncated_memory_values, no_values, (policy, hidden), next_slots, truncated)
    transition = dataclasses.replace(
        transition, value=value, bootstrap_value=bootstrap_value, episode_start=memory.episode_ended
    )
    return reset_finished(env, next_state, reset_key), Memory(hidden, next_state.done), transition


def collect_recurrent(
    env: Any,
    policy: RecurrentRolloutPolicy,
    state: State | MARLState,
    memory: Memory,
    key: PRNGKeyArray,
    num_steps: int,
    mesh: Mesh | None = None,
) -> tuple[State | MARLState, Memory, Transition]:
    """`collect` for a recurrent policy, from `memory` (the hidden state before the first step): the final
    state and memory, and the trajectory `[T, ...]` with its `episode_start`."""
    return scan_recurrent_steps(env, policy, state, memory, *step_keys(key, num_steps), mesh)


def scan_recurrent_steps(
    env: Any,
    policy: RecurrentRolloutPolicy,
    state: State | MARLState,
    memory: Memory,
    act_keys: PRNGKeyArray,
    reset_keys: PRNGKeyArray,
    mesh: Mesh | None = None,
) -> tuple[State | MARLState, Memory, Transition]:
    """`recurrent_rollout_step` under `lax.scan`, one step per key of `act_keys` and `reset_keys`."""

    def step(
        carry: tuple[State | MARLState, Memory], keys: tuple[PRNGKeyArray, PRNGKeyArray]
    ) -> tuple[tuple[State | MARLState, Memory], Transition]:
        state, memory, transition = recurrent_rollout_step(env, policy, *shard_env_batch(carry, mesh), *keys)
        return shard_env_batch((state, memory), mesh), shard_env_batch(transition, mesh)

    (state, memory), trajectory = jax.lax.scan(step, shard_env_batch((state, memory), mesh), (act_keys, reset_keys))
    return state, memory, shard_env_batch(trajectory, mesh, env_axis=1)


def collect(
    env: Any,
    policy: Player,
    state: State | MARLState,
    key: PRNGKeyArray,
    num_steps: int,
    mesh: Mesh | None = None,
) -> tuple[State | MARLState, Transition]:
    """`num_steps` rollout steps under `lax.scan`; returns the final state and the trajectory `[T, ...]`.

    With a `mesh`, the env batch of the state and the trajectory is split across its devices (`sharding.py`).
    A recurrent policy starts from a fresh memory (`collect_recurrent` carries one across rollouts).
    """
    if is_recurrent(policy):
        recurrent = cast(RecurrentRolloutPolicy, policy)
        memory = recurrent.initial_memory(tuple(state.termination.shape))
        state, _, trajectory = collect_recurrent(env, recurrent, state, memory, key, num_steps, mesh)
        return state, trajectory

    state, trajectory, reset = scan_steps(env, policy, state, *step_keys(key, num_steps), mesh)
    # One critic pass over every step's observation and the final one: where no env reset, the
    # pre-reset next observation is the next step's, so its value is the next step's value.
    final = jax.tree_util.tree_map(lambda x: x[None], read_slots(state))
    every = jax.tree_util.tree_map(lambda a, b: jnp.concatenate([a, b]), trajectory.slots(), final)
    values = policy.value(every)
    value = values[:-1]
    ended = reset.reshape(reset.shape + (1,) * (value.ndim - reset.ndim))
    bootstrap_value = jnp.where(ended, trajectory.bootstrap_value, values[1:])
    trajectory = dataclasses.replace(trajectory, value=value, bootstrap_value=bootstrap_value)
    return state, shard_env_batch(trajectory, mesh, env_axis=1)


def scan_steps(
    env: Any,
    policy: Player,
    state: State | MARLState,
    act_keys: PRNGKeyArray,
    reset_keys: PRNGKeyArray,
    mesh: Mesh | None = None,
) -> tuple[State | MARLState, Transition, Bool[Array, "steps envs"]]:
    """`rollout_step` under `lax.scan`, one step per key: the final state, the trajectory (values left at zero)
    and which envs reset at each step."""

    def step(
        state: State | MARLState, keys: tuple[PRNGKeyArray, PRNGKeyArray]
    ) -> tuple[State | MARLState, tuple[Transition, Array]]:
        state, transition, reset = rollout_step(env, policy, shard_env_batch(state, mesh), *keys)
        return shard_env_batch(state, mesh), shard_env_batch((transition, reset), mesh)

    state, (trajectory, reset) = jax.lax.scan(step, shard_env_batch(state, mesh), (act_keys, reset_keys))
    trajectory, reset = shard_env_batch((trajectory, reset), mesh, env_axis=1)
    return state, trajectory, reset


FIRST_EPISODES_CHUNK = 128
"""Steps `first_episode_returns` plays between two looks at whether every env's first episode has ended."""


def first_episode_returns(
    env: Any,
    policy: Player,
    state: State | MARLState,
    key: PRNGKeyArray,
    max_steps: int,
    mesh: Mesh | None = None,
) -> tuple[Float[Array, "envs agents"], Bool[Array, " envs"]]:
    """Per-slot return of each env's first episode from `state`, and whether it finished within `max_steps`.

    `env` is `RecordEpisodeStatistics(VmapWrapper(...))` freshly reset to `state`;
    returns of unfinished episodes are 0. This is how evaluation plays episodes.
    The steps are those of one `collect` of `max_steps` steps (the same keys), played
    `FIRST_EPISODES_CHUNK` at a time and no further once every first episode has ended,
    so a time limit far beyond the episodes (Craftax's 100,000 steps) costs nothing.
    """
    chunk = min(max_steps, FIRST_EPISODES_CHUNK)
    padded = jnp.minimum(jnp.arange(max_steps + -max_steps % chunk), max_steps - 1)  # the last key again, to fill
    act_keys, reset_keys = (keys[padded] for keys in step_keys(key, max_steps))
    memory = (
        cast(RecurrentRolloutPolicy, policy).initial_memory(state.termination.shape) if is_recurrent(policy) else None
    )
    active = read_slots(state).active
    returns, ended = jnp.zeros(active.shape, jnp.float32), jnp.zeros(active.shape[:1], jnp.bool_)

    def play_chunk(carry: tuple[Array, Any, Any, Array, Array]) -> tuple[Array, Any, Any, Array, Array]:
        start, state, memory, returns, ended = carry
        act, reset = (jax.lax.dynamic_slice_in_dim(k, start, chunk) for k in (act_keys, reset_keys))
        if memory is None:
            state, trajectory, _ = scan_steps(env, policy, state, act, reset, mesh)
        else:
            recurrent = cast(RecurrentRolloutPolicy, policy)
            state, memory, trajectory = scan_recurrent_steps(env, recurrent, state, memory, act, reset, mesh)
        within = start + jnp.arange(chunk) < max_steps  # the padding's steps never count
        finished = trajectory.episode_finished & within[:, None]
        first = trajectory.episode_return[jnp.argmax(finished, axis=0), jnp.arange(finished.shape[1])]
        returns = jnp.where((finished.any(axis=0) & ~ended)[:, None], first, returns)
        return start + chunk, state, memory, returns, ended | finished.any(axis=0)

    def going_on(carry: tuple[Array, Any, Any, Array, Array]) -> Array:
        start, *_, ended = carry
        return (start < max_steps) & ~ended.all()

    start = jnp.zeros((), jnp.int32)
    *_, returns, ended = jax.lax.while_loop(going_on, play_chunk, (start, state, memory, returns, ended))
    return returns, ended


def play_episodes(
    env: Any, policy: Player, key: PRNGKeyArray, num_episodes: int, max_steps: int, mesh: Mesh | None = None
) -> tuple[Float[Array, "episodes agents"], Bool[Array, " episodes"]]:
    """Play `num_episodes` episodes of an unbatched `env` side by side: per-slot returns and which finished.

    `max_steps` should cover the env's time limit. Use `players.Greedy(policy)` for greedy evaluation.
    With a `mesh`, the episodes are split across its devices.
    """
    check_divisible(num_episodes, mesh, "play_episodes", "episodes")
    vec_env = RecordEpisodeStatistics(VmapWrapper(env, num_episodes))
    reset_key, play_key = jax.random.split(key)
    return first_episode_returns(vec_env, policy, vec_env.reset(key=reset_key), play_key, max_steps, mesh)
