"""BraxAdapter against the real brax: wrapper stripping, action repeat, termination, truncation, metrics, wrappers.

Brax compiles slowly on CPU, so the tests share one inverted pendulum
(spring backend, the fastest to compile) and keep its shapes fixed.
"""

import inspect

import jax
import jax.numpy as jnp
import numpy as np
import pytest

brax_envs = pytest.importorskip("brax.envs")

from brax.envs.wrappers import training  # noqa: E402

import parallax_zoo  # noqa: E402
from parallax import AutoResetWrapper, Box, Env, PyTreeSpace, TimeLimit, VmapWrapper, check_env  # noqa: E402
from parallax.adapters.brax import BraxAdapter  # noqa: E402
from parallax.adapters.mujoco_warnings import MuJoCoWarning, mujoco_warnings_as_python_warnings  # noqa: E402
from parallax_zoo.catalogue.foreign_envs import IncompatibleVersionsError  # noqa: E402
from parallax_zoo.catalogue.signatures import InvalidKwargError  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:Brax System:UserWarning", "ignore:Accessing `ncon`:DeprecationWarning")

EPISODE_LENGTH, ACTION_REPEAT = 20, 2
PUSH = jnp.ones((1,), jnp.float32)
HOLD = jnp.zeros((1,), jnp.float32)


@pytest.fixture(scope="module")
def raw_pendulum():
    return brax_envs.get_environment("inverted_pendulum", backend="spring")


@pytest.fixture(scope="module")
def pendulum(raw_pendulum):
    return BraxAdapter(training.wrap(raw_pendulum, episode_length=EPISODE_LENGTH, action_repeat=ACTION_REPEAT))


def run(env, state, action, num_steps):
    """Eager steps (each one compiled call) until the episode ends or `num_steps` pass; returns all states."""
    states = [state]
    for _ in range(num_steps):
        states.append(env.step(states[-1], action))
        if bool(states[-1].done):
            break
    return states


def test_every_training_wrapper_is_stripped(raw_pendulum, pendulum):
    assert pendulum.env is raw_pendulum
    assert (pendulum.episode_length, pendulum.action_repeat) == (EPISODE_LENGTH, ACTION_REPEAT)
    evaluated = BraxAdapter(training.EvalWrapper(training.wrap(raw_pendulum, episode_length=30, action_repeat=3)))
    assert evaluated.env is raw_pendulum and (evaluated.episode_length, evaluated.action_repeat) == (30, 3)
    created = BraxAdapter(brax_envs.create("inverted_pendulum", episode_length=12, batch_size=4, backend="spring"))
    assert type(created.env) is type(raw_pendulum) and created.episode_length == 12
    assert created.observation_space == Box(-jnp.inf, jnp.inf, (4,), jnp.float32)


def test_episode_length_comes_from_the_argument_the_wrapper_or_brax_default(raw_pendulum):
    wrapped = training.wrap(raw_pendulum, episode_length=EPISODE_LENGTH, action_repeat=ACTION_REPEAT)
    assert BraxAdapter(wrapped, episode_length=50).episode_length == 50
    assert BraxAdapter(raw_pendulum).episode_length == 1000
    assert BraxAdapter(raw_pendulum, episode_length=7).action_repeat == 1


def test_domain_randomisation_is_refused_not_dropped(raw_pendulum):
    randomised = training.wrap(raw_pendulum, randomization_fn=lambda sys: (sys, sys))
    with pytest.raises(ValueError, match="randomised system"):
        BraxAdapter(randomised)


def test_passes_check_env(pendulum):
    check_env(pendulum, num_steps=8)


