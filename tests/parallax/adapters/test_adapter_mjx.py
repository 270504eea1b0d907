"""MJXAdapter against the real MuJoCo Playground: config episode length, metrics, wrapper stripping, wrappers.

Playground compiles slowly on CPU, so the tests share one PointMass (impl
"jax"), loaded with a short episode length, and keep its shapes fixed.
PointMass rather than CartpoleBalance: in a program shaped like
`check_env`'s (two identical steps and a reset in one scan), XLA on CPU
computes CartpoleBalance's `geom_xmat` differently for the two identical
steps (about 1e-8 apart) even without the adapter, which fails the
bitwise determinism rule for reasons outside the adapter.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

playground = pytest.importorskip("mujoco_playground")

from etils import epath  # noqa: E402
from mujoco_playground import registry, wrapper  # noqa: E402
from mujoco_playground._src import mjx_env  # noqa: E402

import parallax_zoo  # noqa: E402
from parallax import AutoResetWrapper, Box, Env, PyTreeSpace, TimeLimit, VmapWrapper, check_env  # noqa: E402
from parallax.adapters._physics import observation_space_for  # noqa: E402
from parallax.adapters.mjx import MJXAdapter  # noqa: E402
from parallax_zoo.catalogue.menagerie import MENAGERIE_URL, MissingAssetsError, require_menagerie_assets  # noqa: E402
from parallax_zoo.cli.main import main  # noqa: E402

EPISODE_LENGTH = 6
ACTION = jnp.array([0.3, -0.2], jnp.float32)


@pytest.fixture(scope="module")
def raw_point_mass():
    return registry.load("PointMass", config_overrides={"impl": "jax", "episode_length": EPISODE_LENGTH})


@pytest.fixture(scope="module")
def point_mass(raw_point_mass):
    return MJXAdapter(raw_point_mass)


def test_episode_length_and_action_repeat_come_from_the_config(point_mass):
    assert (point_mass.episode_length, point_mass.action_repeat) == (EPISODE_LENGTH, 1)
    assert point_mass.action_space == Box(-1.0, 1.0, (2,), jnp.float32)
    assert point_mass.observation_space == Box(-jnp.inf, jnp.inf, (4,), jnp.float32)


def test_playground_training_wrappers_are_stripped(raw_point_mass):
    wrapped = wrapper.wrap_for_brax_training(raw_point_mass, episode_length=40, action_repeat=2)
    adapter = MJXAdapter(wrapped)
    assert adapter.env is raw_point_mass
    assert (adapter.episode_length, adapter.action_repeat) == (40, 2)
    assert MJXAdapter(wrapped, episode_length=9, action_repeat=1).episode_length == 9


@pytest.mark.slow  # about 27 s of compiles on a CPU; the other tests here cover the adapter by default
def test_passes_check_env(point_mass):
    check_env(point_mass, num_steps=8)


def test_truncation_at_the_config_episode_length_and_metrics_in_info(point_mass):
    state = point_mass.reset(key=jax.random.key(0))
    assert set(state.info) == {"reward/near_target", "reward/small_control"}
    states = [state]
    for _ in range(EPISODE_LENGTH):
        states.append(point_mass.step(states[-1], ACTION))
    assert [bool(s.truncation) for s in states[1:]] == [False] * (EPISODE_LENGTH - 1) + [True]
    assert not any(bool(s.termination) for s in states)
    last = states[-1]
    # Playground's PointMass: reward = near_target * small_control, both reported as metrics.
    np.testing.assert_allclose(
        last.reward, last.info["reward/near_target"] * last.info["reward/small_control"], rtol=1e-6
    )
    # The truncated state is the stepped one: the mass moved under the action, it was not reset.
    np.testing.assert_array_equal(last.observation, last.env_state.obs)
    assert not np.allclose(last.observation, states[0].observation)
    assert not np.array_equal(jax.random.key_data(states[0].key), jax.random.key_data(states[1].key))


def test_dict_observations_become_a_pytree_space():
    observation = {
        "state": jax.ShapeDtypeStruct((3,), jnp.float32),
        "privileged_state": jax.ShapeDtypeStruct((5,), jnp.float32),
    }
    assert observation_space_for(observation) == PyTreeSpace(
        {"state": Box(-jnp.inf, jnp.inf, (3,)), "privileged_state": Box(-jnp.inf, jnp.inf, (5,))}
    )


def test_bad_inputs_get_clear_errors(point_mass):
    with pytest.raises(TypeError, match="MjxEnv"):
        MJXAdapter(object())
    state = point_mass.reset(key=jax.random.key(0))
    with pytest.raises(ValueError, match=r"expected an action of shape \(2,\)"):
        point_mass.step(state, jnp.zeros(1))


def test_satisfies_the_env_protocol(point_mass):
    assert isinstance(point_mass, Env)


def test_under_vmap_time_limit_and_auto_reset(point_mass):
    limit = 4
    env = VmapWrapper(AutoResetWrapper(TimeLimit(point_mass, max_steps=limit)), num_envs=2)

    def body(state, _):
        state = env.step(state, jnp.stack([ACTION, -ACTION]))
        return state, state

    _, states = jax.jit(lambda s: jax.lax.scan(body, s, None, length=EPISODE_LENGTH + 2))(
        env.reset(key=jax.random.key(0))
    )
    truncation, counts = np.asarray(states.truncation), np.asarray(states.step_count)
    # TimeLimit cuts at 4, then the restarted episode runs 4 more.
    np.testing.assert_array_equal(truncation.any(axis=1), [False, False, False, True, False, False, False, True])
    np.testing.assert_array_equal(counts[:, 0], [1, 2, 3, 0, 1, 2, 3, 0])
    assert states.observation.shape == (EPISODE_LENGTH + 2, 2, 4)


MENAGERIE_IDS = [i for i in parallax_zoo.list_envs(namespace="mjx") if "menagerie" in parallax_zoo.spec(i).tags]
DM_CONTROL_IDS = [env_id for env_id in parallax_zoo.list_envs(namespace="mjx") if env_id not in MENAGERIE_IDS]


def test_the_registry_holds_every_playground_env_menageries_tagged():
    registered = {parallax_zoo.spec(env_id).foreign_id: env_id for env_id in parallax_zoo.list_envs(namespace="mjx")}
    assert set(registered) == set(registry.ALL_ENVS)
    assert {parallax_zoo.spec(i).foreign_id for i in DM_CONTROL_IDS} == set(registry.dm_control_suite.ALL_ENVS)
    menagerie = set(registry.locomotion.ALL_ENVS) | set(registry.manipulation.ALL_ENVS)
    assert {parallax_zoo.spec(i).foreign_id for i in MENAGERIE_IDS} == menagerie
    assert (len(DM_CONTROL_IDS), len(MENAGERIE_IDS)) == (25, 29)


@pytest.fixture
def no_menagerie(monkeypatch, tmp_path):
    """Playground's Menagerie path pointed at a folder that does not exist, as on a machine that never cloned it."""
    missing = tmp_path / "mujoco_menagerie"
    monkeypatch.setattr(mjx_env, "MENAGERIE_PATH", epath.Path(missing))
    return missing


