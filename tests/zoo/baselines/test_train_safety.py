"""`train` and pinning under faults: concurrent pins, kills and Ctrl-C mid-run, foreign --out folders, bad values.

Every process here is real and every signal is a real SIGKILL or SIGINT; each test works on a copy of
registry.yaml and of the baselines mirror (PARALLAX_ZOO_BASELINES) in a temporary folder, so the repo's
own baselines/ and registry.yaml are never touched.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from parallax_zoo.agents.mappo import MAPPOConfig
from parallax_zoo.agents.ppo import PPOConfig
from parallax_zoo.baselines.registry_update import folder_pin, pin_baseline
from parallax_zoo.catalogue.registry import PACKAGED_REGISTRY, Registry
from parallax_zoo.cli.main import main
from parallax_zoo.judging.random_scores import RANDOM_SCORES_FILE
from parallax_zoo.policies import checkpoint, hub

RUN_FILES = ("config.yaml", "model.safetensors", "eval.json", "curve.png", "README.md")
ROOT = Path(__file__).resolve().parents[3]
SCRIPT = Path(sys.executable).parent / "parallax-zoo"
TINY = PPOConfig(
    env_id="GridWorld-v0", num_envs=4, num_steps=8, total_timesteps=4 * 8 * 6, update_epochs=1, num_minibatches=1
)
LONG = dataclasses.replace(TINY, total_timesteps=4 * 8 * 4000)
"""Long enough (a few seconds of updates) that a signal sent once training shows progress lands mid-run."""
CLI_ON_REGISTRY = (
    "import sys; from pathlib import Path; import parallax_zoo.catalogue.registry as registry; "
    "registry.PACKAGED_REGISTRY = Path(sys.argv[1]); import parallax_zoo.baselines.registry_update as pinning; "
    "pinning.PACKAGED_REGISTRY = registry.PACKAGED_REGISTRY; import parallax_zoo.judging.random_scores as scores; "
    "scores.RANDOM_SCORES_FILE = registry.PACKAGED_REGISTRY.with_name('random_scores.json'); "
    "from parallax_zoo.cli.main import main; sys.exit(main(sys.argv[2:]))"
)
"""The CLI run with registry.yaml at argv[1] in place of the package's, and random_scores.json beside it in place of
the package's (the pin tests' copies)."""


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    """A temporary registry.yaml, random_scores.json and baselines mirror holding GridWorld-v0's shipped folder, all
    copies."""
    shutil.copy(PACKAGED_REGISTRY, tmp_path / "registry.yaml")
    shutil.copy(RANDOM_SCORES_FILE, tmp_path / "random_scores.json")
    shutil.copytree(hub.mirror_folder("GridWorld-v0"), tmp_path / "baselines" / "GridWorld-v0")
    checkpoint.save_config(TINY, tmp_path / "tiny.yaml")
    checkpoint.save_config(LONG, tmp_path / "long.yaml")
    return tmp_path


def default_sigint() -> None:
    """In the child, before it starts: SIGINT at its default, as a shell starts a command. An ignored SIGINT is
    inherited across exec, and a library run earlier in this worker may have left it ignored."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def environment(sandbox: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "JAX_PLATFORMS": "cpu",
        hub.MIRROR_ENV_VAR: str(sandbox / "baselines"),
    }


def sandbox_process(command: list[str], sandbox: Path, stderr: Any = subprocess.PIPE) -> subprocess.Popen[str]:
    """`command` as a real process in the sandbox, SIGINT at its default as a shell starts it (`default_sigint`)."""
    return subprocess.Popen(
        command,
        cwd=sandbox,
        env=environment(sandbox),
        preexec_fn=default_sigint,
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
    )


def train_process(sandbox: Path, *args: str) -> subprocess.Popen[str]:
    """`parallax-zoo train ARGS` on the sandbox's registry and mirror, as a real process."""
    return sandbox_process(
        [sys.executable, "-c", CLI_ON_REGISTRY, str(sandbox / "registry.yaml"), "train", *args], sandbox
    )


def pinned_files(sandbox: Path, env_id: str) -> dict[str, str]:
    spec = Registry.from_yaml((sandbox / "registry.yaml").read_text()).spec(env_id)
    assert spec.baseline is not None
    return dict(spec.baseline.files)


