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

from mujoco_playground import registry, wrapper  # noqa: E402

from parallax import AutoResetWrapper, Box, Env, PyTreeSpace, TimeLimit, VmapWrapper, check_env  # noqa: E402
from parallax.adapters._physics import observation_space_for  # noqa: E402
from parallax.adapters.mjx import MJXAdapter  # noqa: E402

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
    np.testing.assert_allclose(last.reward, last.info["reward/near_target"] * last.info["reward/small_control"], rtol=1e-6)
    # The truncated state is the stepped one: the mass moved under the action, it was not reset.
    np.testing.assert_array_equal(last.observation, last.env_state.obs)
    assert not np.allclose(last.observation, states[0].observation)
    assert not np.array_equal(jax.random.key_data(states[0].key), jax.random.key_data(states[1].key))


def test_dict_observations_become_a_pytree_space():
    observation = {"state": jax.ShapeDtypeStruct((3,), jnp.float32), "privileged_state": jax.ShapeDtypeStruct((5,), jnp.float32)}
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

    _, states = jax.jit(lambda s: jax.lax.scan(body, s, None, length=EPISODE_LENGTH + 2))(env.reset(key=jax.random.key(0)))
    truncation, counts = np.asarray(states.truncation), np.asarray(states.step_count)
    # TimeLimit cuts at 4, then the restarted episode runs 4 more.
    np.testing.assert_array_equal(truncation.any(axis=1), [False, False, False, True, False, False, False, True])
    np.testing.assert_array_equal(counts[:, 0], [1, 2, 3, 0, 1, 2, 3, 0])
    assert states.observation.shape == (EPISODE_LENGTH + 2, 2, 4)
