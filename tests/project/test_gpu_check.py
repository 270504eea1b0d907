"""The GPU check's scripts run end to end without a GPU or the network: the dry run, and the early failures."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import parallax_zoo

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import gpu_check  # noqa: E402  # pyright: ignore[reportMissingImports]


def run_script(*args: str, env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)


def offline_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """This interpreter, pip kept off the network, no carried wheels, results under `tmp_path`."""
    return {
        **os.environ,
        "PYTHON": sys.executable,
        "PIP_NO_INDEX": "1",
        "WHEELS": str(tmp_path / "no-wheels"),
        "GPU_CHECK_OUT": str(tmp_path / "out"),
        **extra,
    }


@pytest.mark.slow  # it trains the GPU tier's baselines and times every native env and PPO: GPU-sized
def test_dry_run_runs_every_section_and_writes_the_results(tmp_path: Path) -> None:
    done = run_script("benchmarks/gpu_check.sh", env=offline_env(tmp_path, GPU_CHECK_DRY="1"))
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    out = tmp_path / "out"
    results = json.loads((out / "results.json").read_text())
    assert results["dry"] is True
    assert results["carried"] == {"gpu-check-probe": "1.0"}  # the probe wheel went through the install step
    assert results["versions"]["jax"] == __import__("jax").__version__
    assert results["imported_huggingface_hub"] is False  # the GPU machine's copy is outside the tested range
    sections = results["sections"]

    assert [r["env_id"] for r in sections["baselines"]] == list(gpu_check.BASELINES)
    for row in sections["baselines"]:
        assert row["reference"] == parallax_zoo.spec(row["env_id"]).reference_score
        assert row["compared"] is False and math.isfinite(row["mean"]) and row["episodes"] > 0
        assert (out / f"curve-{row['env_id'].replace('/', '-')}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    native = {i for i in parallax_zoo.list_envs() if parallax_zoo.spec(i).kind == "native"}
    assert {r["env_id"] for r in sections["envs"]} == native
    assert all(r["steps_per_s"] > 0 for r in sections["envs"])
    assert {r["game"] for r in sections["boards"]} == {"tic_tac_toe", "connect_four"}
    assert all(r["ratio_median"] > 0 and r["pgx_steps_per_s"] > 0 for r in sections["boards"])
    assert [r["env_id"] for r in sections["ppo"]] == ["gymnax/CartPole-v1"]
    assert sections["ppo"][0]["steps_per_s"] > 0

    log = (out / "check.log").read_text()
    for title in (
        "re-trained baselines",
        "native env throughput",
        "board games against Pgx",
        "PPO training throughput",
    ):
        assert title in log
    assert re.search(r"gymnax/CartPole-v1 +512 x 3 .* not compared \(dry run\)", log)


def test_the_real_run_stops_without_wheels(tmp_path: Path) -> None:
    done = run_script("benchmarks/gpu_check.sh", env=offline_env(tmp_path), timeout=60)
    assert done.returncode == 2
    assert "no wheels in" in done.stderr and "benchmarks/gpu_wheels.sh" in done.stderr


def test_the_real_run_stops_when_jax_sees_no_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        gpu_check.preflight(dry=False)
    assert stop.value.code == 2
    assert "gpu_check: jax sees no GPU (backend 'cpu'" in capsys.readouterr().err


def test_a_missing_package_is_named_with_the_wheel_to_carry(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "gymnax", None)  # how Python marks a module as not importable
    with pytest.raises(SystemExit) as stop:
        gpu_check.preflight(dry=True)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("gpu_check: missing packages:\n  gymnax: cannot import gymnax")
    assert "bash benchmarks/gpu_wheels.sh" in err
    assert "pgx" not in err and "gymnasium" not in err  # only what is missing is named


def run_driver(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    """`gpu_check.py --dry ARGS` in this process (its modules are loaded once for the whole suite)."""
    monkeypatch.setenv("XLA_FLAGS", os.environ.get("XLA_FLAGS", ""))  # restored after: main() appends to it
    monkeypatch.delenv("GPU_CHECK_SITE", raising=False)
    monkeypatch.setattr(sys, "argv", ["gpu_check.py", "--dry", *args])
    return gpu_check.main()


def test_sections_past_the_budget_are_recorded_as_skipped(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert run_driver(monkeypatch, "--out", str(tmp_path), "--budget-s", "0") == 1
    sections = json.loads((tmp_path / "results.json").read_text())["sections"]
    assert list(sections) == list(gpu_check.DEFAULT_SECTIONS)  # the GPU tier trains only when asked
    assert all(value.startswith("skipped: ") and "over the 0 s budget" in value for value in sections.values())


def test_a_broken_section_is_recorded_and_fails_the_check(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(gpu_check, "BASELINES", ("NoSuchEnv-v0",))
    assert run_driver(monkeypatch, "--out", str(tmp_path), "--sections", "baselines") == 1
    sections = json.loads((tmp_path / "results.json").read_text())["sections"]
    assert list(sections) == ["baselines"]
    assert sections["baselines"].startswith("error: ") and "NoSuchEnv-v0" in sections["baselines"]
    assert "sections skipped or broken: baselines" in capsys.readouterr().err


def test_an_unknown_section_is_refused(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        run_driver(monkeypatch, "--sections", "baselines,gpus")
    assert stop.value.code == 2
    assert "unknown section(s) gpus; choose from baselines, envs, boards, ppo" in capsys.readouterr().err


def test_an_id_outside_the_gpu_tier_is_refused_before_anything_runs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with pytest.raises(SystemExit) as stop:
        run_driver(monkeypatch, "--out", str(tmp_path), "--sections", "gpu-tier", "--gpu-tier", "brax/ant,brax/reacher")
    assert stop.value.code == 2
    assert "not in the GPU tier: brax/reacher" in capsys.readouterr().err
    assert not (tmp_path / "results.json").exists()


@pytest.mark.slow  # builds and compiles recurrent PPO on an XLand-MiniGrid env: about a minute on 2 cores
def test_the_dry_run_trains_a_chosen_gpu_tier_id_in_one_offline_call(tmp_path: Path) -> None:
    args = "--sections gpu-tier --gpu-tier xminigrid/MiniGrid-FourRooms"
    done = run_script("benchmarks/gpu_check.sh", env=offline_env(tmp_path, GPU_CHECK_DRY="1", GPU_CHECK_ARGS=args))
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    (row,) = json.loads((tmp_path / "out" / "results.json").read_text())["sections"]["gpu-tier"]
    assert row["env_id"] == "xminigrid/MiniGrid-FourRooms" and math.isfinite(row["mean"])
    assert row["estimated_minutes"] == pytest.approx(9.0) and row["anchor_hardware"] == "one T4"
    assert (tmp_path / "out" / "curve-gpu-tier-xminigrid-MiniGrid-FourRooms.png").is_file()
    assert "GPU tier, trained with --tier gpu" in (tmp_path / "out" / "check.log").read_text()


def test_the_wheel_script_downloads_exactly_the_carried_distributions() -> None:
    script = (ROOT / "benchmarks" / "gpu_wheels.sh").read_text()
    listed = re.search(r"WHEELS=\(\n(.*?)\n\)", script, re.S)
    assert listed is not None
    assert [line.strip().split("==")[0] for line in listed.group(1).splitlines()] == list(gpu_check.CARRIED)
    assert set(gpu_check.CARRIED) <= set(gpu_check.REQUIRED.values())


@pytest.mark.slow
def test_the_wheel_script_fetches_installable_wheels_under_the_limit(tmp_path: Path) -> None:
    """Downloads from the package index: the wheels install offline with --no-deps and provide every carried module."""
    folder = tmp_path / "wheels"
    done = run_script("benchmarks/gpu_wheels.sh", str(folder), env=dict(os.environ), timeout=300)
    assert done.returncode == 0, done.stderr
    assert re.search(r"6 wheels, [0-9.]+ MiB in", done.stdout)
    wheels = sorted(folder.glob("*.whl"))
    names = {w.name.split("-")[0].lower().replace("_", "-") for w in wheels}
    assert names == set(gpu_check.CARRIED)
    assert sum(w.stat().st_size for w in wheels) < 60 * 2**20
    site = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-index",
            "--no-deps",
            "--target",
            str(site),
            *map(str, wheels),
        ],
        check=True,
        timeout=300,
    )
    carried_modules = [m for m, d in gpu_check.REQUIRED.items() if d in gpu_check.CARRIED]
    probe = f"import sys; sys.path.insert(0, {str(site)!r}); " + "; ".join(
        f"import {m}; assert {m}.__file__.startswith({str(site)!r}), {m}.__file__" for m in carried_modules
    )
    subprocess.run([sys.executable, "-c", probe], check=True, timeout=120)


@pytest.mark.slow
def test_a_full_length_re_train_on_the_cpu_passes_the_comparison(tmp_path: Path) -> None:
    """The GPU sizes of the baselines section, on the CPU the reference was measured on: Race-v0 re-trains to it."""
    row = gpu_check.check_baseline("Race-v0", gpu_check.GPU, tmp_path / "work", tmp_path)
    assert row["compared"] is True and row["total_timesteps"] == 15_360
    assert row["mean"] == pytest.approx(row["reference"], abs=1e-6)
    assert row["normalised"] == pytest.approx(1.0, abs=1e-5) and row["passed"] is True
    assert (tmp_path / "curve-Race-v0.png").is_file()