def assert_baseline_whole(sandbox: Path, before: dict[str, str]) -> None:
    """The pin is the old one and the folder's files are exactly what it pins (eval/demo would accept it)."""
    folder = sandbox / "baselines" / "GridWorld-v0"
    assert pinned_files(sandbox, "GridWorld-v0") == before
    assert dict(folder_pin("GridWorld-v0", folder)[0].files) == before


def wait_for(condition, process: subprocess.Popen[str], what: str, timeout: float = 240.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert process.poll() is None, f"train ended (rc {process.returncode}) before {what}"
        assert time.monotonic() < deadline, f"no {what} within {timeout} s"
        time.sleep(0.05)


def new_weights_written(sandbox: Path, since: float) -> bool:
    """Whether the run has written a model.safetensors anywhere under the mirror (staged or in place)."""
    return any(path.stat().st_mtime >= since for path in (sandbox / "baselines").rglob("model.safetensors"))


def training_underway(process_stderr: Path) -> bool:
    return "mean_return=" in process_stderr.read_text(errors="replace")


KILL_POINTS = [
    pytest.param(signal.SIGKILL, "weights", id="SIGKILL-after-the-new-weights-are-written"),
    pytest.param(signal.SIGINT, "weights", id="SIGINT-after-the-new-weights-are-written", marks=pytest.mark.slow),
    pytest.param(signal.SIGINT, "training", id="SIGINT-mid-training", marks=pytest.mark.slow),
]


@pytest.mark.parametrize(("signum", "point"), KILL_POINTS)
def test_an_interrupted_train_pin_force_leaves_the_pinned_baseline_whole(
    sandbox: Path, signum: int, point: str
) -> None:
    before = pinned_files(sandbox, "GridWorld-v0")
    config = "tiny.yaml" if point == "weights" else "long.yaml"
    log = sandbox / "stderr.txt"
    command = [
        sys.executable,
        "-c",
        CLI_ON_REGISTRY,
        str(sandbox / "registry.yaml"),
        "train",
        "GridWorld-v0",
        "--config",
        str(sandbox / config),
        "--pin",
        "--force",
    ]
    started = time.time()
    with log.open("w") as stderr:
        process = sandbox_process(command, sandbox, stderr)
        try:
            if point == "weights":
                wait_for(lambda: new_weights_written(sandbox, started), process, "new weights")
            else:
                wait_for(lambda: training_underway(log), process, "training progress")
            process.send_signal(signum)
            process.wait(timeout=120)
        finally:
            process.kill()
    assert_baseline_whole(sandbox, before)
    if signum == signal.SIGINT:
        lines = [line for line in log.read_text().replace("\r", "\n").splitlines() if line.startswith("parallax-zoo")]
        assert process.returncode == 130, log.read_text()[-2000:]
        assert lines == [
            "parallax-zoo train: interrupted; nothing is half-written: a run stopped before its end "
            "leaves its folders and pin as they were"
        ]
        assert "Traceback" not in log.read_text()
        assert sorted(path.name for path in (sandbox / "baselines").iterdir()) == ["GridWorld-v0"], "no leftovers"


def test_ctrl_c_during_train_stops_cleanly_in_one_line_with_exit_130(sandbox: Path) -> None:
    """A real SIGINT to the real `parallax-zoo train` console script, mid-training."""
    out = sandbox / "run"
    log = sandbox / "stderr.txt"
    with log.open("w") as stderr:
        command = [str(SCRIPT), "train", "GridWorld-v0", "--config", str(sandbox / "long.yaml"), "--out", str(out)]
        process = sandbox_process(command, sandbox, stderr)
        try:
            wait_for(lambda: training_underway(log), process, "training progress")
            process.send_signal(signal.SIGINT)
            process.wait(timeout=120)
        finally:
            process.kill()
    text = log.read_text()
    assert process.returncode == 130, text[-2000:]
    assert "Traceback" not in text and text.endswith(
        "\nparallax-zoo train: interrupted; nothing is half-written: a run stopped before its end leaves its folders "
        "and pin as they were\n"
    )
    assert not out.exists() and not [path for path in sandbox.iterdir() if path.name.startswith(".")], "no leftovers"


def test_a_swap_killed_midway_is_put_right_by_the_next_run(sandbox: Path) -> None:
    """Killed between renaming the old folder aside and writing the pin: the pinned folder comes back."""
    from parallax_zoo.baselines import staging
    from parallax_zoo.baselines.training import is_pinned_folder

    folder = sandbox / "baselines" / "GridWorld-v0"
    before = pinned_files(sandbox, "GridWorld-v0")
    os.replace(folder, staging.aside_folder(folder))
    shutil.copytree(staging.aside_folder(folder), folder)
    (folder / "eval.json").write_text('{"mean": 0.0}\n')  # the new run's files, not yet pinned
    leftover = staging.staging_folder(folder)
    staging.recover(folder, is_pinned_folder("GridWorld-v0", sandbox / "registry.yaml"))
    assert_baseline_whole(sandbox, before)
    assert not leftover.exists() and not staging.aside_folder(folder).exists()
    os.replace(folder, staging.aside_folder(folder))  # killed between the two renames: the folder is missing
    staging.recover(folder, is_pinned_folder("GridWorld-v0", sandbox / "registry.yaml"))
    assert_baseline_whole(sandbox, before)


def test_train_pin_force_swaps_folder_and_pin_in_together_and_leaves_no_lock(sandbox: Path) -> None:
    """Also: pinning an id with no random player's score measures it and writes it beside the pin. The tiny run
    plays below the random player, so the pin needs --allow-random-level."""
    scores = json.loads((sandbox / "random_scores.json").read_text())
    shipped = scores["envs"].pop("GridWorld-v0")
    (sandbox / "random_scores.json").write_text(json.dumps(scores))
    process = train_process(
        sandbox, "GridWorld-v0", "--config", str(sandbox / "tiny.yaml"), "--pin", "--force", "--allow-random-level"
    )
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, err[-2000:]
    written = json.loads((sandbox / "random_scores.json").read_text())["envs"]
    assert written == {**scores["envs"], "GridWorld-v0": shipped}, "the same record the shipped file has, others kept"
    assert f"GridWorld-v0: the random player's score {shipped['mean']:.3f} written to" in out
    folder = sandbox / "baselines" / "GridWorld-v0"
    assert dict(folder_pin("GridWorld-v0", folder)[0].files) == pinned_files(sandbox, "GridWorld-v0")
    assert checkpoint.load_config(folder / "config.yaml") == TINY
    assert json.loads((folder / "eval.json").read_text())["training_seeds"] == [0], "one seed by default"
    assert not (sandbox / "runs").exists(), "and no other seed's folder"
    assert sorted(path.name for path in (sandbox / "baselines").iterdir()) == ["GridWorld-v0"], "no lock, no staging"
    assert sorted(path.name for path in sandbox.iterdir() if path.name.startswith(".")) == [], "no registry lock"


def test_train_pin_refuses_weights_no_better_than_random_and_writes_nothing(sandbox: Path) -> None:
    """The random player's record raised above anything the tiny run reaches: the pin is refused in one line, exit 2,
    and the folder, the pin and random_scores.json stay as they were; --allow-random-level pins the same run."""
    scores = json.loads((sandbox / "random_scores.json").read_text())
    scores["envs"]["GridWorld-v0"].update(mean=0.95, ci95=[0.94, 0.96])
    (sandbox / "random_scores.json").write_text(json.dumps(scores))
    scores_text = (sandbox / "random_scores.json").read_text()
    before = pinned_files(sandbox, "GridWorld-v0")
    process = train_process(sandbox, "GridWorld-v0", "--config", str(sandbox / "tiny.yaml"), "--pin", "--force")
    out, err = process.communicate(timeout=300)
    assert process.returncode == 2, err[-2000:]
    lines = [line for line in err.splitlines() if line.startswith("parallax-zoo")]
    assert len(lines) == 1 and "Traceback" not in err, err[-2000:]
    assert "GridWorld-v0: not pinned, nothing written: seed 0 scores" in lines[0]
    assert "not above the random player's 95% interval [0.940, 0.960]" in lines[0]
    assert "--allow-random-level" in lines[0]
    assert_baseline_whole(sandbox, before)
    assert (sandbox / "random_scores.json").read_text() == scores_text
    assert sorted(path.name for path in (sandbox / "baselines").iterdir()) == ["GridWorld-v0"], "no staging left"
    assert not (sandbox / "runs").exists()

    allowed = train_process(
        sandbox, "GridWorld-v0", "--config", str(sandbox / "tiny.yaml"), "--pin", "--force", "--allow-random-level"
    )
    out, err = allowed.communicate(timeout=300)
    assert allowed.returncode == 0, err[-2000:]
    folder = sandbox / "baselines" / "GridWorld-v0"
    assert pinned_files(sandbox, "GridWorld-v0") != before
    assert dict(folder_pin("GridWorld-v0", folder)[0].files) == pinned_files(sandbox, "GridWorld-v0")


def test_the_random_level_check_compares_with_the_upper_end_of_the_interval() -> None:
    from parallax_zoo.baselines.training import NoBetterThanRandomError, check_beats_random

    random_record = {"mean": 0.5, "ci95": [0.4, 0.6]}
    for score, refused in [(0.61, False), (0.6, True), (0.55, True), (0.1, True)]:
        if refused:
            with pytest.raises(NoBetterThanRandomError, match=f"scores {score:.3f}, not above"):
                check_beats_random("GridWorld-v0", 0, {"mean": score}, random_record)
        else:
            check_beats_random("GridWorld-v0", 0, {"mean": score}, random_record)


def test_a_pin_whose_evaluation_saw_unfinished_episodes_is_refused() -> None:
    from parallax_zoo.baselines.training import UnfinishedEpisodesError, check_episodes_end

    spec = Registry.from_yaml(PACKAGED_REGISTRY.read_text()).spec("pgx/minatar-space_invaders")
    with pytest.raises(
        UnfinishedEpisodesError, match=r"70% of seed 0's protocol episodes had not ended after 1000 steps"
    ):
        check_episodes_end(spec, 0, {"mean": 22.2, "finished": 0.296875})
    check_episodes_end(spec, 0, {"mean": 22.2, "finished": 1.0})


PIN_SCRIPT = (
    "import sys; from pathlib import Path; from parallax_zoo.baselines.registry_update import pin_baseline; "
    "print('ready', flush=True); sys.stdin.readline(); "
    "pin_baseline(sys.argv[1], Path(sys.argv[2]), sys.argv[3]); print('pinned', sys.argv[1])"
)
"""Pins FOLDER for ENV_ID in REGISTRY (argv 1 to 3) once imported and told to go (a line on stdin)."""


def fake_baseline(folder: Path, score: float) -> Path:
    folder.mkdir(parents=True)
    (folder / "eval.json").write_text(json.dumps({"mean": score}) + "\n")
    (folder / "model.safetensors").write_bytes(os.urandom(64))
    return folder


def test_two_processes_pinning_different_envs_at_once_both_land(tmp_path: Path) -> None:
    registry_file = tmp_path / "registry.yaml"
    shutil.copy(PACKAGED_REGISTRY, registry_file)
    folders = {"GridWorld-v0": fake_baseline(tmp_path / "a", 0.25), "TicTacToe-v0": fake_baseline(tmp_path / "b", 0.5)}
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", PIN_SCRIPT, env_id, str(folder), str(registry_file)],
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for env_id, folder in folders.items()
    ]
    for process in processes:  # both imported and waiting: then both start their pins together
        assert process.stdout is not None and process.stderr is not None
        assert process.stdout.readline() == "ready\n", process.stderr.read()
    for process in processes:
        out, err = process.communicate("go\n", timeout=120)
        assert process.returncode == 0 and out.startswith("pinned"), err[-2000:]
    after = Registry.from_yaml(registry_file.read_text())
    for env_id, folder in folders.items():
        pin, score = folder_pin(env_id, folder)
        spec = after.spec(env_id)
        assert spec.baseline == pin and spec.reference_score == score, f"{env_id}'s pin was lost"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["a", "b", "registry.yaml"], "no lock file left behind"