def test_a_menagerie_env_without_its_assets_fails_at_once_in_one_line_without_cloning(no_menagerie):
    for env_id in MENAGERIE_IDS:
        with pytest.raises(MissingAssetsError) as caught:
            parallax_zoo.make(env_id)
        message = str(caught.value)
        assert len(message.splitlines()) == 1
        assert message.startswith(f"{env_id} needs MuJoCo Menagerie's robot assets (")
        assert str(no_menagerie) in message and f"git clone {MENAGERIE_URL} {no_menagerie}" in message
        assert caught.value.folders and all(folder in message for folder in caught.value.folders)
    assert not no_menagerie.exists() and not no_menagerie.parent.joinpath("external_deps").exists()
    go1 = [env_id for env_id in MENAGERIE_IDS if parallax_zoo.spec(env_id).foreign_id == "Go1Getup"]
    with pytest.raises(MissingAssetsError, match=r"\(unitree_go1\)"):
        parallax_zoo.make(*go1)


def test_missing_menagerie_assets_are_a_one_line_user_error_on_the_command_line(no_menagerie, capsys):
    assert main(["info", "mjx/PandaRobotiqPushCube"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "(franka_emika_panda, robotiq_2f85_v4)" in err and "Traceback" not in err


def test_a_menagerie_checkout_missing_one_robot_names_only_that_one(no_menagerie):
    (no_menagerie / "franka_emika_panda").mkdir(parents=True)
    with pytest.raises(MissingAssetsError) as caught:
        require_menagerie_assets("mjx/PandaRobotiqPushCube", playground, "PandaRobotiqPushCube")
    assert caught.value.folders == ["robotiq_2f85_v4"]
    assert "copy them from a MuJoCo Menagerie checkout" in str(caught.value)
    (no_menagerie / "robotiq_2f85_v4").mkdir()
    require_menagerie_assets("mjx/PandaRobotiqPushCube", playground, "PandaRobotiqPushCube")


def _make_or_skip(env_id):
    try:
        return parallax_zoo.make(env_id)
    except MissingAssetsError as error:
        pytest.skip(str(error))


@pytest.mark.slow  # each compiles for minutes on a CPU; the PointMass tests above cover the adapter by default
@pytest.mark.parametrize("env_id", DM_CONTROL_IDS + MENAGERIE_IDS)
def test_every_registered_env_passes_check_env(env_id):
    env = _make_or_skip(env_id)
    assert env.episode_length == parallax_zoo.spec(env_id).max_steps
    check_env(env, num_steps=8)


@pytest.mark.slow  # about 15 s of tracing CheetahRun on a CPU
def test_a_reset_state_has_the_leaf_types_of_a_stepped_one_so_step_compiles_once():
    env = parallax_zoo.make("mjx/CheetahRun")
    reset = jax.eval_shape(env._reset_unchecked, jax.random.key(0))
    stepped = jax.eval_shape(env._step_unchecked, reset, jax.ShapeDtypeStruct(env.action_space.shape, jnp.float32))
    signature = lambda tree: [(x.shape, x.dtype, x.weak_type) for x in jax.tree_util.tree_leaves(tree)]  # noqa: E731
    assert signature(reset) == signature(stepped)
