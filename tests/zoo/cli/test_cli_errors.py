"""Every user error of the `parallax-zoo` console script is one line on stderr and exit 2 (docs/getting-started.md,
"The command line").

Every case runs through `main` in this process, and through the real console script in its own
process (PYTHONPATH set to this tree): one case of each kind by default, all with --run-slow (each
process imports jax; they start at once). The Hub cases talk to `tests/helpers/hub_server.py` on 127.0.0.1.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.hub_server import HubServer, closed_port_endpoint
from huggingface_hub import constants

import parallax_zoo
from parallax_zoo.agents.ppo import PPOConfig
from parallax_zoo.cli.main import main
from parallax_zoo.policies import checkpoint

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = Path(sys.executable).with_name("parallax-zoo")
UNKNOWN_COMMIT = "0" * 40
NO_BASELINE = next(
    env_id for env_id in parallax_zoo.list_envs(namespace="xminigrid") if parallax_zoo.spec(env_id).baseline is None
)
"""A registered id with no pinned baseline (read from the registry, since batches keep pinning more)."""

# name: (arguments, what the one line must say); {tmp} is a scratch folder, {commit} the policy repo's commit
CASES: dict[str, tuple[list[str], str]] = {
    "config YAML error": (["train", "GridWorld-v0", "--config", "{tmp}/broken.yaml"], "broken.yaml is not valid YAML"),
    "malformed hyperparameters": (
        ["train", "GridWorld-v0", "--config", "{tmp}/typo.yaml"],
        "hyperparameter num_envs must be an integer, got 'four'",
    ),
    "truncated weights": (["eval", "GridWorld-v0", "--policy", "{tmp}/truncated"], "truncated"),
    "empty weights": (["eval", "GridWorld-v0", "--policy", "{tmp}/empty"], "empty or truncated"),
    "pickle weights": (["eval", "GridWorld-v0", "--policy", "{tmp}/pickled"], "pickle weights are refused"),
    "unknown Hub repo": (
        ["eval", "GridWorld-v0", "--policy", f"hub:nobody/nothing@{UNKNOWN_COMMIT}"],
        "no Hub model repo nobody/nothing",
    ),
    "unknown Hub revision": (
        ["eval", "GridWorld-v0", "--policy", f"hub:someone/policy@{UNKNOWN_COMMIT}"],
        f"has no commit {UNKNOWN_COMMIT}",
    ),
    "Hub branch": (["eval", "GridWorld-v0", "--policy", "hub:someone/policy@main"], "a branch or tag moves"),
    "eval --out folder": (["eval", "GridWorld-v0", "--policy", "random", "--out", "{tmp}"], "is a folder"),
    "a flag that is not a number": (
        ["render", "Race-v0", "--fps", "fast"],
        "argument --fps: invalid int value: 'fast'",
    ),
    "download without a baseline": (["download", NO_BASELINE], "has no baseline pinned"),
    "demo without a baseline": (["demo", NO_BASELINE], "has no baseline pinned"),
    "train unknown id": (["train", "Rcae-v0"], "Did you mean: 'Race-v0'"),
    "leaderboard without inputs": (["leaderboard"], "nothing to rank"),
    "leaderboard missing results": (["leaderboard", "--results", "{tmp}/nowhere"], "no such file or folder"),
}


CONSOLE_BY_DEFAULT = ("config YAML error", "truncated weights", "unknown Hub repo", "train unknown id")
"""One case per kind of error (a flag, a file, the Hub, the registry), run through the console script always."""


def _write_inputs(tmp: Path) -> None:
    (tmp / "broken.yaml").write_text("algorithm: ppo\nhyperparameters: {num_envs: [\n")
    (tmp / "typo.yaml").write_text("algorithm: ppo\nhyperparameters:\n  num_envs: four\n")
    config = PPOConfig(env_id="GridWorld-v0", hidden_sizes=(8,))
    good = tmp / "good"
    checkpoint.save(good, checkpoint.initial_policy(config, parallax_zoo.make("GridWorld-v0")), config)
    weights = (good / "model.safetensors").read_bytes()
    for name, content in {
        "truncated": weights[: len(weights) // 2],
        "empty": b"",
        "pickled": b"\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00}\x94.",
    }.items():
        shutil.copytree(good, tmp / name)
        (tmp / name / "model.safetensors").write_bytes(content)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    """The cases' input files and a Hub holding someone/policy; yields the folder and the environment to run in."""
    tmp = tmp_path_factory.mktemp("cli-errors")
    _write_inputs(tmp)
    server = HubServer(tmp / "hub-server").start()
    server.store.commit_folder("someone/policy", tmp / "good")
    yield (
        tmp,
        {
            "PYTHONPATH": str(ROOT),
            "HF_ENDPOINT": server.endpoint,
            "HF_HOME": str(tmp / "hf-home"),
            "HF_HUB_DISABLE_XET": "1",
            "HF_HUB_OFFLINE": "0",
        },
    )
    server.stop()


@pytest.fixture(scope="module")
def outcomes(
    scratch: tuple[Path, dict[str, str]], request: pytest.FixtureRequest
) -> Iterator[dict[str, subprocess.CompletedProcess[str]]]:
    """The console-script cases this run selects, started at once: name -> its completed process."""
    tmp, variables = scratch
    selected = CASES if request.config.getoption("--run-slow") else {name: CASES[name] for name in CONSOLE_BY_DEFAULT}
    running = {
        name: subprocess.Popen(
            [str(SCRIPT), *(a.format(tmp=tmp) for a in args)],
            cwd=tmp,
            env=os.environ | variables,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for name, (args, _) in selected.items()
    }
    try:
        done = {}
        for name, process in running.items():
            out, err = process.communicate(timeout=300)
            done[name] = subprocess.CompletedProcess(process.args, process.returncode, out, err)
        yield done
    finally:
        for process in running.values():
            if process.poll() is None:
                process.kill()


def check_one_line(case: str, returncode: int, stderr: str) -> None:
    args, says = CASES[case]
    lines = stderr.strip().splitlines()
    assert returncode == 2, stderr
    assert len(lines) == 1, stderr
    assert lines[0].startswith(f"parallax-zoo {args[0]}: ") and says in lines[0], lines[0]


@pytest.mark.parametrize(
    "case",
    [name if name in CONSOLE_BY_DEFAULT else pytest.param(name, marks=pytest.mark.slow) for name in sorted(CASES)],
)
def test_the_console_script_reports_a_user_error_in_one_line_and_exits_2(
    outcomes: dict[str, subprocess.CompletedProcess[str]], case: str
) -> None:
    check_one_line(case, outcomes[case].returncode, outcomes[case].stderr)


@pytest.mark.parametrize("case", sorted(CASES))
def test_main_reports_a_user_error_in_one_line_and_exits_2(
    scratch: tuple[Path, dict[str, str]], case: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    tmp, variables = scratch
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", True)
    monkeypatch.chdir(tmp)
    try:
        code = main([a.format(tmp=tmp) for a in CASES[case][0]])
    except SystemExit as exit_:
        code = exit_.code
    check_one_line(case, int(code or 0), capsys.readouterr().err)


def test_an_unreachable_hub_is_one_line_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    closed = closed_port_endpoint()
    for name, value in {
        "HF_ENDPOINT": closed,
        "HF_HOME": str(tmp_path / "hf-home"),
        "PARALLAX_ZOO_BASELINES": str(tmp_path / "empty-mirror"),
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    assert main(["download", "Race-v0"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and closed in lines[0] and "connection refused" in lines[0], lines
