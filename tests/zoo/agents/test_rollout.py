"""The rollout keeps the protocol's pairings: rewards with the previous active mask, per-slot
termination when an agent goes inactive, truncation bootstrapping from the pre-reset observation."""

from dataclasses import dataclass, field

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers.example_envs import GridWorld, Race

from parallax import TimeLimit
from parallax_zoo.agents import rollout
from parallax_zoo.agents.player_factories import random_player
from parallax_zoo.agents.policy import Policy
from parallax_zoo.agents.ppo import PPOConfig, model_for, vector_env
from parallax_zoo.agents.rollout import collect, play_episodes
from parallax_zoo.agents.slots import Slots


@dataclass(frozen=True)
class FixedActions:
    """Takes the same action in every env for each slot; its 'value' is the sum of the slot's observation."""

    actions: tuple[int, ...]
    multi_agent: bool

    def act_slots(self, slots: Slots, key):
        action = jnp.broadcast_to(jnp.asarray(self.actions, jnp.int32), slots.active.shape)
        return action, jnp.zeros(slots.active.shape), self.value(slots)

    def value(self, slots: Slots):
        return slots.observation.sum(axis=-1)

    def env_action(self, action):
        return action if self.multi_agent else action[..., 0]


def run(env, policy, num_envs, num_steps):
    vec_env = vector_env(env, num_envs)
    return jax.jit(lambda key: collect(vec_env, policy, vec_env.reset(key=key), key, num_steps))(jax.random.key(0))


def test_truncation_keeps_the_pre_reset_value():
    # "Down" (action 1) from (0, 0) stays put, and goals are never at y = 0: no episode terminates,
    # TimeLimit(3) truncates after steps 2, 5 and 8, and the observation is constant within an episode.
    _, trajectory = run(TimeLimit(GridWorld(), max_steps=3), FixedActions((1,), False), num_envs=5, num_steps=9)
    truncated = np.zeros((9, 5, 1), bool)
    truncated[[2, 5, 8]] = True
    np.testing.assert_array_equal(trajectory.truncation, truncated)
    assert not trajectory.termination.any()
    # The bootstrap is the value of the episode's own (pre-reset) observation ...
    np.testing.assert_array_equal(trajectory.bootstrap_value, trajectory.value)
    # ... and the next step's value belongs to a new episode with a fresh goal in most envs.
    changed = trajectory.value[3] != trajectory.bootstrap_value[2]
    assert changed.any()


def test_agents_that_finish_stop_bootstrapping_and_their_slots_go_inactive():
    # Slots 0 and 1 always move and finish on step 9 (position 10); slot 2 never moves, so the
    # episode runs on until TimeLimit(15) truncates it after step 14.
    env = TimeLimit(Race(), max_steps=15)
    _, trajectory = run(env, FixedActions((1, 1, 0), True), num_envs=2, num_steps=15)
    np.testing.assert_array_equal(trajectory.reward[9], [[1.0, 1.0, 0.0]] * 2)  # pairs with active[9]
    assert trajectory.reward[:9].sum() == 0 and trajectory.reward[10:].sum() == 0
    np.testing.assert_array_equal(trajectory.active[9], [[True, True, True]] * 2)
    np.testing.assert_array_equal(trajectory.active[10], [[False, False, True]] * 2)
    np.testing.assert_array_equal(trajectory.termination[9], [[True, True, False]] * 2)
    assert not trajectory.termination[:9].any()
    # Slot 2 is truncated (it bootstraps); the long-finished slots are terminal, not truncated.
    np.testing.assert_array_equal(trajectory.truncation[14], [[False, False, True]] * 2)
    assert not trajectory.truncation[:14].any()
    # The episode's returns per slot arrive on the step it ends.
    assert trajectory.episode_finished[14].all() and not trajectory.episode_finished[:14].any()
    np.testing.assert_array_equal(trajectory.episode_return[14], [[1.0, 1.0, 0.0]] * 2)


def test_play_episodes_returns_each_first_episode():
    # Stuck at (0, 0) for TimeLimit(3) steps: each step pays exp(-|goal|), so the return is 3 exp(-|goal|).
    env = TimeLimit(GridWorld(), max_steps=3)
    returns, finished = jax.jit(lambda key: play_episodes(env, FixedActions((1,), False), key, 6, 5))(jax.random.key(0))
    assert finished.all() and returns.shape == (6, 1)
    goals = jax.vmap(lambda k: env.reset(key=k))(jax.random.split(jax.random.split(jax.random.key(0))[0], 6))
    expected = 3.0 * np.exp(-np.linalg.norm(np.asarray(goals.env_state.goal), axis=-1))
    np.testing.assert_allclose(returns[:, 0], expected, rtol=1e-5)


def one_long_rollout(env, policy, key, num_episodes, max_steps):
    """Each env's first-episode return as one `collect` of `max_steps` steps gives it (how evaluation played before
    it went chunk by chunk), and whether it finished."""
    vec_env = vector_env(env, num_episodes)
    reset_key, play_key = jax.random.split(key)
    _, trajectory = collect(vec_env, policy, vec_env.reset(key=reset_key), play_key, max_steps)
    finished = trajectory.episode_finished
    returns = trajectory.episode_return[jnp.argmax(finished, axis=0), jnp.arange(num_episodes)]
    return jnp.where(finished.any(axis=0)[:, None], returns, 0.0), finished.any(axis=0)


