"""MAPPO on the protocol's Race and self-play on take-away Nim; inactive slots never reach the loss."""

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers.example_envs import GridWorld, Race
from helpers.nim import Nim

from parallax import TimeLimit
from parallax_zoo.agents import mappo, ppo
from parallax_zoo.agents.mappo import MAPPOConfig, make_train
from parallax_zoo.agents.players import RandomPlayer
from parallax_zoo.agents.policy import Policy
from parallax_zoo.agents.ppo import Batch, advantages_for, model_for, ppo_loss, vector_env
from parallax_zoo.agents.rollout import collect
from parallax_zoo.agents.slots import read_slots

# Random play reaches 10 within 14 steps with probability P(Binomial(14, 1/2) >= 10) = 0.09 per agent.
RACE = TimeLimit(Race(), max_steps=14)


def test_race_return_rises_far_above_random():
    config = MAPPOConfig(num_envs=8, num_steps=32, total_timesteps=8 * 32 * 30, learning_rate=1e-3)
    _, metrics = mappo.train(config, jax.random.key(0), RACE)
    first, last = float(metrics["episode_return"][0]), float(np.mean(metrics["episode_return"][-3:]))
    assert first < 0.3, first
    assert last > 0.95, last


@jax.jit
def race_trajectory():
    """A random-play Race trajectory in which agents finish at different steps, and a fresh MAPPO policy."""
    config = TRAJECTORY_CONFIG
    env = vector_env(TimeLimit(Race(), max_steps=30), config.num_envs)
    model = model_for(RACE, config)
    policy = Policy(model, model.init(jax.random.key(2)))
    state = env.reset(key=jax.random.key(3))
    final, trajectory = collect(env, RandomPlayer(model), state, jax.random.key(4), config.num_steps)
    # Behaviour data as the learner would have recorded it.
    values = policy.value(read_slots(final))
    return policy, trajectory, values


TRAJECTORY_CONFIG = MAPPOConfig(num_envs=4, num_steps=24, total_timesteps=4 * 24, num_minibatches=1)


@functools.partial(jax.jit, static_argnums=0)
def loss_gradient(config, policy, trajectory, last_value):
    targets, advantages = advantages_for(policy, trajectory, last_value, config)
    flat = jax.tree_util.tree_map(lambda x: x.reshape((-1,) + x.shape[2:]), Batch(trajectory, advantages, targets))
    return jax.grad(lambda p: ppo_loss(p, policy, flat, config)[0])(policy.params)


