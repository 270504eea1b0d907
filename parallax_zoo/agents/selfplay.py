"""Self-play evaluation for zero-sum games: head-to-head matches and a fixed-size buffer of past policies.

`head_to_head` seats the policy in slot `e % num_agents` of episode `e` (so
it plays every seat equally often), lets the opponent take the other slots
and reports the seated slot's results. `SnapshotBuffer` keeps earlier
policies inside the jitted training loop so the current policy can be
measured against them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, PRNGKeyArray

from parallax.wrappers import RecordEpisodeStatistics, VmapWrapper
from parallax_zoo.agents.players import Greedy, Matchup, RandomPlayer
from parallax_zoo.agents.policy import Policy
from parallax_zoo.agents.rollout import RolloutPolicy, collect

Results = dict[str, Any]


def first_episode_returns(env: Any, players: Matchup, key: PRNGKeyArray, num_episodes: int, max_steps: int) -> Array:
    """Per-slot return `[num_episodes, agents]` of each env's first episode (0 where none finished)."""
    vec_env = RecordEpisodeStatistics(VmapWrapper(env, num_episodes))
    reset_key, play_key = jax.random.split(key)
    _, trajectory = collect(vec_env, players, vec_env.reset(key=reset_key), play_key, max_steps)
    finished = trajectory.episode_finished
    first = jnp.argmax(finished, axis=0)
    returns = trajectory.episode_return[first, jnp.arange(num_episodes)]
    return jnp.where(finished.any(axis=0)[:, None], returns, 0.0)


def head_to_head(
    env: Any, player: RolloutPolicy, opponent: RolloutPolicy, key: PRNGKeyArray, num_episodes: int, max_steps: int,
    num_agents: int,
) -> Results:
    """Win, draw and loss rates and mean return of `player` against `opponent`, seats rotated per episode.

    `max_steps` must cover a whole episode (the env's time limit); unfinished episodes count as draws.
    """
    seat = jnp.arange(num_episodes) % num_agents
    seats = jnp.arange(num_agents)[None, :] == seat[:, None]
    returns = first_episode_returns(env, Matchup(player, opponent, seats), key, num_episodes, max_steps)
    mine = returns[jnp.arange(num_episodes), seat]
    return {
        "win": jnp.mean(mine > 0),
        "draw": jnp.mean(mine == 0),
        "loss": jnp.mean(mine < 0),
        "return": jnp.mean(mine),
    }


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
    env: Any, policy: Policy, snapshots: SnapshotBuffer, key: PRNGKeyArray, num_episodes: int, max_steps: int
) -> Results:
    """`policy` against the uniformly random player (greedy) and against every snapshot (both sampling).

    Results vs snapshots have a leading `capacity` axis; `snapshot_filled` marks the real ones.
    """
    random_key, snapshot_key = jax.random.split(key)
    num_agents = policy.model.num_agents
    vs_random = head_to_head(
        env, Greedy(policy), RandomPlayer(policy.model), random_key, num_episodes, max_steps, num_agents
    )

    def against(snapshot: Policy, match_key: PRNGKeyArray) -> Results:
        return head_to_head(env, policy, snapshot, match_key, num_episodes, max_steps, num_agents)

    vs_snapshots = jax.vmap(against)(snapshots.policies, jax.random.split(snapshot_key, snapshots.capacity))
    return {"vs_random": vs_random, "vs_snapshots": vs_snapshots, "snapshot_filled": snapshots.filled}
