"""The `parallax-zoo` command, called through its `main` as the console script does."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from parallax_zoo.cli.main import main


def test_list_prints_every_registered_id(capsys):
    import parallax_zoo

    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for env_id in parallax_zoo.list_envs():
        assert env_id in out


def test_info_shows_spaces_and_limits(capsys):
    assert main(["info", "Race-v0"]) == 0
    out = capsys.readouterr().out
    assert "Race-v0" in out and "max_steps" in out and "Discrete(2, shape=(3,))" in out


def test_unknown_id_exits_2_with_close_matches(capsys):
    assert main(["info", "Rcae-v0"]) == 2
    assert "Did you mean: 'Race-v0'" in capsys.readouterr().err


def test_render_writes_a_gif_of_the_episode(tmp_path, capsys):
    out = tmp_path / "race.gif"
    assert main(["render", "Race-v0", "--out", str(out), "--steps", "12"]) == 0
    with Image.open(out) as gif:
        assert gif.n_frames >= 2
        frame = np.asarray(gif.convert("RGB"))
    assert frame.ndim == 3 and frame.shape[2] == 3
    assert not list(tmp_path.glob("*.tmp"))


def test_download_and_demo_without_a_pin_say_how_to_get_one(scratch_registry, capsys):
    import parallax_zoo

    parallax_zoo.register(
        {"id": "Unpinned-v0", "entry_point": "parallax_zoo.envs.gridworld:GridWorld", "max_steps": 10}, override=True
    )
    for command in (["download", "Unpinned-v0"], ["demo", "Unpinned-v0"]):
        assert main(command) == 2
        assert (
            "no baseline pinned in registry.yaml yet; train one with `parallax-zoo train Unpinned-v0`"
            in capsys.readouterr().err
        )


def test_eval_random_prints_the_score_and_writes_json(tmp_path, capsys):
    out = tmp_path / "result.json"
    assert main(["eval", "TicTacToe-v0", "--policy", "random", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "TicTacToe-v0  random:" in printed and "vs random: win" in printed
    assert out.is_file()


def test_eval_of_a_missing_policy_folder_says_what_a_policy_is(capsys):
    assert main(["eval", "GridWorld-v0", "--policy", "no/such/folder"]) == 2
    assert "'baseline', 'random', 'hub:REPO@COMMIT'" in capsys.readouterr().err


def test_leaderboard_from_a_results_folder(tmp_path, capsys):
    assert main(["eval", "Race-v0", "--policy", "random", "--out", str(tmp_path / "results" / "race.json")]) == 0
    assert main(["leaderboard", "--results", str(tmp_path / "results"), "--out", str(tmp_path / "board")]) == 0
    printed = capsys.readouterr().out
    assert "| Race-v0 | 1 | random |" in printed
    assert sorted(p.name for p in (tmp_path / "board").iterdir()) == [
        "leaderboard.csv",
        "leaderboard.html",
        "leaderboard.md",
    ]


def test_leaderboard_entrant_needs_env_and_policy(capsys):
    assert main(["leaderboard", "--entrant", "Race-v0"]) == 2
    assert "ENV_ID=POLICY" in capsys.readouterr().err


def _console_script(*commands: list[str], cwd) -> list[subprocess.CompletedProcess]:
    """Run the installed `parallax-zoo` script once per command, side by side, with this tree first on the path."""
    script = Path(sys.executable).with_name("parallax-zoo")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3]), "JAX_PLATFORMS": "cpu"}
    running = [
        subprocess.Popen(
            [str(script), *command], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for command in commands
    ]
    finished = []
    for process, command in zip(running, commands):
        out, err = process.communicate(timeout=120)
        finished.append(subprocess.CompletedProcess(command, process.returncode, out, err))
    return finished


def test_render_refuses_bad_flags_in_one_line_with_exit_2_before_building_anything(tmp_path):
    expected = {
        ("--fps", "0"): "parallax-zoo render: --fps must be a whole number >= 1, got 0",
        ("--steps", "0"): "parallax-zoo render: --steps must be a whole number >= 1, got 0",
        (
            "--out",
            "race.png",
        ): "parallax-zoo render: --out race.png: render writes a GIF; give a path ending in .gif, e.g. race.gif",
        (
            "--out",
            "missing/race.gif",
        ): "parallax-zoo render: --out missing/race.gif: the folder missing does not exist; "
        "create it first or write elsewhere",
    }
    results = _console_script(*(["render", "Race-v0", *flags] for flags in expected), cwd=tmp_path)
    for flags, result in zip(expected, results):
        assert result.returncode == 2, (flags, result.stderr)
        assert result.stderr.splitlines() == [expected[flags]], flags
        assert result.stdout == ""
    assert list(tmp_path.iterdir()) == []


def test_eval_builds_the_env_of_its_id_once(scratch_registry, capsys):
    """The id is resolved once, at the top: loading the policy folder and evaluating it share one env."""
    from helpers.counted_envs import CountedRace

    import parallax_zoo

    race = parallax_zoo.spec("Race-v0")
    parallax_zoo.register(
        {
            "id": "CountedRace-v0",
            "entry_point": "helpers.counted_envs:CountedRace",
            "max_steps": race.max_steps,
            "multi_agent": True,
            "num_agents": race.num_agents,
        }
    )
    CountedRace.built = 0
    folder = Path(__file__).resolve().parents[3] / "baselines" / "Race-v0"
    assert main(["eval", "CountedRace-v0", "--policy", str(folder)]) == 0
    assert "CountedRace-v0" in capsys.readouterr().out
    assert CountedRace.built == 1


def test_maintenance_jobs_are_subcommands_and_a_job_without_a_recipe_is_one_line(capsys):
    from parallax_zoo.cli.main import build_parser

    parser = build_parser()
    assert parser.parse_args(["maintain", "remeasure", "Race-v0", "--registry", "r.yaml"]).env_ids == ["Race-v0"]
    assert parser.parse_args(["maintain", "anchors", "--write", "--games", "8"]).games == 8
    assert main(["maintain", "fine-tune", "Race-v0", "start", "out"]) == 2
    err = capsys.readouterr().err
    assert (
        err
        == "parallax-zoo maintain: no fine-tuning recipe for 'Race-v0'; recipes exist for ConnectFour-v0, Othello-v0\n"
    )


def test_ctrl_c_wrapped_by_python_inside_an_import_is_still_one_line_and_130(monkeypatch, capsys):
    """Ctrl-C landing inside a lazy import can come back as another exception (Python 3.11 wraps one raised in
    `__set_name__` in a RuntimeError); it is still the user's interrupt, not a traceback."""
    cli = sys.modules["parallax_zoo.cli.main"]  # the module: the package's `main` attribute is the function

    def interrupted_import(args):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as interrupt:
            raise RuntimeError("Error calling __set_name__") from interrupt

    monkeypatch.setattr(cli, "_info", interrupted_import)
    assert cli.main(["info", "GridWorld-v0"]) == 130
    assert capsys.readouterr().err == "parallax-zoo info: interrupted; stopped\n"
    monkeypatch.setattr(cli, "_info", lambda args: 1 / 0)  # any other error is not taken for an interrupt
    with pytest.raises(ZeroDivisionError):
        cli.main(["info", "GridWorld-v0"])
