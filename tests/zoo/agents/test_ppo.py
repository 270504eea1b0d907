"""PPO trains the protocol's GridWorld: it learns, is bit-reproducible, and vmaps over seeds."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers.example_envs import GridWorld

from parallax import TimeLimit
from parallax_zoo.agents.players import RandomPlayer
from parallax_zoo.agents.ppo import PPOConfig, make_train, model_for, vector_env
from parallax_zoo.agents.rollout import collect

ENV = TimeLimit(GridWorld(), max_steps=50)
CONFIG = PPOConfig(
    env_id="GridWorld-v0",
    num_envs=8,
    num_steps=64,
    total_timesteps=8 * 64 * 40,
    learning_rate=3e-3,
    normalize_obs=True,
)


@pytest.fixture(scope="module")
def trained():
    return jax.jit(make_train(CONFIG, ENV))(jax.random.key(0))


def random_policy_return(num_envs: int = 64, num_steps: int = 200) -> float:
    """Mean return of the uniformly random player over the episodes finished in a long rollout."""
    env = vector_env(ENV, num_envs)
    player = RandomPlayer(model_for(ENV, CONFIG))

    @jax.jit
    def run(key):
        reset_key, play_key = jax.random.split(key)
        _, trajectory = collect(env, player, env.reset(key=reset_key), play_key, num_steps)
        finished = trajectory.episode_finished
        return jnp.sum(jnp.where(finished, trajectory.episode_return[..., 0], 0.0)), finished.sum()

    total, episodes = run(jax.random.key(1))
    assert episodes > 100
    return float(total / episodes)


def test_gridworld_return_rises_well_above_random(trained):
    _, metrics = trained
    assert metrics["episode_return"].shape == (CONFIG.num_updates,)
    random_return = random_policy_return()
    final_return = float(np.mean(metrics["episode_return"][-5:]))
    assert final_return > 2.0 * random_return, (final_return, random_return)
    assert np.all(np.isfinite(metrics["loss"]))


def test_same_seed_gives_bit_identical_params(trained):
    policy, _ = trained
    again, _ = jax.jit(make_train(CONFIG, ENV))(jax.random.key(0))
    for a, b in zip(jax.tree_util.tree_leaves(policy), jax.tree_util.tree_leaves(again), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_normaliser_statistics_are_kept_with_the_params(trained):
    policy, _ = trained
    stats = policy.normalizer.observation
    assert float(stats.count) == pytest.approx(CONFIG.total_timesteps, rel=1e-3)
    # GridWorld observations are (x, y, goal_x, goal_y) in [0, 4]; goals are drawn from [1, 4].
    assert np.all((np.asarray(stats.mean) > 0.5) & (np.asarray(stats.mean) < 4.0))


def test_vmaps_over_seeds_with_vtrace():
    config = PPOConfig(num_envs=4, num_steps=32, total_timesteps=4 * 32 * 3, vtrace=True, rho_clip=1.0, c_clip=0.9)
    policies, metrics = jax.jit(jax.vmap(make_train(config, ENV)))(jax.random.split(jax.random.key(0), 2))
    assert metrics["loss"].shape == (2, config.num_updates)
    assert np.all(np.isfinite(metrics["loss"]))
    kernel = jax.tree_util.tree_leaves(policies.params["actor"])[0]
    assert kernel.shape[0] == 2
    assert not np.array_equal(np.asarray(kernel[0]), np.asarray(kernel[1]))


def test_bad_config_says_what_to_change():
    with pytest.raises(ValueError, match="divisible by num_minibatches"):
        PPOConfig(num_envs=3, num_steps=5, num_minibatches=4, total_timesteps=1000)
    with pytest.raises(ValueError, match="less than one rollout"):
        PPOConfig(num_envs=4, num_steps=128, total_timesteps=100)


def test_large_networks_are_optimized_per_weight_array_small_ones_as_one_vector():
    # Past FLAT_OPTIMIZER_MAX_PARAMS, gathering the gradients into one vector costs more than it saves.
    from parallax_zoo.agents.ppo import FLAT_OPTIMIZER_MAX_PARAMS, make_optimizer

    params = {"kernel": jnp.ones((64, 64)), "bias": jnp.ones(64)}
    size = 64 * 64 + 64
    flat = make_optimizer(PPOConfig(), FLAT_OPTIMIZER_MAX_PARAMS).init(params)
    per_array = make_optimizer(PPOConfig(), FLAT_OPTIMIZER_MAX_PARAMS + 1).init(params)
    assert {leaf.shape for leaf in jax.tree_util.tree_leaves(flat)} >= {(size,)}
    assert (64, 64) in {leaf.shape for leaf in jax.tree_util.tree_leaves(per_array)}
    assert (size,) not in {leaf.shape for leaf in jax.tree_util.tree_leaves(per_array)}


def test_trains_on_observations_with_fields_read_flat_in_field_order():
    """Jumanji's observations are NamedTuples (Snake: grid, step_count, action_mask): the agents read every field,
    flattened and concatenated in field order, and PPO trains on them as on an array."""
    import parallax_zoo
    from parallax_zoo.agents.policy import actor_critic_for
    from parallax_zoo.agents.slots import read_slots

    env = parallax_zoo.make("jumanji/Snake-v1")
    states = vector_env(env, 2).reset(key=jax.random.key(0))
    fields = states.observation
    expected = jnp.concatenate([jnp.reshape(field, (2, 1, -1)).astype(jnp.float32) for field in fields], axis=-1)
    np.testing.assert_array_equal(np.asarray(read_slots(states).observation), np.asarray(expected))
    model = actor_critic_for(env)
    assert model.obs_dim == model.observation_shape[-1] == 12 * 12 * 5 + 1 + 4

    config = PPOConfig(env_id="jumanji/Snake-v1", num_envs=4, num_steps=16, total_timesteps=4 * 16 * 2)
    _, metrics = jax.jit(make_train(config, env))(jax.random.key(0))
    assert np.all(np.isfinite(metrics["loss"]))
