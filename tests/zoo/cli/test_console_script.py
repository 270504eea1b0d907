"""What a new user meets first at the real `parallax-zoo` script: `render` and `demo`, `train` writing runs/ (not the
pinned baselines) and checking its flags first, `--version`, one-line errors naming the extra to install."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from parallax.version import version
from parallax_zoo.policies import hub

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = Path(sys.executable).with_name("parallax-zoo")


def run_cli(
    *args: str, cwd: Path | None = None, extra_path: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The installed `parallax-zoo` console script on this tree (PYTHONPATH set to it), with a bounded wait."""
    path = os.pathsep.join(str(p) for p in (extra_path, ROOT) if p is not None)
    environment = {**os.environ, "PYTHONPATH": path, "JAX_PLATFORMS": "cpu", **(env or {})}
    return subprocess.run(
        [str(SCRIPT), *args], cwd=cwd or ROOT, env=environment, capture_output=True, text=True, timeout=600
    )


def one_line_error(process: subprocess.CompletedProcess[str]) -> str:
    assert process.returncode == 2, (process.returncode, process.stderr[-2000:])
    lines = [line for line in process.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in process.stderr, process.stderr
    return lines[0]


def folder_hashes(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


# --- rendering ---------------------------------------------------------------------------------------------------


def test_render_gymnax_cartpole_through_the_console_script(tmp_path):
    out = tmp_path / "cartpole.gif"
    process = run_cli("render", "gymnax/CartPole-v1", "--policy", "random", "--steps", "8", "--out", str(out))
    assert process.returncode == 0, process.stderr[-2000:]
    assert "wrote" in process.stdout
    with Image.open(out) as gif:
        assert gif.n_frames >= 2
        assert min(gif.size) >= 256  # the default scale
        frame = np.asarray(gif.convert("RGB"))
    drawn = frame[: frame.shape[0] * 3 // 4]
    assert (np.abs(drawn.astype(int) - 255).sum(axis=-1) > 100).mean() > 0.01  # a cart and pole, not a blank frame
    caption = frame[-12:]
    assert (caption.max(axis=-1) < 100).any()  # dark caption text in the strip under the frame


@pytest.mark.slow
def test_demo_of_gymnax_cartpole_evaluates_and_renders(tmp_path):
    process = run_cli("demo", "gymnax/CartPole-v1", "--out", str(tmp_path / "demo"), cwd=tmp_path)
    assert process.returncode == 0, process.stderr[-3000:]
    assert "an episode of the baseline rendered to" in process.stdout
    with Image.open(tmp_path / "demo" / "gymnax-CartPole-v1.gif") as gif:
        assert gif.n_frames >= 2 and min(gif.size) >= 256


@pytest.mark.slow
def test_brax_renders_through_mujoco_or_says_why(tmp_path):
    out = tmp_path / "pendulum.gif"
    process = run_cli("render", "brax/inverted_pendulum", "--policy", "random", "--steps", "4", "--out", str(out))
    if process.returncode == 0:
        with Image.open(out) as gif:
            assert gif.n_frames >= 2 and min(gif.size) >= 240
    else:
        assert "MuJoCo" in one_line_error(process)
    broken = run_cli(
        "render",
        "brax/inverted_pendulum",
        "--steps",
        "2",
        "--out",
        str(tmp_path / "no.gif"),
        env={"MUJOCO_GL": "glfw", "DISPLAY": ""},
    )
    error = one_line_error(broken)  # at once, before the episode is played: nothing else is printed
    assert "MUJOCO_GL=glfw" in error and "needs a display" in error and not (tmp_path / "no.gif").exists()


# --- train -------------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_train_writes_runs_with_the_users_card_and_leaves_baselines_alone(tmp_path):
    mirror = hub.mirror_folder("gymnax/CartPole-v1")
    before = folder_hashes(mirror)
    process = run_cli(
        "train",
        "gymnax/CartPole-v1",
        "--total-timesteps",
        "1024",
        "--num-envs",
        "4",
        "--seeds",
        "1",
        "--set",
        "learning_rate=1e-3",
        "--set",
        "num_steps=64",
        cwd=tmp_path,
    )
    assert process.returncode == 0, process.stderr[-3000:]
    folder = tmp_path / "runs" / "gymnax-CartPole-v1" / "seed0"
    assert sorted(p.name for p in folder.iterdir()) == [
        "README.md",
        "config.yaml",
        "curve.png",
        "eval.json",
        "model.safetensors",
    ]
    assert folder_hashes(mirror) == before
    assert "env steps/s" in process.stderr
    config = (folder / "config.yaml").read_text()
    assert "total_timesteps: 1024" in config and "learning_rate: 0.001" in config and "num_steps: 64" in config
    assert f"parallax-zoo: {version()}" in config and "not installed" not in config
    card = (folder / "README.md").read_text()
    assert "run on gymnax/CartPole-v1" in card and "It is your run, not the official baseline" in card
    assert 'load_folder("runs/gymnax-CartPole-v1/seed0"' in card and "load_baseline" not in card


def test_train_flags_are_checked_before_training(tmp_path):
    typo = one_line_error(run_cli("train", "Race-v0", "--set", "learnin_rate=1", cwd=tmp_path))
    assert "no field 'learnin_rate'" in typo and "Did you mean learning_rate" in typo
    wrong_type = one_line_error(run_cli("train", "Race-v0", "--set", "num_envs=many", cwd=tmp_path))
    assert "num_envs takes a whole number" in wrong_type
    pinned = one_line_error(run_cli("train", "Race-v0", "--pin", cwd=tmp_path))
    assert "pinned in registry.yaml" in pinned and "--force" in pinned
    assert not (tmp_path / "runs").exists()


def test_version_missing_extra_and_cli_hints(tmp_path):
    assert run_cli("--version").stdout.strip() == f"parallax-zoo {version()}"
    blocker = tmp_path / "no_brax"
    (blocker / "brax").mkdir(parents=True)
    (blocker / "brax" / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'brax'\", name='brax')\n"
    )
    missing = one_line_error(run_cli("info", "brax/ant", extra_path=blocker))
    assert "Install it with: " in missing and "pip install -e '.[brax]'" in missing  # run from the clone's root
    unknown = one_line_error(run_cli("info", "Rcae-v0"))
    assert "`parallax-zoo list`" in unknown and "list_envs()" not in unknown
