"""What the `parallax-zoo` command prints: its own lines only, progress of long work on stderr, help for every
argument, the demo's result without the env list, and what a rendered GIF holds."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from PIL import Image

import parallax_zoo
from parallax_zoo.cli.main import build_parser, main
from parallax_zoo.judging import random_scores

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = Path(sys.executable).with_name("parallax-zoo")


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The installed `parallax-zoo` console script on this tree, with a bounded wait."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "JAX_PLATFORMS": "cpu"}
    return subprocess.run(
        [str(SCRIPT), *args], cwd=cwd or ROOT, env=environment, capture_output=True, text=True, timeout=600
    )


def test_every_argument_of_every_command_has_help():
    parser = build_parser()
    commands = next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
    missing = [f"parallax-zoo {action.dest}" for action in parser._actions if not action.help]
    for name, subparser in commands.choices.items():
        missing += [
            f"parallax-zoo {name} {action.dest}" for action in subparser._actions if not (action.help or "").strip()
        ]
    assert not missing, f"arguments without help text: {missing}"


def test_other_libraries_say_nothing_through_the_command():
    for env_id in ("jaxmarl/MPE_simple_spread_v3", "brax/ant"):
        process = run_cli("info", env_id)
        assert process.returncode == 0, process.stderr[-2000:]
        assert process.stdout.splitlines()[0].split() == ["id", env_id], process.stdout[:500]
        assert process.stderr == "", process.stderr[-2000:]  # no "Importing submoduled environments", no UserWarning


def test_eval_shows_its_progress_per_opponent_on_stderr_and_the_library_stays_silent(tmp_path, capsys):
    process = run_cli("eval", "TicTacToe-v0", "--policy", "random", cwd=tmp_path)
    assert process.returncode == 0, process.stderr[-2000:]
    updates = process.stderr.replace("\r", "\n")
    for done, opponent, index in ((0, "perfect", 1), (256, "random", 2), (512, "baseline", 3)):
        assert f"TicTacToe-v0: evaluating random: {done}/768 games" in updates, updates[-2000:]
        assert f"vs {opponent} ({index} of 3 opponents)" in updates
    assert "768/768 games" in updates and "<00:00]" in updates  # games done, and the time left
    assert process.stdout.startswith("TicTacToe-v0  random: ")  # the result stays on stdout
    parallax_zoo.evaluate("GridWorld-v0", "random")  # outside the command: no bar
    assert capsys.readouterr().err == ""


def test_demo_shows_its_result_not_the_env_list(tmp_path, capsys):
    assert main(["demo", "GridWorld-v0", "--out", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines[0].startswith("GridWorld-v0: baseline parallax-zoo/GridWorld-v0@")
    assert len(lines) == 5 and not any("gymnax/" in line or "pgx/" in line for line in lines), captured.out
    assert "GridWorld-v0: evaluating baseline: 128/128 episodes" in captured.err.replace("\r", "\n")


def test_render_says_what_was_played_and_what_was_held(tmp_path):
    out = tmp_path / "grid.gif"
    process = run_cli("render", "GridWorld-v0", "--out", str(out), "--fps", "10")
    assert process.returncode == 0, process.stderr[-2000:]
    with Image.open(out) as gif:
        distinct = gif.n_frames  # identical frames at the end are one GIF frame, shown longer
    steps = distinct - 1
    max_steps = parallax_zoo.spec("GridWorld-v0").max_steps
    assert steps < max_steps
    held = (max_steps + 1 - steps) / 10
    assert (
        f"baseline playing GridWorld-v0, {steps} steps played ({steps + 1} frames from the reset), "
        f"the final frame held {held:.1f} s; step {steps}, over: return"
    ) in process.stdout, process.stdout
    assert f"{max_steps + 1} frames" not in process.stdout
    assert process.stderr.startswith(f"GridWorld-v0: playing up to {max_steps} steps of baseline and drawing them")


def test_eval_says_when_episodes_outlast_the_protocol(monkeypatch, capsys):
    """An episode the protocol stops playing before it ends scores 0: `eval` says so instead of a bare low score."""
    import dataclasses

    import parallax_zoo.judging.evaluation as evaluation

    real = evaluation.protocol
    monkeypatch.setattr(
        evaluation, "protocol", lambda spec, pinning=False: dataclasses.replace(real(spec, pinning), max_steps=2)
    )
    assert main(["eval", "GridWorld-v0", "--policy", "random"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"\n  \d+% of the episodes had not ended after the protocol's 2 steps and score 0", out), out
    monkeypatch.undo()  # the real protocol: every GridWorld episode ends within its 50 steps
    assert main(["eval", "GridWorld-v0", "--policy", "random"]) == 0
    assert "had not ended" not in capsys.readouterr().out


def test_leaderboard_shows_the_evaluations_it_runs(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    parallax_zoo.evaluate("GridWorld-v0", parallax_zoo.load_baseline("GridWorld-v0"), name="mine").save(
        results / "mine.json"
    )
    process = run_cli("leaderboard", "--results", str(results), "--entrant", "GridWorld-v0=baseline", cwd=tmp_path)
    assert process.returncode == 0, process.stderr[-2000:]
    shown = process.stderr.replace("\r", "\n")
    assert "GridWorld-v0: evaluating baseline:parallax-zoo/GridWorld-v0@main: 128/128 episodes" in shown
    assert "evaluating random" not in shown  # its protocol score is shipped (random_scores.json): not played again
    assert "| GridWorld-v0 | 1 | mine |" in process.stdout


def test_info_says_the_random_players_score_and_what_train_would_use(capsys, monkeypatch, tmp_path):
    assert main(["info", "xminigrid/MiniGrid-DoorKey-6x6"]) == 0  # an id with no baseline, so no config of its own
    rows = dict(re.split(r"\s{2,}", line, maxsplit=1) for line in capsys.readouterr().out.splitlines())
    assert rows["random score"].startswith("0.010 (95% CI [")  # random_scores.json, under its protocol
    assert rows["trains with"] == "the ppo-recurrent family default (ppo-recurrent.yaml)"
    assert rows["on a GPU"] == "-"  # it trains on a CPU in budget
    assert main(["info", "xminigrid/MiniGrid-FourRooms"]) == 0
    rows = dict(re.split(r"\s{2,}", line, maxsplit=1) for line in capsys.readouterr().out.splitlines())
    assert rows["on a GPU"].startswith("--tier gpu: xminigrid.yaml, 50,000,000 env steps, about 9.0 min on one T4")
    # Every id info can describe here has its random score shipped; one taken out of a copy of the file is not there.
    shipped = json.loads(random_scores.RANDOM_SCORES_FILE.read_text())
    del shipped["envs"]["craftax/Craftax-Symbolic-v1"]
    (tmp_path / "random_scores.json").write_text(json.dumps(shipped))
    stored = random_scores.stored_random_score
    monkeypatch.setattr(
        random_scores, "stored_random_score", lambda spec: stored(spec, path=tmp_path / "random_scores.json")
    )
    assert main(["info", "craftax/Craftax-Symbolic-v1"]) == 0
    assert (
        "not measured under its protocol: parallax-zoo maintain random-scores craftax/Craftax-Symbolic-v1"
        in capsys.readouterr().out
    )