@pytest.mark.parametrize("vtrace", [False, True])
def test_inactive_slots_do_not_change_the_gradient(vtrace):
    policy, trajectory, last_value = race_trajectory()
    config = dataclasses.replace(TRAJECTORY_CONFIG, vtrace=vtrace, rho_clip=1.0, c_clip=1.0)
    inactive = ~trajectory.active
    assert 0.1 < float(inactive.mean()) < 0.9, "the trajectory must mix active and inactive slots"
    noise = lambda k, x: jax.random.normal(jax.random.key(k), x.shape)  # noqa: E731
    garbage = dataclasses.replace(
        trajectory,
        observation=jnp.where(inactive[..., None], noise(5, trajectory.observation) * 7.0, trajectory.observation),
        action=jnp.where(inactive, 1 - trajectory.action, trajectory.action),
        log_prob=jnp.where(inactive, noise(6, trajectory.log_prob), trajectory.log_prob),
        value=jnp.where(inactive, noise(7, trajectory.value) * 5.0, trajectory.value),
        reward=jnp.where(inactive, noise(8, trajectory.reward), trajectory.reward),
        bootstrap_value=jnp.where(inactive, noise(9, trajectory.value), trajectory.bootstrap_value),
    )
    clean = loss_gradient(config, policy, trajectory, last_value)
    dirty = loss_gradient(config, policy, garbage, last_value)
    for a, b in zip(jax.tree_util.tree_leaves(clean), jax.tree_util.tree_leaves(dirty), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    # The same perturbation of *active* slots does change it, so the check can fail.
    changed = dataclasses.replace(trajectory, reward=trajectory.reward + jnp.where(trajectory.active, 1.0, 0.0))
    moved = loss_gradient(config, policy, changed, last_value)
    assert any(
        not np.allclose(a, b) for a, b in zip(jax.tree_util.tree_leaves(clean), jax.tree_util.tree_leaves(moved))
    )


@pytest.mark.slow  # trains to a result (15 s on two cores); test_race_return_rises_far_above_random learns by default
def test_self_play_beats_random_and_earlier_snapshots():
    env = TimeLimit(Nim(), max_steps=20)
    config = MAPPOConfig(
        num_envs=16,
        num_steps=32,
        total_timesteps=16 * 32 * 40,
        learning_rate=3e-3,
        self_play=True,
        snapshots=2,
        eval_episodes=64,
        eval_max_steps=20,
    )
    _, metrics = jax.jit(make_train(config, env))(jax.random.key(0))
    evaluation = metrics["eval"]
    # Random against random wins half of its games; perfect play wins most from random starting piles.
    assert float(evaluation["vs_random"]["win"][-1]) > 0.75
    np.testing.assert_allclose(
        evaluation["vs_random"]["win"] + evaluation["vs_random"]["draw"] + evaluation["vs_random"]["loss"], 1.0
    )
    np.testing.assert_array_equal(evaluation["snapshot_filled"], [[False, False], [True, False]])
    # After interval 1 the policy meets its own snapshot from the end of interval 0 and is not beaten by it.
    assert float(evaluation["vs_snapshots"]["win"][1, 0]) >= 0.4


def test_each_trainer_takes_its_own_config():
    with pytest.raises(TypeError, match="train a MAPPOConfig with mappo.train"):
        ppo.train(MAPPOConfig(num_envs=2, num_steps=4, total_timesteps=8), jax.random.key(0), RACE)
    with pytest.raises(TypeError, match="train a PPOConfig with ppo.train"):
        mappo.train(ppo.PPOConfig(num_envs=2, num_steps=4, total_timesteps=8), jax.random.key(0), RACE)  # pyright: ignore[reportArgumentType]


def test_mappo_refuses_a_single_agent_env():
    with pytest.raises(ValueError, match="use parallax_zoo.agents.ppo"):
        make_train(MAPPOConfig(), TimeLimit(GridWorld(), 10))


def test_config_pairs_an_opponent_with_its_share():
    with pytest.raises(ValueError, match="give an opponent"):
        MAPPOConfig(opponent="random")
    with pytest.raises(ValueError, match="give an opponent"):
        MAPPOConfig(opponent_share=0.5)
    with pytest.raises(ValueError, match="seats the opponent in no env"):
        MAPPOConfig(num_envs=4, opponent="random", opponent_share=0.1)


@pytest.mark.slow  # trains to a result (14 s on two cores), as above
def test_training_against_the_naive_team_learns_to_beat_it():
    import parallax_zoo
    from parallax_zoo import evaluate
    from parallax_zoo.agents.player_factories import opponent_player

    config = MAPPOConfig(
        env_id="TeamRace-v0",
        num_envs=16,
        num_steps=32,
        total_timesteps=16 * 32 * 60,
        learning_rate=3e-3,
        hidden_sizes=(64, 64),
        opponent="naive",
        opponent_share=1.0,
    )
    env = parallax_zoo.make("TeamRace-v0")
    naive = opponent_player("TeamRace-v0", env, "naive")
    policy, _ = jax.jit(make_train(config, env, opponent=naive))(jax.random.key(0))
    # Naive against naive draws every game; winning needs one teammate to trip while the other runs.
    result = evaluate("TeamRace-v0", policy, episodes=16)
    assert result.opponents["naive"]["win_side_0"] == 1.0
    assert result.opponents["naive"]["win_side_1"] == 1.0
