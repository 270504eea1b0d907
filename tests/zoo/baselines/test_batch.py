"""`parallax-zoo maintain batch`: many ids in one command, a failing id reported and passed over, ids already
done skipped on the next run (docs/baselines.md, "Batches")."""

from __future__ import annotations

import json

import pytest
from helpers.memory_maps import memory_map_count

from parallax_zoo.baselines.batch import run_batch
from parallax_zoo.baselines.families import FAMILY_CONFIGS
from parallax_zoo.cli.main import main
from parallax_zoo.policies import checkpoint


def test_a_batch_trains_each_id_with_its_config_reports_failures_and_resumes(tmp_path, capsys):
    command = ["maintain", "batch", "gymnax/DeepSea-bsuite", "mjx/Go1JoystickFlatTerrain", "--seeds", "2"]
    command += ["--total-timesteps", "1024", "--out", str(tmp_path)]
    assert main(command) == 1  # an id failed: the exit status says so
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["id", "status", "seeds"]
    trained = next(line for line in lines if line.startswith("gymnax/DeepSea-bsuite"))
    assert trained.split()[1:3] == ["trained", "2"] and trained.split()[3] == "1024"
    failed = next(line for line in lines if line.startswith("mjx/Go1JoystickFlatTerrain"))
    assert failed.split()[1] == "failed"
    reason = lines[lines.index(failed) + 1]
    assert "MuJoCo Menagerie's robot assets (unitree_go1)" in reason and "Traceback" not in reason
    assert lines[-1].startswith("1 of 2 ids failed: mjx/Go1JoystickFlatTerrain")

    for seed in (0, 1):  # every seed's folder whole, trained with the family default (DeepSea has no config)
        folder = tmp_path / "gymnax-DeepSea-bsuite" / f"seed{seed}"
        assert sorted(p.name for p in folder.iterdir()) == sorted(
            ["README.md", "config.yaml", "curve.png", "eval.json", "model.safetensors"]
        )
        config = checkpoint.load_config(folder / "config.yaml")
        assert config.learning_rate == checkpoint.load_config(FAMILY_CONFIGS / "ppo.yaml").learning_rate
    records = [json.loads((tmp_path / "gymnax-DeepSea-bsuite" / f"seed{n}" / "eval.json").read_text()) for n in (0, 1)]
    score = records[0]["mean"]
    for record in records:  # each seed's folder carries the statistics over both seeds, and its card says them
        assert record["over_seeds"]["scores"] == {"0": records[0]["mean"], "1": records[1]["mean"]}
        low, high = record["over_seeds"]["iqm_ci95"]
        assert min(records[0]["mean"], records[1]["mean"]) <= low <= record["over_seeds"]["iqm"] <= high
    card = (tmp_path / "gymnax-DeepSea-bsuite" / "seed1" / "README.md").read_text()
    assert "Over the 2 training seeds the protocol scores are seed 0" in card and "interquartile mean" in card

    assert main(command[:3] + command[4:]) == 0  # again, without the failing id: nothing is trained twice
    again = capsys.readouterr().out.splitlines()[1].split()
    assert again[:3] == ["gymnax/DeepSea-bsuite", "done", "before"] and float(again[-3]) == round(score, 3)


def test_a_batch_refuses_an_unknown_id_before_training_anything(tmp_path, capsys):
    code = main(["maintain", "batch", "gymnax/DeepSea-bsuite", "gymnax/Nope-v0", "--out", str(tmp_path)])
    assert code == 2
    assert "Nope-v0" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow  # the many-id jobs it guards run with --run-slow; 15 s of compiling ids on two cores
def test_a_batch_lets_go_of_each_ids_compiled_programs(tmp_path):
    """XLA keeps a compiled program's code mapped while JAX caches it; a batch that kept every id's would run out of
    the kernel's memory maps after a few dozen Playground ids and crash inside the compiler."""
    if memory_map_count() is None:
        pytest.fail("this check reads /proc/self/maps (Linux)")
    quick = dict(seeds=1, out_root=tmp_path, total_timesteps=1024)
    run_batch(["gymnax/DeepSea-bsuite"], **quick)  # gymnax and the trainer imported, their libraries mapped
    after_one = memory_map_count()
    run_batch(["gymnax/Catch-bsuite"], **quick)
    grown = memory_map_count() - after_one
    assert grown < 100, f"{grown} more memory maps after the second id: its programs were kept (one id takes ~300)"
