"""`maintain remeasure` on a baseline trained over several seeds: every seed's run is measured again and the
statistics over seeds are made from the new scores, never kept from another measurement."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import parallax_zoo
from parallax_zoo.agents.ppo import PPOConfig
from parallax_zoo.baselines.remeasure import remeasure
from parallax_zoo.baselines.training import train_baseline
from parallax_zoo.catalogue.registry import PACKAGED_REGISTRY, Registry
from parallax_zoo.errors import UserError
from parallax_zoo.judging.random_scores import RANDOM_SCORES_FILE
from parallax_zoo.policies import hub

TINY = PPOConfig(
    env_id="GridWorld-v0", num_envs=4, num_steps=8, total_timesteps=4 * 8 * 6, update_epochs=1, num_minibatches=1
)


@pytest.fixture
def two_seeds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """GridWorld-v0 trained tiny over seeds 0 and 1 and pinned, in a sandbox: its own registry.yaml, random scores,
    mirror and working folder (where runs/ goes)."""
    shutil.copy(PACKAGED_REGISTRY, tmp_path / "registry.yaml")
    shutil.copy(RANDOM_SCORES_FILE, tmp_path / "random_scores.json")
    monkeypatch.setenv(hub.MIRROR_ENV_VAR, str(tmp_path / "baselines"))
    monkeypatch.chdir(tmp_path)
    spec = Registry.from_yaml((tmp_path / "registry.yaml").read_text()).spec("GridWorld-v0")
    train_baseline(
        spec,
        parallax_zoo.make("GridWorld-v0"),
        config=TINY,
        seeds=2,
        progress=False,
        pin=True,
        registry_path=tmp_path / "registry.yaml",
        random_scores_path=tmp_path / "random_scores.json",
        allow_random_level=True,  # a tiny run: the pin's mechanics, not its skill
    )
    return tmp_path / "baselines" / "GridWorld-v0", tmp_path / "runs" / "GridWorld-v0" / "seed1"


def _record(folder: Path) -> dict:
    return json.loads((folder / "eval.json").read_text())


def test_remeasure_measures_every_seed_again_and_remakes_the_statistics(two_seeds: tuple[Path, Path]) -> None:
    pinned, other = two_seeds
    true_mean = _record(other)["mean"]
    forged = {**_record(other), "mean": 123.0}
    (other / "eval.json").write_text(json.dumps(forged))
    record = _record(pinned)
    record["over_seeds"]["scores"]["1"] = 123.0  # as if measured under another protocol
    (pinned / "eval.json").write_text(json.dumps(record))
    spec = Registry.from_yaml((pinned.parents[1] / "registry.yaml").read_text()).spec("GridWorld-v0")
    remeasure(spec, parallax_zoo.make("GridWorld-v0"), pinned.parents[1] / "registry.yaml")
    assert _record(other)["mean"] == true_mean
    scores = _record(pinned)["over_seeds"]["scores"]
    assert scores == {"0": _record(pinned)["mean"], "1": true_mean}
    assert _record(other)["over_seeds"] == _record(pinned)["over_seeds"]
    assert "123" not in (pinned / "README.md").read_text()


def test_remeasure_stops_where_a_seeds_run_is_missing_unless_told_to_drop_the_statistics(
    two_seeds: tuple[Path, Path],
) -> None:
    pinned, other = two_seeds
    shutil.rmtree(other)
    registry_file = pinned.parents[1] / "registry.yaml"
    before = (pinned / "eval.json").read_text()
    spec = Registry.from_yaml(registry_file.read_text()).spec("GridWorld-v0")
    with pytest.raises(UserError, match=r"runs of its other training seeds are not all here .*--pinned-seed-only"):
        remeasure(spec, parallax_zoo.make("GridWorld-v0"), registry_file)
    assert (pinned / "eval.json").read_text() == before, "nothing written"
    remeasure(spec, parallax_zoo.make("GridWorld-v0"), registry_file, pinned_seed_only=True)
    assert "over_seeds" not in _record(pinned) and _record(pinned)["training_seeds"] == [0, 1]