def test_a_pin_waits_for_the_registry_lock_and_then_rereads_the_file(tmp_path: Path) -> None:
    """While another process holds registry.yaml's lock and changes the file, a pin waits and keeps that change."""
    registry_file = tmp_path / "registry.yaml"
    shutil.copy(PACKAGED_REGISTRY, registry_file)
    other = fake_baseline(tmp_path / "other", 0.75)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path; from parallax_zoo.locking import exclusive_lock, lock_beside; "
            "path = Path(sys.argv[1]); "
            "lock = exclusive_lock(lock_beside(path), 10); lock.__enter__(); print('held', flush=True); "
            "time.sleep(2); from parallax_zoo.baselines import registry_update as pinning; "
            "from parallax_zoo.catalogue import pins; "
            "pinning.write_text_atomic(path, pinning.pinned_text(path.read_text(), 'TicTacToe-v0', "
            "pinning.folder_pin('TicTacToe-v0', Path(sys.argv[2]))[0], 0.75)); lock.__exit__(None, None, None)",
            str(registry_file),
            str(other),
        ],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        mine = fake_baseline(tmp_path / "mine", 0.25)
        spec = pin_baseline("GridWorld-v0", mine, registry_file)
    finally:
        holder.communicate(timeout=60)
    after = Registry.from_yaml(registry_file.read_text())
    assert after.spec("GridWorld-v0") == spec
    assert after.spec("TicTacToe-v0").reference_score == 0.75, "the other process's pin survived"


