"""Family defaults: an id without a config of its own trains with its family's (docs/baselines.md)."""

from __future__ import annotations

import pytest

import parallax_zoo
from parallax_zoo.agents.mappo import MAPPOConfig
from parallax_zoo.baselines.families import FAMILIES, FAMILY_CONFIGS, family_config_path, family_of
from parallax_zoo.baselines.training import BASELINE_CONFIGS, config_path, resolve_config
from parallax_zoo.policies import checkpoint


@pytest.mark.parametrize(
    ("env_id", "family"),
    [
        ("gymnax/Breakout-MinAtar", "ppo"),
        ("jumanji/Snake-v1", "ppo"),
        ("gymnax/Pendulum-v1", "ppo-continuous"),
        ("mjx/CheetahRun", "ppo-continuous"),
        ("gymnax/MemoryChain-bsuite", "ppo-recurrent"),
        ("gymnax/BernoulliBandit-misc", "ppo-recurrent"),
        ("xminigrid/MiniGrid-DoorKey-5x5", "ppo-recurrent"),
        ("jaxmarl/MPE_simple_tag_v3", "mappo"),
        ("Race-v0", "mappo"),
        ("pgx/connect_four", "self-play"),
        ("TicTacToe-v0", "self-play"),
    ],
)
def test_the_family_follows_the_registry_tags(env_id, family):
    assert family_of(parallax_zoo.spec(env_id)) == family


def test_every_family_has_one_valid_config_file_and_nothing_else_is_there():
    assert sorted(path.stem for path in FAMILY_CONFIGS.glob("*")) == sorted(FAMILIES)
    for family in FAMILIES:
        config = checkpoint.load_config(FAMILY_CONFIGS / f"{family}.yaml")
        assert config.env_id == ""  # a family file names no env
        assert isinstance(config, MAPPOConfig) == (family in ("mappo", "self-play"))
        assert config.recurrent == (family == "ppo-recurrent")


def test_every_registered_id_has_a_config_to_train_with():
    for env_id in parallax_zoo.list_envs():
        env_spec = parallax_zoo.spec(env_id)
        own = (BASELINE_CONFIGS / f"{env_id.replace('/', '-')}.yaml").is_file() or env_spec.baseline is not None
        path = config_path(env_id)
        assert (path == family_config_path(env_spec)) != own, (env_id, path)
        assert resolve_config(env_id).env_id == env_id
