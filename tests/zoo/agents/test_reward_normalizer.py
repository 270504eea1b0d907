"""`normalize_rewards`: rewards scaled by the running spread of each slot's discounted return, for training only."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
from helpers.example_envs import GridWorld

from parallax import TimeLimit
from parallax_zoo.agents.normalizer import RewardNormalizer
from parallax_zoo.agents.ppo import PPOConfig, make_train


def test_returns_are_discounted_within_an_episode_and_restart_after_its_end():
    reward = jnp.ones((4, 1, 2))
    end = jnp.asarray([False, True, False, False])[:, None, None] & jnp.asarray([True, False])  # slot 0 ends at t=1
    active = jnp.ones((4, 1, 2), bool)
    normalizer, scaled = RewardNormalizer.create(1, 2).scale(reward, end, active, gamma=0.5)
    # slot 0: 1, 1.5 (end), then 1, 1.5; slot 1: 1, 1.5, 1.75, 1.875 carried on
    np.testing.assert_allclose(normalizer.returns, [[1.5, 1.875]])
    seen = np.asarray([1, 1.5, 1, 1.5, 1, 1.5, 1.75, 1.875])
    np.testing.assert_allclose(normalizer.stats.var[0], seen.var(), rtol=1e-3)  # the tiny prior count aside
    np.testing.assert_allclose(scaled, reward / np.sqrt(seen.var()), rtol=1e-3)


def test_inactive_slots_leave_the_statistics_alone():
    reward = jnp.asarray([[[1.0, 100.0]], [[2.0, -100.0]]])
    end = jnp.zeros((2, 1, 2), bool)
    only_first = jnp.asarray([True, False])[None, None, :].repeat(2, axis=0)
    masked, _ = RewardNormalizer.create(1, 2).scale(reward, end, only_first, gamma=0.0)
    alone, _ = RewardNormalizer.create(1, 1).scale(reward[..., :1], end[..., :1], only_first[..., :1], gamma=0.0)
    np.testing.assert_allclose(masked.stats.var, alone.stats.var)


def test_training_with_scaled_rewards_learns_other_weights_but_reports_returns_in_the_envs_units():
    env = TimeLimit(GridWorld(), max_steps=50)
    config = PPOConfig(env_id="GridWorld-v0", num_envs=8, num_steps=32, total_timesteps=8 * 32 * 6)
    plain_policy, plain = jax.jit(make_train(config, env))(jax.random.key(0))
    scaled_config = dataclasses.replace(config, normalize_rewards=True)
    scaled_policy, scaled = jax.jit(make_train(scaled_config, env))(jax.random.key(0))
    # the same first rollout (same key, same initial weights): the env's own returns, not scaled ones
    np.testing.assert_allclose(plain["episode_return"][0], scaled["episode_return"][0])
    leaves = zip(jax.tree_util.tree_leaves(plain_policy.params), jax.tree_util.tree_leaves(scaled_policy.params))
    assert any(not np.allclose(a, b) for a, b in leaves)
