"""`parallax-zoo train` across processes with `jax.distributed` (docs/scaling.md, "Across hosts, from the command
line"): the processes join one run, process 0 alone writes, and the weights are the single-process run's."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers.compile_flags import cpu_devices_environment
from safetensors.numpy import load_file

from parallax_zoo.cli.main import main

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = Path(sys.executable).with_name("parallax-zoo")
LAUNCHER_VARIABLES = ("SLURM_", "OMPI_", "PMI_", "TPU_", "JAX_COORDINATOR")
"""What JAX reads to find a cluster launcher; cleared, so these tests run as on a plain machine."""
RUN = ["GridWorld-v0", "--total-timesteps", "3072", "--num-envs", "8", "--seeds", "2"]


def _environment(devices: int) -> dict[str, str]:
    plain = {k: v for k, v in cpu_devices_environment(devices).items() if not k.startswith(LAUNCHER_VARIABLES)}
    return {**plain, "PYTHONPATH": str(ROOT)}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        return probe.getsockname()[1]


def _train(*args: str, cwd: Path, devices: int = 1) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(SCRIPT), "train", *args],
        cwd=cwd,
        env=_environment(devices),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_the_process_flags_go_together_and_are_checked_before_anything_runs(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["train", "Race-v0", "--coordinator", "localhost:1234"]) == 2
    error = capsys.readouterr().err.strip()
    assert "--num-processes, --process-id missing" in error and "give all three" in error
    flags = ["--coordinator", "localhost:1234", "--num-processes", "2", "--process-id", "2"]
    assert main(["train", "Race-v0", *flags]) == 2
    assert "--process-id 2: give 0 to 1" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


def test_distributed_without_a_launcher_or_flags_says_how_to_start_the_processes(tmp_path):
    process = _train("Race-v0", "--distributed", cwd=tmp_path)
    _, err = process.communicate(timeout=300)
    lines = [line for line in err.splitlines() if line.strip()]
    assert process.returncode == 2 and len(lines) == 1, err[-2000:]
    assert "no cluster launcher" in lines[0] and "--coordinator HOST:PORT" in lines[0]
    assert not (tmp_path / "runs").exists()


def test_envs_that_do_not_split_across_every_processs_devices_are_refused_in_one_line(tmp_path):
    flags = ["--coordinator", f"localhost:{_free_port()}", "--num-processes", "1", "--process-id", "0"]
    process = _train("Race-v0", "--num-envs", "6", *flags, cwd=tmp_path, devices=4)
    _, err = process.communicate(timeout=300)
    lines = [line for line in err.splitlines() if line.strip()]
    assert process.returncode == 2 and len(lines) == 1, err[-2000:]
    assert "6 envs" in lines[0] and "4 devices" in lines[0] and "multiple of 4 (e.g. 8)" in lines[0]


@pytest.mark.slow  # two processes compile PPO, then one more for the reference run: about a minute on 2 cores
def test_two_processes_train_one_run_that_process_0_writes_with_the_single_process_weights(tmp_path):
    flags = ["--coordinator", f"localhost:{_free_port()}", "--num-processes", "2"]
    processes = [
        _train(*RUN, "--out", "run", *flags, "--process-id", str(index), cwd=tmp_path, devices=2) for index in range(2)
    ]
    outputs = [process.communicate(timeout=600) for process in processes]
    assert [process.returncode for process in processes] == [0, 0], [err[-2000:] for _, err in outputs]
    assert "2 processes joined, one mesh over 4 devices" in outputs[0][0]
    assert "process 1 trained its share" in outputs[1][0] and "written to" not in outputs[1][0]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["run", "run-seed1"]  # once, and nothing half-written
    assert "in each of 2 processes, 4 devices in all" in (tmp_path / "run" / "README.md").read_text()

    single = _train(*RUN, "--out", "single", cwd=tmp_path)
    _, err = single.communicate(timeout=600)
    assert single.returncode == 0, err[-2000:]
    for run, reference in (("run", "single"), ("run-seed1", "single-seed1")):
        ours, theirs = (
            load_file(tmp_path / run / "model.safetensors"),
            load_file(tmp_path / reference / "model.safetensors"),
        )
        assert ours.keys() == theirs.keys()
        for name in ours:  # the env batch summed in another order: float rounding apart, no more
            np.testing.assert_allclose(ours[name], theirs[name], rtol=1e-4, atol=1e-5, err_msg=name)
        ours_score, their_score = (
            json.loads((tmp_path / f / "eval.json").read_text())["mean"] for f in (run, reference)
        )
        assert ours_score == pytest.approx(their_score, abs=0.02)
