"""Policies to and from safetensors, configs to and from YAML, and `Policy.act`."""

import dataclasses
import os
import resource

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import yaml
from helpers.example_envs import GridWorld, MaskedGridWorld, Race
from safetensors.numpy import save_file

from parallax import TimeLimit
from parallax.version import VERSIONED_PACKAGES
from parallax_zoo.agents.mappo import MAPPOConfig
from parallax_zoo.agents.normalizer import ObsNormalizer
from parallax_zoo.agents.ppo import PPOConfig
from parallax_zoo.policies import checkpoint
from parallax_zoo.policies.checkpoint import CheckpointError

GRID = TimeLimit(GridWorld(), 50)


def random_policy(config, env, seed):
    """A policy whose every tensor (normaliser included) is distinct random data."""
    template = checkpoint.initial_policy(config, env)
    leaves, treedef = jax.tree_util.tree_flatten(template)
    keys = jax.random.split(jax.random.key(seed), len(leaves))
    return jax.tree_util.tree_unflatten(
        treedef, [jax.random.uniform(k, x.shape, x.dtype) for k, x in zip(keys, leaves)]
    )


def test_round_trip_through_a_folder(tmp_path):
    config = PPOConfig(env_id="GridWorld-v0", normalize_obs=True, hidden_sizes=(16, 8))
    policy = random_policy(config, GRID, seed=0)
    checkpoint.save(tmp_path, policy, config)
    assert sorted(os.listdir(tmp_path)) == ["config.yaml", "model.safetensors"]
    loaded, loaded_config = checkpoint.load_network(tmp_path, GRID)
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
    assert set(data["versions"]) == set(VERSIONED_PACKAGES)
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


# Untrusted weights and configs: refused before anything is built, naming what is wrong


def test_weights_holding_nan_or_inf_are_refused_naming_the_tensor(tmp_path):
    config = PPOConfig(env_id="GridWorld-v0", hidden_sizes=(8,))
    checkpoint.save(tmp_path, checkpoint.initial_policy(config, GRID), config)
    tensors = checkpoint.flatten(checkpoint.initial_policy(config, GRID))
    tensors["params/critic/Dense_0/bias"] = np.array(tensors["params/critic/Dense_0/bias"])
    tensors["params/critic/Dense_0/bias"][0] = np.nan
    tensors["params/actor/Dense_0/bias"] = np.array(tensors["params/actor/Dense_0/bias"])
    tensors["params/actor/Dense_0/bias"][-1] = np.inf
    save_file(
        {name: np.ascontiguousarray(value) for name, value in tensors.items()}, str(tmp_path / "model.safetensors")
    )
    with pytest.raises(CheckpointError, match=r"tensor params/(actor|critic)/Dense_0/bias holds NaN or inf \(1 of"):
        checkpoint.load_network(tmp_path, GRID)


def test_a_config_larger_than_its_weights_is_refused_from_the_header_before_anything_is_built(tmp_path, monkeypatch):
    config = PPOConfig(env_id="GridWorld-v0", hidden_sizes=(8,))
    checkpoint.save(tmp_path, checkpoint.initial_policy(config, GRID), config)
    (tmp_path / "config.yaml").write_text(
        (tmp_path / "config.yaml").read_text().replace("hidden_sizes:\n  - 8", "hidden_sizes:\n  - 20000\n  - 20000")
    )
    monkeypatch.setattr(
        checkpoint, "load_safetensors", lambda *a: pytest.fail("tensors were read before the shapes agreed")
    )
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(CheckpointError, match=r"expected shape \(4, 20000\), found \(4, 8\)"):
        checkpoint.load_network(tmp_path, GRID)
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before) / 1024
    assert grown_mib < 256, f"the peak memory grew by {grown_mib:.0f} MiB: a 20000x20000 network was built"


@pytest.mark.parametrize(
    ("content", "named"),
    [
        (b"", "empty or truncated"),
        (b"\x10\x00\x00\x00\x00\x00\x00\x00{}", "truncated"),
        (b"\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00}\x94.", "not safetensors"),
        (b"\x02\x00\x00\x00\x00\x00\x00\x00[]", "malformed safetensors header"),
    ],
)
def test_weights_that_are_not_safetensors_say_so(tmp_path, content, named):
    config = PPOConfig(env_id="GridWorld-v0", hidden_sizes=(8,))
    checkpoint.save_config(config, tmp_path / "config.yaml")
    (tmp_path / "model.safetensors").write_bytes(content)
    with pytest.raises(CheckpointError, match=named):
        checkpoint.load_network(tmp_path, GRID)


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("algorithm: ppo\nhyperparameters: [1, 2]\n", "hyperparameters must be a mapping"),
        ("algorithm: ppo\nhyperparameters:\n  num_envs: four\n", "num_envs must be an integer, got 'four'"),
        ("algorithm: ppo\nhyperparameters:\n  hidden_sizes: 64\n", "hidden_sizes must be a non-empty list"),
        ("algorithm: ppo\nhyperparameters:\n  learning_rate: .nan\n", "learning_rate must be a finite number"),
        ("algorithm: ppo\nhyperparameters: {num_envs: [\n", "is not valid YAML"),
        ("algorithm: ppo\nhyperparameters:\n  num_envs: 0\n", "num_envs"),
    ],
)
def test_a_malformed_config_names_the_file_and_the_field(tmp_path, text, named):
    (tmp_path / "config.yaml").write_text(text)
    with pytest.raises(CheckpointError, match=named) as caught:
        checkpoint.load_config(tmp_path / "config.yaml")
    assert str(tmp_path / "config.yaml") in str(caught.value)
