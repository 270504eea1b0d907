"""What a new user meets first: rendering every id, `train` writing runs/ (not the pinned baselines), its flags,
the user's model card, `make(max_steps=)`, readable reprs, `--version`, one-line errors, check_env's messages,
the leaderboard from results files, captioned GIFs. CLI behaviour goes through the real `parallax-zoo` script."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from PIL import Image

import parallax_zoo
from parallax.checker import ProtocolError, check_env
from parallax_zoo.catalogue.signatures import InvalidKwargError
from parallax_zoo.cli.main import main
from parallax_zoo.policies import hub
from parallax_zoo.judging.recording import random_act, record, save_gif
from parallax.version import version

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = Path(sys.executable).with_name("parallax-zoo")


def run_cli(*args: str, cwd: Path | None = None, extra_path: Path | None = None,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The installed `parallax-zoo` console script on this tree (PYTHONPATH set to it), with a bounded wait."""
    path = os.pathsep.join(str(p) for p in (extra_path, ROOT) if p is not None)
    environment = {**os.environ, "PYTHONPATH": path, "JAX_PLATFORMS": "cpu", **(env or {})}
    return subprocess.run([str(SCRIPT), *args], cwd=cwd or ROOT, env=environment, capture_output=True, text=True,
                          timeout=600)


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


def test_classic_control_frames_follow_the_state():
    for env_id in ("gymnax/CartPole-v1", "gymnax/Acrobot-v1", "gymnax/MountainCar-v0", "gymnax/Pendulum-v1"):
        env = parallax_zoo.make(env_id)
        state = env.reset(key=jax.random.key(1))
        moved = env.step(state, env.action_space.sample(key=jax.random.key(2)))
        for _ in range(5):
            moved = env.step(moved, env.action_space.sample(key=jax.random.key(2)))
        render = jax.jit(env.render)
        first, later = np.asarray(render(state)), np.asarray(render(moved))
        assert first.dtype == np.uint8 and first.ndim == 3 and first.shape[-1] == 3
        assert (first != 255).any() and not np.array_equal(first, later), env_id  # drawn, and moving with the state


def test_an_env_gymnax_draws_nothing_of_renders_its_observation(tmp_path, capsys):
    out = tmp_path / "catch.gif"
    assert main(["render", "gymnax/Catch-bsuite", "--steps", "3", "--out", str(out)]) == 0
    assert "wrote" in capsys.readouterr().out
    with Image.open(out) as gif:
        assert gif.n_frames == 4
        frame = np.asarray(gif.convert("RGB"))
    assert len(np.unique(frame.reshape(-1, 3), axis=0)) > 2  # the observation's cells, not a blank frame


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
    broken = run_cli("render", "brax/inverted_pendulum", "--steps", "2", "--out", str(tmp_path / "no.gif"),
                     env={"MUJOCO_GL": "glfw", "DISPLAY": ""})
    assert "MuJoCo's renderer could not start" in one_line_error(broken)


def test_gif_scale_and_captions(tmp_path):
    env = parallax_zoo.make("TicTacToe-v0")
    recording = record(env, random_act(env), jax.random.key(3), 12)
    assert recording.length is not None and recording.captions()[-1].startswith(f"step {recording.length}, over: returns")
    path = save_gif(recording.frames, tmp_path / "t.gif", scale=3, captions=recording.captions())
    with Image.open(path) as gif:
        assert gif.size[0] == 3 * recording.frames.shape[2] and gif.size[1] > 3 * recording.frames.shape[1]
    with pytest.raises(ValueError, match="2 captions for 13 frames"):
        save_gif(recording.frames, tmp_path / "u.gif", captions=["a", "b"])


# --- train -------------------------------------------------------------------------------------------------------


def test_a_users_card_and_config_name_the_run_and_the_real_version(tmp_path):
    from parallax.version import package_versions
    from parallax_zoo.baselines.model_card import model_card

    card = model_card("Race-v0", "mappo", 0.5, 0.1, 128, seed=0, folder="runs/Race-v0/seed0")
    assert "run on Race-v0" in card and "It is your run, not the official baseline" in card
    assert 'load_folder("runs/Race-v0/seed0"' in card and "load_baseline" not in card
    assert "--policy runs/Race-v0/seed0" in card
    official = model_card("Race-v0", "mappo", 0.5, 0.1, 128, seed=0)
    assert 'load_baseline("Race-v0")' in official and "your run" not in official
    assert package_versions()["parallax-zoo"] == version() != "unknown"


@pytest.mark.slow
def test_train_writes_runs_with_the_users_card_and_leaves_baselines_alone(tmp_path):
    mirror = hub.mirror_folder("gymnax/CartPole-v1")
    before = folder_hashes(mirror)
    process = run_cli("train", "gymnax/CartPole-v1", "--total-timesteps", "1024", "--num-envs", "4", "--seeds", "1",
                      "--set", "learning_rate=1e-3", "--set", "num_steps=64", cwd=tmp_path)
    assert process.returncode == 0, process.stderr[-3000:]
    folder = tmp_path / "runs" / "gymnax-CartPole-v1" / "seed0"
    assert sorted(p.name for p in folder.iterdir()) == ["README.md", "config.yaml", "curve.png", "eval.json", "model.safetensors"]
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