def test_action_repeat_sums_rewards_and_truncation_counts_env_steps(pendulum):
    states = run(pendulum, pendulum.reset(key=jax.random.key(0)), HOLD, EPISODE_LENGTH)
    # inverted_pendulum pays 1 per env step; each adapter step is ACTION_REPEAT env steps.
    assert [float(s.reward) for s in states[1:]] == [float(ACTION_REPEAT)] * (EPISODE_LENGTH // ACTION_REPEAT)
    assert [bool(s.truncation) for s in states[1:]] == [False] * 9 + [True]
    assert not any(bool(s.termination) for s in states)
    assert int(states[-1].step_count) == EPISODE_LENGTH // ACTION_REPEAT


def test_termination_keeps_the_fallen_pole(pendulum):
    states = run(pendulum, pendulum.reset(key=jax.random.key(0)), PUSH, EPISODE_LENGTH)
    last, before = states[-1], states[-2]
    assert bool(last.termination) and not bool(last.truncation)
    # brax ends the episode once the pole angle (observation 1) leaves [-0.2, 0.2].
    assert abs(float(last.observation[1])) > 0.2 >= abs(float(before.observation[1]))
    np.testing.assert_array_equal(last.observation, last.env_state.obs)
    # The repeat stops on the env step that ended the episode: one step's reward, not two.
    assert float(last.reward) == 1.0


def test_key_advances(pendulum):
    state = pendulum.reset(key=jax.random.key(0))
    next_state = pendulum.step(state, HOLD)
    assert not np.array_equal(jax.random.key_data(state.key), jax.random.key_data(next_state.key))


def test_metrics_go_into_info():
    reacher = BraxAdapter(brax_envs.get_environment("reacher", backend="spring"), episode_length=10)
    state = reacher.reset(key=jax.random.key(0))
    assert set(state.info) == {"reward_dist", "reward_ctrl"}
    action = jnp.array([0.5, -0.5], jnp.float32)
    next_state = reacher.step(state, action)
    # brax's reacher: reward_ctrl = -|action|^2 and reward = reward_dist + reward_ctrl.
    np.testing.assert_allclose(next_state.info["reward_ctrl"], -0.5, rtol=1e-6)
    np.testing.assert_allclose(
        next_state.reward, next_state.info["reward_dist"] + next_state.info["reward_ctrl"], rtol=1e-6
    )


def test_dict_observations_become_a_pytree_space():
    fast = brax_envs.get_environment("fast", obs_mode="dict_state", asymmetric_obs=True)
    adapter = BraxAdapter(fast, episode_length=5)
    assert adapter.observation_space == PyTreeSpace(
        {"state": Box(-jnp.inf, jnp.inf, (2,)), "privileged_state": Box(-jnp.inf, jnp.inf, (4,))}
    )
    check_env(adapter, num_steps=8)


def test_bad_inputs_get_clear_errors(pendulum):
    with pytest.raises(TypeError, match="brax.envs.Env"):
        BraxAdapter(object())
    with pytest.raises(TypeError, match="PRNG key"):
        pendulum.reset(key=jnp.zeros(3))
    state = pendulum.reset(key=jax.random.key(0))
    with pytest.raises(ValueError, match=r"expected an action of shape \(1,\)"):
        pendulum.step(state, jnp.zeros(2))


def test_satisfies_the_env_protocol(pendulum):
    assert isinstance(pendulum, Env)


def test_under_vmap_time_limit_and_auto_reset(pendulum):
    limit = 6
    env = VmapWrapper(AutoResetWrapper(TimeLimit(pendulum, max_steps=limit)), num_envs=2)
    actions = jnp.stack([PUSH, HOLD])

    def body(state, _):
        state = env.step(state, actions)
        return state, state

    _, states = jax.jit(lambda s: jax.lax.scan(body, s, None, length=2 * limit))(env.reset(key=jax.random.key(0)))
    termination, truncation = np.asarray(states.termination), np.asarray(states.truncation)
    # The pushed pole falls before the limit; the held one is cut at the limit; both restart.
    fallen = int(np.argmax(termination[:, 0]))
    assert termination[fallen, 0] and fallen < limit - 1 and not truncation[: fallen + 1, 0].any()
    assert truncation[:, 1].tolist()[:limit] == [False] * (limit - 1) + [True]
    assert not termination[:, 1].any()
    counts = np.asarray(states.step_count)
    assert counts[fallen, 0] == 0 and counts[fallen + 1, 0] == 1
    assert counts[limit - 1, 1] == 0 and counts[limit, 1] == 1


NOT_REGISTERED = {"fast": "brax's own test env, a point with no physics"}
"""`brax.envs` names the registry leaves out, and why."""


def test_the_registry_holds_every_brax_env():
    registered = {parallax_zoo.spec(env_id).foreign_id: env_id for env_id in parallax_zoo.list_envs(namespace="brax")}
    assert set(registered) == set(brax_envs._envs) - set(NOT_REGISTERED)  # brax lists its envs only in `_envs`
    assert all(env_id == f"brax/{name}" for name, env_id in registered.items())


def test_backend_is_a_keyword_checked_against_the_pipelines_the_env_runs_on():
    with pytest.raises(InvalidKwargError) as caught:
        parallax_zoo.make("brax/ant", backend="springy")
    assert str(caught.value) == (
        "brax/ant: backend='springy' is not a physics backend it runs on. "
        "It accepts: 'generalized', 'positional', 'spring', 'mjx'."
    )
    with pytest.raises(InvalidKwargError, match=r"backend='spring' .* It accepts: 'generalized'\.$"):
        parallax_zoo.make("brax/swimmer", backend="spring")
    assert parallax_zoo.make("brax/ant").env.backend == "generalized"
    assert parallax_zoo.make("brax/ant", backend="positional").env.backend == "positional"


FLUID_CLIP_WORKS = "a_min" in inspect.signature(jnp.clip).parameters
"""Whether this jax computes brax 0.14's fluid forces (`jax.numpy.clip(a_min=...)`), which Swimmer needs."""


def test_swimmer_runs_where_jax_computes_its_fluid_forces_and_says_why_not_elsewhere():
    assert bool(brax_envs.get_environment("swimmer").sys.enable_fluid)
    if FLUID_CLIP_WORKS:
        parallax_zoo.make("brax/swimmer")
        return
    with pytest.raises(IncompatibleVersionsError) as caught:
        parallax_zoo.make("brax/swimmer")
    assert str(caught.value).startswith("brax/swimmer cannot run with brax ") and "clip(a_min=...)" in str(caught.value)
    others = [parallax_zoo.spec(i).foreign_id for i in parallax_zoo.list_envs(namespace="brax") if i != "brax/swimmer"]
    # Built here with Brax itself, so MuJoCo's warning on halfcheetah's XML is caught as the zoo catches it, not
    # appended to a MUJOCO_LOG.TXT in the checkout (where the notebook test would find it).
    with mujoco_warnings_as_python_warnings(), pytest.warns(MuJoCoWarning, match="settotalmass"):
        assert not any(bool(brax_envs.get_environment(name).sys.enable_fluid) for name in others)


def _runnable(env_id):
    if env_id == "brax/swimmer" and not FLUID_CLIP_WORKS:
        return pytest.param(env_id, marks=pytest.mark.skip(reason="this jax cannot compute brax's fluid forces"))
    return env_id


@pytest.mark.slow  # each compiles for one to several minutes on a CPU; the pendulum above covers the adapter by default
@pytest.mark.parametrize("env_id", [_runnable(env_id) for env_id in parallax_zoo.list_envs(namespace="brax")])
def test_every_registered_env_passes_check_env(env_id):
    env = parallax_zoo.make(env_id)
    assert env.episode_length == parallax_zoo.spec(env_id).max_steps
    check_env(env, num_steps=8)


@pytest.mark.parametrize(
    "env_id",
    ["brax/halfcheetah", pytest.param("jaxmarl/halfcheetah_6x1", marks=pytest.mark.slow)],  # 15 s: MABrax
)
def test_mujocos_model_warnings_reach_python_not_the_terminal_or_a_log_file_in_the_working_folder(env_id, tmp_path):
    """halfcheetah's XML uses `settotalmass`, which MuJoCo warns about while compiling it, whether Brax builds it or
    JaxMARL's MABrax does: that warning is a Python `MuJoCoWarning` of the build, and neither a line printed from C
    nor a MUJOCO_LOG.TXT beside the user."""
    import subprocess
    import sys

    script = (
        "import warnings, parallax_zoo\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        f"    parallax_zoo.make({env_id!r})\n"
        "print(any(w.category.__name__ == 'MuJoCoWarning' and 'settotalmass' in str(w.message) for w in caught))\n"
    )
    process = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert process.returncode == 0, process.stderr[-2000:]
    assert not (tmp_path / "MUJOCO_LOG.TXT").exists()
    assert "WARNING: compiler attribute" not in process.stdout + process.stderr
    assert process.stdout.strip() == "True", process.stdout


def _run_headless(script: str, tmp_path) -> str:
    """`script` in a fresh Python without a display or MUJOCO_GL (as on a server), its stdout."""
    import os
    import subprocess
    import sys

    environment = {name: value for name, value in os.environ.items() if name not in ("DISPLAY", "MUJOCO_GL")}
    process = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=600
    )
    assert process.returncode == 0, process.stderr[-2000:]  # in particular, not aborted by GLFW
    return process.stdout


