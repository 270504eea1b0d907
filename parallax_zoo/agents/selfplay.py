"""Self-play evaluation for zero-sum games: head-to-head matches and a fixed-size buffer of past policies.

`head_to_head` seats the policy on one side of each episode (a team, or a
slot where the env has no teams), rotating sides so it plays each equally
often, lets the opponent take the other slots and reports the side's
results. `SnapshotBuffer` keeps earlier policies inside the jitted training
loop so the current policy can be measured against them. `collect_against`
is training's counterpart of `head_to_head`: a fixed `TrainingOpponent`
holds one side of some training envs and only the learner's slots are learned from
(`collect_recurrent_against` for a recurrent learner, its hidden state carried).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, cast

import jax
import jax.numpy as jnp
from jax.sharding import Mesh
from jaxtyping import Array, Bool, PRNGKeyArray

from parallax.core import AnyEnv, MARLState
from parallax.wrappers import RecordEpisodeStatistics, VmapWrapper
from parallax_zoo.agents.player import Player
from parallax_zoo.agents.players import Greedy, Matchup, RandomPlayer
from parallax_zoo.agents.policy import Policy
from parallax_zoo.agents.recurrent import Memory
from parallax_zoo.agents.rollout import (
    RecurrentRolloutPolicy,
    Transition,
    collect,
    collect_recurrent,
    first_episode_returns,
    is_recurrent,
)
from parallax_zoo.agents.sharding import check_divisible, shard_env_batch

Results = dict[str, Any]


@dataclass(frozen=True)
class TrainingOpponent:
    """A fixed player met in the first `envs` training envs, the learner holding each side in turn.

    The learner trains only on its own slots there; the remaining envs are self-play.
    """

    player: Player
    envs: int


def sides(state: MARLState) -> Array:
    """Each slot's side `[*batch, agents]`: its team where the env's `Agents` expose `team`, else its slot index."""
    team = getattr(state.agents, "team", None)
    if team is not None:
        return jnp.asarray(team, jnp.int32)
    return jnp.broadcast_to(jnp.arange(state.agents.active.shape[-1]), state.agents.active.shape)


def head_to_head(
    env: AnyEnv,
    player: Player,
    opponent: Player,
    key: PRNGKeyArray,
    num_episodes: int,
    max_steps: int,
    mesh: Mesh | None = None,
) -> Results:
    """Win, draw and loss rates, mean return, and per episode the `side` played and its `side_returns`.

    Episode `e` seats `player` on side `e % num_sides` (a team, or a single
    slot where the env has no teams) and `opponent` on every other slot; the
    side's return is the mean over its slots. `max_steps` must cover a whole
    episode (the env's time limit); episodes that do not finish count as draws.
    With a `mesh`, the episodes are split across its devices.
    """
    check_divisible(num_episodes, mesh, "head_to_head", "episodes")
    vec_env = RecordEpisodeStatistics(VmapWrapper(env, num_episodes))
    reset_key, play_key = jax.random.split(key)
    state = shard_env_batch(vec_env.reset(key=reset_key), mesh)
    ours = shard_env_batch(seated_slots(state, num_episodes), mesh)
    returns, _ = first_episode_returns(vec_env, Matchup(player, opponent, ours), state, play_key, max_steps, mesh)
    mine = jnp.sum(jnp.where(ours, returns, 0.0), axis=-1) / jnp.sum(ours, axis=-1)
    return {
        "win": jnp.mean(mine > 0),
        "draw": jnp.mean(mine == 0),
        "loss": jnp.mean(mine < 0),
        "return": jnp.mean(mine),
        "side_returns": mine,
        "side": held_side(sides(state)),
    }


def seated_slots(state: MARLState, contested: int | Array) -> Bool[Array, "envs agents"]:
    """The slots a player holds in a batch of games `[envs, agents]`.

    In env `e < contested` it holds side `e % num_sides` (so each side equally
    often) and an opponent the rest; in every later env it holds all slots.
    """
    slot_sides = sides(state)
    env_index = jnp.arange(slot_sides.shape[0])
    return (slot_sides == held_side(slot_sides)[:, None]) | (env_index >= contested)[:, None]


def held_side(slot_sides: Array) -> Array:
    """The side a seated player holds in each env `[envs]`: env `e` gets side `e % num_sides`."""
    return jnp.arange(slot_sides.shape[0]) % (jnp.max(slot_sides) + 1)


def collect_against(
    env: AnyEnv,
    policy: Player,
    opponent: TrainingOpponent,
    state: MARLState,
    key: PRNGKeyArray,
    num_steps: int,
    mesh: Mesh | None = None,
) -> tuple[MARLState, Transition]:
    """`rollout.collect` with `opponent.player` seated against `policy` in the first `opponent.envs` envs.

    The opponent's slots come back inactive in the trajectory, so no loss term learns from its moves.
    """
    learner = seated_slots(state, opponent.envs)
    final, trajectory = collect(env, Matchup(policy, opponent.player, learner), state, key, num_steps, mesh)
    return cast(MARLState, final), dataclasses.replace(trajectory, active=trajectory.active & learner)


def collect_recurrent_against(
    env: AnyEnv,
    policy: RecurrentRolloutPolicy,
    opponent: TrainingOpponent,
    state: MARLState,
    memory: Memory,
    key: PRNGKeyArray,
    num_steps: int,
    mesh: Mesh | None = None,
) -> tuple[MARLState, Memory, Transition]:
    """`collect_against` for a recurrent learner: its `memory` carried through the rollout and returned, as
    `rollout.collect_recurrent` does; the seated opponent is a player without a hidden state."""
    if is_recurrent(opponent.player):
        raise ValueError("a recurrent learner trains against a seated opponent without a hidden state only")
    learner = seated_slots(state, opponent.envs)
    none = jnp.zeros((*memory.hidden.shape[:-1], 0))  # the opponent's empty hidden state
    both = Memory((memory.hidden, none), memory.episode_ended)
    final, both, trajectory = collect_recurrent(
        env, cast(Any, Matchup(policy, opponent.player, learner)), state, both, key, num_steps, mesh
    )
    trajectory = dataclasses.replace(trajectory, active=trajectory.active & learner)
    return cast(MARLState, final), Memory(both.hidden[0], both.episode_ended), trajectory


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class SnapshotBuffer:
    """Up to `capacity` earlier policies, their params stacked on a leading axis; `count` says how many were pushed."""

    policies: Policy
    count: Array

    @classmethod
    def create(cls, policy: Policy, capacity: int) -> SnapshotBuffer:
        stacked = jax.tree_util.tree_map(lambda p: jnp.zeros((capacity,) + p.shape, p.dtype), policy)
        return cls(stacked, jnp.asarray(0, jnp.int32))

    @property
    def capacity(self) -> int:
        return jax.tree_util.tree_leaves(self.policies)[0].shape[0]

    @property
    def filled(self) -> Bool[Array, " capacity"]:
        """Which entries hold a snapshot."""
        return jnp.arange(self.capacity) < self.count

    def push(self, policy: Policy) -> SnapshotBuffer:
        """Store `policy`, overwriting the oldest snapshot once full."""
        index = self.count % self.capacity
        stacked = jax.tree_util.tree_map(lambda buffer, p: buffer.at[index].set(p), self.policies, policy)
        return SnapshotBuffer(stacked, self.count + 1)


def evaluate_self_play(
    env: AnyEnv,
    policy: Policy,
    snapshots: SnapshotBuffer,
    key: PRNGKeyArray,
    num_episodes: int,
    max_steps: int,
    mesh: Mesh | None = None,
) -> Results:
    """`policy` against the uniformly random player (greedy) and against every snapshot (both sampling).

    Results vs snapshots have a leading `capacity` axis; `snapshot_filled` marks the real ones.
    """
    random_key, snapshot_key = jax.random.split(key)
    vs_random = head_to_head(env, Greedy(policy), RandomPlayer(policy.model), random_key, num_episodes, max_steps, mesh)

    def against(snapshot: Policy, match_key: PRNGKeyArray) -> Results:
        return head_to_head(env, policy, snapshot, match_key, num_episodes, max_steps, mesh)

    vs_snapshots = jax.vmap(against)(snapshots.policies, jax.random.split(snapshot_key, snapshots.capacity))
    return {"vs_random": vs_random, "vs_snapshots": vs_snapshots, "snapshot_filled": snapshots.filled}
