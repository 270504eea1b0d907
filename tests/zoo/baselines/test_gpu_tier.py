"""The GPU tier: a configuration, a published anchor and the published number for each id that does not train on a
CPU in budget (docs/baselines.md, "The GPU tier")."""

from __future__ import annotations

import pytest

import parallax_zoo
from parallax_zoo.agents.mappo import MAPPOConfig
from parallax_zoo.baselines.gpu_tier import GPU_CONFIGS, Anchor, NotInGpuTierError, gpu_config, gpu_tier, tier_sources
from parallax_zoo.cli.main import main

CPU_TIER = {
    "brax/inverted_pendulum",
    "brax/inverted_double_pendulum",
    "brax/reacher",
    "mjx/CartpoleBalance",
    "mjx/PendulumSwingup",
}
"""The Brax and DM Control ids that train on a CPU in budget (docs/baselines.md)."""


def test_every_entry_is_a_registered_id_with_a_valid_config_of_its_family_file():
    entries = gpu_tier()
    assert all(env_id in parallax_zoo.list_envs() for env_id in entries)
    used = {entry.family for entry in entries.values()}
    assert used == {path.stem for path in GPU_CONFIGS.glob("*.yaml")} - {"tier"}  # every family file, and no other
    for env_id, entry in entries.items():
        config = entry.config()  # the config's own checks run as it is built
        assert config.env_id == env_id
        assert isinstance(config, MAPPOConfig) == parallax_zoo.spec(env_id).multi_agent
    assert gpu_config("mjx/WalkerRun").total_timesteps == 100_000_000  # Playground's own change for it
    assert gpu_config("mjx/CheetahRun").num_envs == 2048 and gpu_config("brax/halfcheetah").gamma == 0.95


def test_the_tier_covers_what_does_not_train_on_a_cpu():
    entries = set(gpu_tier())
    dm_control = {i for i in parallax_zoo.list_envs(tag="dm-control")}
    runnable_brax = set(parallax_zoo.list_envs(namespace="brax")) - {"brax/swimmer"}  # swimmer cannot run on this jax
    assert (dm_control | runnable_brax) - CPU_TIER <= entries
    assert {"pgx/go_9x9", "pgx/chess", "pgx/shogi", "pgx/backgammon", "craftax/Craftax-Symbolic-v1"} <= entries
    assert any(env_id.startswith("xminigrid/") for env_id in entries)


def test_every_source_is_described_and_every_number_is_a_published_one_or_none():
    sources = tier_sources()
    for entry in gpu_tier().values():
        assert entry.published_source in sources
        assert entry.anchor is None or entry.anchor.source in sources
        assert (entry.published is None) == (entry.published_unit == "")
    craftax = gpu_tier()["craftax/Craftax-Symbolic-v1"]
    assert craftax.published == 15.3 and "percent of the maximum reward" in craftax.published_unit


def test_the_estimate_is_the_anchors_speed_applied_to_the_budget():
    assert gpu_tier()["mjx/CheetahRun"].estimated_minutes() == pytest.approx(60_000_000 / 435_162 / 60)
    assert Anchor("one T4", "x", minutes=9, steps=50_000_000).minutes_for(100_000_000) == pytest.approx(18)
    assert gpu_tier()["pgx/chess"].estimated_minutes() is None  # no published anchor, no estimate


def test_an_id_outside_the_tier_and_a_second_config_are_refused_in_one_line(tmp_path, capsys, monkeypatch):
    with pytest.raises(NotInGpuTierError, match="brax/reacher is not in the GPU tier"):
        gpu_config("brax/reacher")
    monkeypatch.chdir(tmp_path)
    assert main(["train", "brax/reacher", "--tier", "gpu"]) == 2
    assert "not in the GPU tier" in capsys.readouterr().err
    assert main(["train", "mjx/CheetahRun", "--tier", "gpu", "--config", "x.yaml"]) == 2
    assert "give one of them" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()
