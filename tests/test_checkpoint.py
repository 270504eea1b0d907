"""Policies to and from safetensors, configs to and from YAML, and `Policy.act`."""

import dataclasses
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import yaml

from example_envs import GridWorld, MaskedGridWorld, Race
from parallax import TimeLimit
from parallax_zoo.scoring import checkpoint
from parallax_zoo.scoring.checkpoint import CheckpointError
from parallax_zoo.agents.mappo import MAPPOConfig
from parallax_zoo.agents.normalizer import ObsNormalizer
from parallax_zoo.agents.ppo import PPOConfig

GRID = TimeLimit(GridWorld(), 50)


def random_policy(config, env, seed):
    """A policy whose every tensor (normaliser included) is distinct random data."""
    template = checkpoint.initial_policy(config, env)
    leaves, treedef = jax.tree_util.tree_flatten(template)
    keys = jax.random.split(jax.random.key(seed), len(leaves))
    return jax.tree_util.tree_unflatten(treedef, [jax.random.uniform(k, x.shape, x.dtype) for k, x in zip(keys, leaves)])


def test_round_trip_through_a_folder(tmp_path):
    config = PPOConfig(env_id="GridWorld-v0", normalize_obs=True, hidden_sizes=(16, 8))
    policy = random_policy(config, GRID, seed=0)
    checkpoint.save(tmp_path, policy, config)
    assert sorted(os.listdir(tmp_path)) == ["config.yaml", "model.safetensors"]
    loaded, loaded_config = checkpoint.load(tmp_path, GRID)
    assert loaded_config == config
    for a, b in zip(jax.tree_util.tree_leaves(policy), jax.tree_util.tree_leaves(loaded), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert isinstance(loaded.normalizer, ObsNormalizer)
    observation = jnp.array([0.0, 1.0, 3.0, 2.0])
    assert int(loaded.act(observation)) == int(policy.act(observation))
    keys = checkpoint.flatten(policy)
    assert "params/actor/Dense_0/kernel" in keys and "normalizer/observation/mean" in keys


def test_shape_mismatch_lists_expected_and_found(tmp_path):
    saved = PPOConfig(hidden_sizes=(64, 64))
    checkpoint.save_policy(checkpoint.initial_policy(saved, GRID), tmp_path / "model.safetensors")
    other = checkpoint.initial_policy(dataclasses.replace(saved, hidden_sizes=(32, 64), normalize_obs=True), GRID)
    with pytest.raises(CheckpointError) as error:
        checkpoint.load_policy(tmp_path / "model.safetensors", other)
    message = str(error.value)
    assert "params/actor/MLP_0/Dense_0/kernel: expected shape (4, 32), found (4, 64)" in message
    assert "missing normalizer/observation/mean (expected shape (4,))" in message


def test_failed_save_leaves_no_temporary_file_and_keeps_the_old_one(tmp_path, monkeypatch):
    target = tmp_path / "model.safetensors"
    policy = checkpoint.initial_policy(PPOConfig(), GRID)
    checkpoint.save_policy(policy, target)
    before = target.read_bytes()

    def write_half_then_fail(tensors, filename, metadata=None):
        with open(filename, "wb") as handle:
            handle.write(b"half a file")
        raise OSError("disk full")

    monkeypatch.setattr(checkpoint, "save_file", write_half_then_fail)
    with pytest.raises(OSError, match="disk full"):
        checkpoint.save_policy(policy, target)
    assert os.listdir(tmp_path) == ["model.safetensors"]
    assert target.read_bytes() == before


def test_config_yaml_round_trip_and_versions(tmp_path):
    config = MAPPOConfig(env_id="Race-v0", self_play=False, hidden_sizes=(32,), vtrace=True, rho_clip=0.9)
    checkpoint.save_config(config, tmp_path / "config.yaml")
    data = yaml.safe_load((tmp_path / "config.yaml").read_text())
    assert data["algorithm"] == "mappo"
    assert data["hyperparameters"]["hidden_sizes"] == [32]
    assert set(data["versions"]) == set(checkpoint.VERSIONED_PACKAGES)
    assert checkpoint.load_config(tmp_path / "config.yaml") == config


def test_unknown_hyperparameter_is_named(tmp_path):
    (tmp_path / "config.yaml").write_text(yaml.safe_dump({"algorithm": "ppo", "hyperparameters": {"learning_rat": 1}}))
    with pytest.raises(CheckpointError, match=r"unknown ppo hyperparameters \['learning_rat'\]"):
        checkpoint.load_config(tmp_path / "config.yaml")


def test_act_respects_the_action_mask_and_batches():
    env = TimeLimit(MaskedGridWorld(), 50)
    policy = random_policy(PPOConfig(), env, seed=1)
    state = jax.vmap(lambda k: env.reset(key=k))(jax.random.split(jax.random.key(0), 64))
    # At the start (0, 0) only "up" (0) and "right" (2) are legal.
    for greedy in (True, False):
        actions = policy.act(state.observation, jax.random.key(1), action_mask=state.action_mask, greedy=greedy)
        assert actions.shape == (64,)
        assert set(np.unique(np.asarray(actions))) <= {0, 2}


def test_act_multi_agent_and_bad_shapes():
    env = TimeLimit(Race(), 20)
    policy = random_policy(MAPPOConfig(normalize_obs=True), env, seed=2)
    state = env.reset(key=jax.random.key(0))
    assert policy.act(state.agents.observation).shape == (3,)
    with pytest.raises(ValueError, match=r"expected observations ending in shape \(3,\)"):
        policy.act(jnp.zeros((4,)))
    with pytest.raises(ValueError, match="needs key"):
        policy.act(state.agents.observation, greedy=False)