def test_a_one_seed_curve_has_no_band():
    from parallax_zoo.baselines.training import curve_figure

    one = curve_figure(np.arange(5.0)[None], 10, "return", "Race-v0")
    assert not one.axes[0].collections and [t.get_text() for t in one.axes[0].get_legend().get_texts()] == ["1 seed"]
    three = curve_figure(np.arange(15.0).reshape(3, 5), 10, "return", "Race-v0")
    assert three.axes[0].collections and "mean of 3 seeds" in [t.get_text() for t in three.axes[0].get_legend().get_texts()]


# --- the API a user meets ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("env_id", ["Race-v0", "gymnax/CartPole-v1"])
def test_make_takes_max_steps_and_carries_its_spec(env_id):
    env = parallax_zoo.make(env_id, max_steps=3)
    assert env.spec.id == env_id and env.spec.max_steps == 3
    state = env.reset(key=jax.random.key(0))
    for _ in range(3):
        assert not bool(jnp.all(state.done))
        state = env.step(state, random_act(env)(state, jax.random.key(1)))
    assert bool(jnp.all(state.truncation | state.termination))
    assert parallax_zoo.make(env_id).spec == parallax_zoo.spec(env_id)
    with pytest.raises(InvalidKwargError, match="max_steps must be an int from 1 to 2,147,483,647"):
        parallax_zoo.make(env_id, max_steps=0)


@pytest.mark.parametrize("namespace", [None, "gymnax", "brax", "xminigrid", "jumanji", "jaxmarl", "craftax"])
def test_a_time_limit_past_int32_is_refused_by_make_for_every_suite(namespace):
    """Steps are counted in int32: 2**31 would overflow at the first step (or in the suite's own make)."""
    env_id = parallax_zoo.list_envs(namespace=namespace)[0] if namespace else "Race-v0"
    message = rf"{re.escape(env_id)}: max_steps must be an int from 1 to 2,147,483,647 .*got 2147483648"
    with pytest.raises(InvalidKwargError, match=message):
        parallax_zoo.make(env_id, max_steps=2**31)


def test_reprs_are_short_and_say_what_matters():
    env_spec = parallax_zoo.spec("TicTacToe-v0")
    line = repr(env_spec)
    assert "\n" not in line and len(line) < 200 and "kind=native" in line and "agents=2" in line
    assert "sha256" not in line and "sha256" in env_spec.describe()
    assert repr(parallax_zoo.make("TicTacToe-v0").unwrapped) == "TicTacToe()"
    assert repr(parallax_zoo.make("Othello-v0").unwrapped) == "Othello()"
    policy = parallax_zoo.load_baseline("TicTacToe-v0")
    shown = repr(policy)
    assert f"{policy.num_parameters:,} parameters" in shown and "\n" not in shown and "Array" not in shown


def test_dir_shows_the_public_api():
    names = dir(parallax_zoo)
    for name in ("load_baseline", "evaluate", "make", "spec", "list_envs", "leaderboard", "__version__"):
        assert name in names
    for name in ("importlib", "Any", "TYPE_CHECKING", "sys"):
        assert name not in names


def test_version_missing_extra_and_cli_hints(tmp_path):
    assert run_cli("--version").stdout.strip() == f"parallax-zoo {version()}"
    blocker = tmp_path / "no_brax"
    (blocker / "brax").mkdir(parents=True)
    (blocker / "brax" / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'brax'\", name='brax')\n")
    missing = one_line_error(run_cli("info", "brax/ant", extra_path=blocker))
    assert "Install it with: " in missing and "pip install -e '.[brax]'" in missing  # run from the clone's root
    unknown = one_line_error(run_cli("info", "Rcae-v0"))
    assert "`parallax-zoo list`" in unknown and "list_envs()" not in unknown


# --- check_env ---------------------------------------------------------------------------------------------------


class _StuckClock:
    """Race-v0 whose step_count never moves: check_env must say what it expected and what it found."""

    def __init__(self) -> None:
        self.env = parallax_zoo.make("Race-v0")

    def __getattr__(self, name: str):
        return getattr(self.env, name)

    def step(self, state, action):
        return dataclasses.replace(self.env.step(state, action), step_count=state.step_count)


def test_check_env_says_what_was_expected_and_found():
    with pytest.raises(ProtocolError) as caught:
        check_env(_StuckClock(), num_steps=4)
    assert "expected step_count 1 (the previous step's + 1), got 0" in str(caught.value)
    assert "violated" not in str(caught.value)


# --- leaderboard -------------------------------------------------------------------------------------------------


def test_leaderboard_from_results_alone_has_elo_shared_ranks_and_explains_itself(tmp_path):
    from parallax_zoo.judging.leaderboard import leaderboard, load_results

    (tmp_path / "results").mkdir()
    result = parallax_zoo.evaluate("TicTacToe-v0", "random", name="first")
    for name in ("first", "second"):  # the same games under two names: equal scores
        dataclasses.replace(result, policy=name).save(tmp_path / "results" / f"{name}.json")
    assert repr(result).startswith("EvalResult(TicTacToe-v0, first: mean") and "256 episodes" in repr(result)
    assert "vs random: win" in repr(result) and "\n" not in repr(result) and len(repr(result)) < 300
    assert json.loads(result.to_json()) == result.to_dict()
    board = leaderboard(load_results(tmp_path / "results"))
    assert [row.elo is not None for row in board.rows] == [True, True]
    markdown = [line for line in board.to_markdown().splitlines() if line.startswith("| TicTacToe-v0 | ")]
    assert [line.split(" | ")[1] for line in markdown[:2]] == ["1", "1"]
    page = board.to_html()
    assert "Evaluation protocol version 2" in page and board.date in page
    assert "0 is the uniformly random player" in page and "random player rates 1000" in page