def fresh_recurrent_policy(env):
    model = model_for(env, PPOConfig(policy="recurrent", hidden_sizes=(16,), rnn_hidden=8))
    return Policy(model, model.init(jax.random.key(1)))


@pytest.mark.parametrize("chunk", [1, 3, 7, 128])
@pytest.mark.parametrize("player", [random_player, fresh_recurrent_policy])
@pytest.mark.parametrize(("time_limit", "max_steps"), [(9, 7), (9, 30)])
def test_play_episodes_chunk_by_chunk_scores_what_one_long_rollout_scores(
    monkeypatch, chunk, player, time_limit, max_steps
):
    # GridWorld's episodes end at the goal or at the time limit. With 9 and 7 steps some end past max_steps,
    # inside the padding of the last chunk of 3 (steps 6, 7, 8), where an ending must not count; with 9 and 30 every
    # env ends, some twice before others end once, and only the first counts.
    monkeypatch.setattr(rollout, "FIRST_EPISODES_CHUNK", chunk)
    env = TimeLimit(GridWorld(), max_steps=time_limit)
    policy = player(env)
    key = jax.random.key(3)
    expected_returns, expected_ended = one_long_rollout(env, policy, key, 64, max_steps)
    returns, ended = play_episodes(env, policy, key, 64, max_steps)  # eagerly, as a user may call it
    assert int(expected_ended.sum()) == 64 if time_limit < max_steps else 0 < int(expected_ended.sum()) < 64
    np.testing.assert_array_equal(ended, expected_ended)
    np.testing.assert_array_equal(returns, expected_returns)


def test_values_are_the_critics_at_each_step_and_at_the_pre_reset_next_observation():
    # The critic runs after the scan: each step's value is the policy's value of that step's observation,
    # and the bootstrap value the one of the next observation before any reset (the last step's state after it).
    env = TimeLimit(GridWorld(), max_steps=3)
    final, trajectory = run(env, FixedActions((0,), False), num_envs=4, num_steps=7)
    np.testing.assert_array_equal(trajectory.value, trajectory.observation.sum(axis=-1))
    going_on = ~(trajectory.termination | trajectory.truncation)[:-1]
    np.testing.assert_array_equal(
        np.where(going_on, trajectory.bootstrap_value[:-1], 0.0), np.where(going_on, trajectory.value[1:], 0.0)
    )
    assert (trajectory.termination | trajectory.truncation).any()
    ended = trajectory.truncation[2]
    assert ended.all() and not np.array_equal(trajectory.bootstrap_value[2], trajectory.value[3])


@dataclass(frozen=True)
class CountingCritic(FixedActions):
    """Acts without its critic; records the rows of each critic pass as traced and as run."""

    traced: list = field(default_factory=list, compare=False)
    ran: list = field(default_factory=list, compare=False)

    def act_slots(self, slots: Slots, key):
        action = jnp.broadcast_to(jnp.asarray(self.actions, jnp.int32), slots.active.shape)
        return action, jnp.zeros(slots.active.shape), jnp.zeros(slots.active.shape)

    def value(self, slots: Slots):
        rows = int(np.prod(slots.observation.shape[:-2]))
        self.traced.append(rows)
        jax.debug.callback(lambda: self.ran.append(rows))
        return super().value(slots)


def test_the_critic_sees_each_observation_once_and_pre_reset_ones_only_in_the_truncation_branch():
    # Rows the critic is traced on: every step's observation and the final one after the scan, and
    # inside the truncation branch the envs' next observations; not a second pass over every next observation.
    policy = CountingCritic((0,), False)
    _, trajectory = run(TimeLimit(GridWorld(), max_steps=3), policy, num_envs=4, num_steps=7)
    assert sorted(policy.traced) == [4, (7 + 1) * 4]
    np.testing.assert_array_equal(trajectory.value, trajectory.observation.sum(axis=-1))


def test_the_critic_runs_at_next_observations_only_on_steps_with_a_truncation():
    # Every slot finishes on step 9 and the env resets there (terminal, not truncated): no bootstrap needed,
    # so the only critic pass that runs is the one after the scan. With TimeLimit(5) steps 4 and 9 are
    # truncations, and the critic runs at those steps' next observations.
    def run_and_count(max_steps):
        policy = CountingCritic((1, 1, 1), True)
        _, trajectory = run(TimeLimit(Race(), max_steps=max_steps), policy, 2, 12)
        jax.effects_barrier()
        return trajectory, sorted(policy.ran)

    trajectory, ran = run_and_count(50)
    assert trajectory.termination[9].all() and not trajectory.truncation.any()
    assert ran == [(12 + 1) * 2]
    trajectory, ran = run_and_count(5)
    assert trajectory.truncation[4].all() and trajectory.truncation[9].all()
    assert ran == [2, 2, (12 + 1) * 2]