@pytest.mark.parametrize(
    ("setting", "field", "expected"),
    [
        pytest.param("num_minibatches=0", "num_minibatches=0", "num_minibatches >= 1", id="num_minibatches=0"),
        pytest.param("gamma=5", "gamma=5.0", "0 <= gamma <= 1", id="gamma=5"),
        pytest.param("clip_eps=-1", "clip_eps=-1.0", "0 < clip_eps <= 1", id="clip_eps=-1"),
        pytest.param("learning_rate=nan", "learning_rate=nan", "0 < learning_rate <= 1", id="learning_rate=nan"),
        pytest.param("learning_rate=.inf", "learning_rate=inf", "0 < learning_rate <= 1", id="learning_rate=inf"),
    ],
)
def test_an_out_of_range_set_is_one_line_before_anything_trains(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], setting: str, field: str, expected: str
) -> None:
    out = tmp_path / "run"
    assert main(["train", "GridWorld-v0", "--set", setting, "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and field in captured.err and expected in captured.err, captured.err
    assert "env steps" not in captured.err and not out.exists() and not list(tmp_path.iterdir())


def test_every_numeric_config_field_has_a_range() -> None:
    for config in (PPOConfig, MAPPOConfig):
        numeric = {f.name for f in dataclasses.fields(config) if f.type in ("int", "float", "tuple[int, ...]")}
        assert numeric and numeric == set(config.RANGES), config.__name__


def test_an_unknown_set_field_names_the_close_match_only(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["train", "GridWorld-v0", "--set", "lr=1"]) == 2
    err = capsys.readouterr().err
    assert err == "parallax-zoo train: --set lr=1: PPOConfig has no field 'lr'. Did you mean learning_rate?\n"


def test_out_refuses_a_folder_that_is_not_an_earlier_run_of_the_env(
    sandbox: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = sandbox / "myproject"
    project.mkdir()
    (project / "README.md").write_text("# my project\n")
    (project / "config.yaml").write_text("name: mine\n")
    other_env = sandbox / "baselines" / "GridWorld-v0"
    before = {path: path.read_bytes() for folder in (project, other_env) for path in folder.iterdir()}
    for out in (project, other_env):
        assert main(["train", "GridWorld-Masked-v0", "--out", str(out)]) == 2
        err = capsys.readouterr().err
        refusal = f"the output folder {out} is not empty and holds no earlier GridWorld-Masked-v0 run"
        assert err.count("\n") == 1 and refusal in err
        assert "--force" in err
    assert {path: path.read_bytes() for folder in (project, other_env) for path in folder.iterdir()} == before


@pytest.mark.slow
def test_out_force_replaces_only_the_run_files_of_a_foreign_folder(sandbox: Path) -> None:
    project = sandbox / "myproject"
    project.mkdir()
    (project / "README.md").write_text("# my project\n")
    (project / "notes.txt").write_text("keep me\n")
    args = ("GridWorld-v0", "--config", str(sandbox / "tiny.yaml"), "--out", str(project))
    refused = train_process(sandbox, *args)
    _, err = refused.communicate(timeout=300)
    assert refused.returncode == 2 and "add --force" in err and (project / "README.md").read_text() == "# my project\n"
    process = train_process(sandbox, *args, "--force")
    _, err = process.communicate(timeout=300)
    assert process.returncode == 0, err[-2000:]
    assert sorted(path.name for path in project.iterdir()) == sorted([*RUN_FILES, "notes.txt"])
    assert (project / "notes.txt").read_text() == "keep me\n"
    assert checkpoint.load_config(project / "config.yaml") == TINY


def test_train_saves_every_seed_of_seeds_n_each_in_its_folder(
    sandbox: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """In this process (it is about the folders, not the process): `train` from the sandbox, on its mirror."""
    monkeypatch.chdir(sandbox)
    monkeypatch.setenv(hub.MIRROR_ENV_VAR, str(sandbox / "baselines"))
    assert main(["train", "GridWorld-v0", "--config", str(sandbox / "tiny.yaml"), "--seed", "3", "--seeds", "2"]) == 0
    out = capsys.readouterr().out
    runs = sandbox / "runs" / "GridWorld-v0"
    assert sorted(path.name for path in runs.iterdir()) == ["seed3", "seed4"], "no lock or staging left"
    weights = set()
    for seed in (3, 4):
        folder = runs / f"seed{seed}"
        assert f"seed {seed} written to runs/GridWorld-v0/seed{seed}" in out
        assert sorted(path.name for path in folder.iterdir()) == sorted(RUN_FILES)
        record = json.loads((folder / "eval.json").read_text())
        assert record["training_seeds"] == [3, 4] and record["policy_seed"] == seed
        assert f"these are seed {seed}'s weights" in (folder / "README.md").read_text()
        weights.add((folder / "model.safetensors").read_bytes())
    assert len(weights) == 2, "each folder holds its own seed's weights"


def test_a_ctrl_c_a_library_swallows_still_stops_training_at_the_next_segment() -> None:
    """Python only prints a KeyboardInterrupt raised inside a finalizer; training remembers the Ctrl-C and stops
    at its next segment all the same."""
    from parallax_zoo.baselines.staging import interrupts_noticed

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a command's own process
    with interrupts_noticed() as stop_if_interrupted:
        stop_if_interrupted()  # nothing pressed yet: nothing happens
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1)  # the handler runs here
        except KeyboardInterrupt:
            pass  # swallowed, as a finalizer would
        with pytest.raises(KeyboardInterrupt):
            stop_if_interrupted()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    signal.signal(signal.SIGINT, previous)


def test_a_failed_fine_tune_leaves_its_output_folder_as_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fine-tune writes in a staging folder: new weights that never got their evaluation do not replace the old
    folder's (before, they were saved into it file by file, beside the old card and eval.json)."""
    import jax
    import numpy as np

    from parallax_zoo.baselines import fine_tune
    from parallax_zoo.catalogue.registry import resolve

    env_spec, env = resolve("ConnectFour-v0")
    out = shutil.copytree(hub.mirror_folder("ConnectFour-v0"), tmp_path / "ConnectFour-v0")
    before = {path.name: path.read_bytes() for path in out.iterdir()}

    def trained(env_spec, env, policy, config, stages, seed, progress):
        moved = jax.tree_util.tree_map(
            lambda leaf: leaf + 1 if np.issubdtype(leaf.dtype, np.floating) else leaf, policy
        )
        return moved, config, {"random": [(0, 0.5), (1, 0.6)]}

    def evaluation_fails(*args: Any, **kwargs: Any) -> None:
        raise OSError("No space left on device")

    monkeypatch.setattr(fine_tune, "fine_tune", trained)
    monkeypatch.setattr(fine_tune, "write_evaluation", evaluation_fails)
    with pytest.raises(OSError, match="No space left"):
        fine_tune.fine_tune_baseline(env_spec, env, out, out, progress=False)
    assert {path.name: path.read_bytes() for path in out.iterdir()} == before
    assert [path.name for path in tmp_path.iterdir()] == ["ConnectFour-v0"], "no staging folder left behind"


def test_fine_tune_refuses_a_foreign_output_folder_before_it_trains(
    sandbox: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from parallax_zoo.baselines import fine_tune

    def must_not_train(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("trained before checking its output folder")

    monkeypatch.setattr(fine_tune, "fine_tune", must_not_train)
    project = sandbox / "myproject"
    project.mkdir()
    (project / "README.md").write_text("# my project\n")
    start = str(hub.mirror_folder("ConnectFour-v0"))
    assert main(["maintain", "fine-tune", "ConnectFour-v0", start, str(project)]) == 2
    err = capsys.readouterr().err
    assert (
        err.count("\n") == 1 and f"the output folder {project} is not empty and holds no earlier ConnectFour-v0" in err
    )
    assert (project / "README.md").read_text() == "# my project\n"
