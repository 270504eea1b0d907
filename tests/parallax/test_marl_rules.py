"""The protocol's six multi-agent rules, checked directly on the Race example."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
from helpers.example_envs import Race


def _advance(env, state, actions):
    for action in actions:
        state = env.step(state, jnp.asarray(action, jnp.int32))
    return state


def _staggered_race():
    """Agent 0 finishes on step 10, agent 1 on step 11; agent 2 never moves."""
    env = Race()
    state = env.reset(key=jax.random.key(0))
    before = _advance(env, state, [[1, 1, 0]] * 9 + [[1, 0, 0]])
    after = env.step(before, jnp.array([1, 1, 0], jnp.int32))
    return env, before, after


def test_rule_1_inactive_actions_change_nothing():
    env, before, _ = _staggered_race()
    assert before.agents.active.tolist() == [False, True, True]
    a = env.step(before, jnp.array([0, 1, 0], jnp.int32))
    b = env.step(before, jnp.array([1, 1, 0], jnp.int32))
    np.testing.assert_array_equal(a.env_state, b.env_state)
    np.testing.assert_array_equal(a.agents.observation, b.agents.observation)


def test_rule_2_inactive_observations_are_zero():
    _, before, after = _staggered_race()
    assert before.agents.observation[0] == 0.0 and before.env_state[0] == 10.0
    assert after.agents.observation[:2].tolist() == [0.0, 0.0]


def test_rule_3_dying_step_carries_reward_and_inactive_slots_are_zero():
    _, before, after = _staggered_race()
    assert before.agents.reward.tolist() == [1.0, 0.0, 0.0]
    assert after.agents.reward.tolist() == [0.0, 1.0, 0.0]


def test_rule_5_rewards_pair_with_the_previous_active_mask():
    env, before, after = _staggered_race()
    valid = before.agents.active
    rewards = after.agents.reward
    bootstrap = after.agents.active & ~after.termination
    assert valid.tolist() == [False, True, True]
    assert rewards.tolist() == [0.0, 1.0, 0.0]
    assert bootstrap.tolist() == [False, False, True]
    assert bool(jnp.all(jnp.where(valid, True, rewards == 0.0)))


def test_rule_6_all_agents_inactive_ends_the_episode_only_when_the_env_says_so():
    class NeverTerminates(Race):
        def step(self, state, action):
            return dataclasses.replace(super().step(state, action), termination=jnp.bool_(False))

    env = NeverTerminates()
    state = _advance(env, env.reset(key=jax.random.key(0)), [[1, 1, 1]] * 10)
    assert not bool(state.agents.active.any())
    assert not bool(state.done)

    race = Race()
    finished = _advance(race, race.reset(key=jax.random.key(0)), [[1, 1, 1]] * 10)
    assert bool(finished.termination)


def test_team_scalar_reads_the_first_active_slot():
    env, before, after = _staggered_race()
    team_reward = after.agents.reward[jnp.argmax(before.agents.active)]
    assert float(team_reward) == 1.0