def test_mujoco_imported_before_the_renderer_is_set_up_is_named_not_a_crash_later(tmp_path):
    """MuJoCo picks its OpenGL backend once, at import: imported with MUJOCO_GL unset and no display, it has GLFW,
    which cannot draw here; the renderer check says so, and how to start Python, instead of GLFW failing."""
    out = _run_headless(
        "import mujoco\nfrom parallax.adapters.frames import mujoco_renderer_problem\nprint(mujoco_renderer_problem())",
        tmp_path,
    )
    assert "mujoco was first imported with MUJOCO_GL unset" in out and "MUJOCO_GL=egl" in out, out


@pytest.mark.slow  # compiles a Brax env and imports JaxMARL
def test_a_jaxmarl_env_made_first_leaves_brax_drawing(tmp_path):
    """JaxMARL imports Brax and so MuJoCo: making one of its envs first must not leave MuJoCo on GLFW."""
    out = _run_headless(
        "import jax, parallax_zoo\n"
        "from parallax.adapters.frames import RenderUnavailableError\n"
        "from parallax_zoo.judging.recording import random_act, record\n"
        "parallax_zoo.make('jaxmarl/MPE_simple_spread_v3')\n"
        "env = parallax_zoo.make('brax/inverted_pendulum')\n"
        "try:\n"
        "    print(record(env, random_act(env), jax.random.key(0), 2).frames.shape)\n"
        "except RenderUnavailableError as error:\n"
        "    print(error)\n",
        tmp_path,
    )
    assert "GLFW" not in out, out


def test_glfw_without_a_display_is_named_before_anything_is_drawn(monkeypatch):
    """MUJOCO_GL=glfw on a machine with no display cannot draw: `cannot_render` says so up front, so `render` and
    the recordings fail in one line before an episode compiles, not after (docs/suites.md)."""
    from parallax.adapters.frames import mujoco_renderer_problem

    monkeypatch.setenv("MUJOCO_GL", "glfw")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    problem = mujoco_renderer_problem()
    assert problem is not None and "MUJOCO_GL=glfw" in problem and "MUJOCO_GL=egl" in problem
    env = parallax_zoo.make("brax/inverted_pendulum")
    assert env.cannot_render == f"BraxAdapter renders with {problem}"
    monkeypatch.setenv("DISPLAY", ":0")
    assert mujoco_renderer_problem() is None and env.cannot_render is None
