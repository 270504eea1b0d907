"""GymnaxAdapter against the real gymnax: terminal observations, separate truncation, spaces, registry, wrappers."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers.slow_params import slow_except
from hypothesis import given, settings
from hypothesis import strategies as st

gymnax = pytest.importorskip("gymnax")

import gymnax.environments.spaces as gymnax_spaces  # noqa: E402

import parallax_zoo  # noqa: E402
from parallax import AutoResetWrapper, Box, Discrete, Env, PyTreeSpace, TimeLimit, VmapWrapper, check_env  # noqa: E402
from parallax.adapters.gymnax import GymnaxAdapter, to_parallax_space  # noqa: E402

PUSH_RIGHT = jnp.int32(1)


def rollout(env, state, action, num_steps):
    """`num_steps` steps with a constant action; returns the stacked states, index t = after step t + 1."""

    def body(s, _):
        s = env.step(s, action)
        return s, s

    return jax.jit(lambda s: jax.lax.scan(body, s, None, length=num_steps)[1])(state)


def at(states, t):
    return jax.tree_util.tree_map(lambda x: x[t], states)


@pytest.fixture(scope="module")
def cartpole():
    env, params = gymnax.make("CartPole-v1")
    return env, params, GymnaxAdapter(env, params)


def test_termination_keeps_the_fallen_pole(cartpole):
    env, params, adapter = cartpole
    states = rollout(adapter, adapter.reset(key=jax.random.key(0)), PUSH_RIGHT, 100)
    end = int(np.argmax(np.asarray(states.done)))
    assert bool(states.termination[end]) and not bool(states.truncation[end])
    x, x_dot, theta, theta_dot = np.asarray(states.observation[end])
    assert abs(x) > params.x_threshold or abs(theta) > params.theta_threshold_radians
    before = np.asarray(states.observation[end - 1])
    assert abs(before[0]) <= params.x_threshold and abs(before[2]) <= params.theta_threshold_radians
    # One explicit Euler step from the previous observation, as CartPole integrates.
    np.testing.assert_allclose(
        [x, theta], [before[0] + params.tau * before[1], before[2] + params.tau * before[3]], rtol=1e-6
    )
    # gymnax's own step replaces this observation by a reset one and keeps it only in info.
    gymnax_obs, _, _, terminated, _, info = env.step(
        jax.random.key(1), at(states, end - 1).env_state, PUSH_RIGHT, params
    )
    assert bool(terminated)
    np.testing.assert_allclose(info["final_observation"], states.observation[end], rtol=1e-6)
    assert not np.allclose(gymnax_obs, states.observation[end])


def test_time_limit_is_truncation_and_the_cart_keeps_its_velocity(cartpole):
    env, params, _ = cartpole
    adapter = GymnaxAdapter(env, params.replace(max_steps_in_episode=5))
    assert adapter.episode_length == 5
    states = rollout(adapter, adapter.reset(key=jax.random.key(0)), PUSH_RIGHT, 5)
    assert np.asarray(states.truncation).tolist() == [False] * 4 + [True]
    assert not np.asarray(states.termination).any()
    before, last = np.asarray(states.observation[3]), np.asarray(states.observation[4])
    # A reset draws every entry from [-0.05, 0.05]; after five pushes the cart is well past that.
    assert last[1] > 0.5
    np.testing.assert_allclose(last[0], before[0] + params.tau * before[1], rtol=1e-6)
    assert last[1] > before[1]


def test_spaces_keep_gymnax_bounds_and_dtypes(cartpole):
    env, params, adapter = cartpole
    declared = env.observation_space(params)
    assert isinstance(adapter.observation_space, Box)
    np.testing.assert_array_equal(adapter.observation_space.low, np.asarray(declared.low))
    np.testing.assert_array_equal(adapter.observation_space.high, np.asarray(declared.high))
    assert adapter.observation_space.dtype == jnp.float32
    assert adapter.action_space == Discrete(2)

    pendulum = GymnaxAdapter(*gymnax.make("Pendulum-v1"))
    assert pendulum.action_space == Box(-2.0, 2.0, (1,), jnp.float32)
    np.testing.assert_array_equal(pendulum.observation_space.high, [1.0, 1.0, 8.0])

    four_rooms = GymnaxAdapter(*gymnax.make("FourRooms-misc"))
    assert four_rooms.observation_space.dtype == jnp.int32
    assert four_rooms.reset(key=jax.random.key(0)).observation.dtype == jnp.int32

    frozen_lake = GymnaxAdapter(*gymnax.make("FrozenLake-misc"))
    assert frozen_lake.observation_space == Discrete(16)


def test_space_dtype_follows_what_the_env_emits():
    catch_env, catch_params = gymnax.make("Catch-bsuite")
    assert jnp.dtype(catch_env.observation_space(catch_params).dtype) == jnp.int32
    adapter = GymnaxAdapter(catch_env, catch_params)
    assert adapter.observation_space.dtype == jnp.float32
    assert adapter.reset(key=jax.random.key(0)).observation.dtype == jnp.float32


CHECKED_BY_DEFAULT = {
    "gymnax/CartPole-v1",  # classic control, discrete
    "gymnax/Pendulum-v1",  # classic control, continuous
    "gymnax/Catch-bsuite",  # bsuite
    "gymnax/MetaMaze-misc",  # misc, partially observable
    "gymnax/SpaceInvaders-MinAtar",  # MinAtar
}
"""The ids whose `check_env` runs in the default suite, one of each family and kind of space; every other registered
gymnax id (3 s on a 2-core CPU, a MinAtar game 10-15 s) runs with --run-slow."""

LEFT_OUT = {"MNISTBandit-bsuite": "downloads MNIST when built"}
"""gymnax envs the registry leaves out, and why (docs/suites.md)."""


def test_the_registry_holds_every_gymnax_env_that_builds_offline_with_gymnax_episode_length():
    registered = {parallax_zoo.spec(env_id).foreign_id: env_id for env_id in parallax_zoo.list_envs(namespace="gymnax")}
    assert set(registered) == set(gymnax.registered_envs) - set(LEFT_OUT)
    assert all(env_id == f"gymnax/{name}" for name, env_id in registered.items())
    assert CHECKED_BY_DEFAULT <= set(registered.values()), "the default suite checks registered ids"
    for name, env_id in registered.items():
        assert parallax_zoo.spec(env_id).max_steps == int(gymnax.make(name)[1].max_steps_in_episode), env_id
    families = {tag for env_id in registered.values() for tag in parallax_zoo.spec(env_id).tags}
    assert {"classic-control", "minatar", "bsuite", "misc"} <= families


@pytest.mark.parametrize("env_id", slow_except(parallax_zoo.list_envs(namespace="gymnax"), CHECKED_BY_DEFAULT))
def test_every_registered_env_passes_check_env(env_id):
    env = parallax_zoo.make(env_id)
    assert isinstance(env, GymnaxAdapter) and env.episode_length == parallax_zoo.spec(env_id).max_steps
    check_env(env, num_steps=16)


@pytest.mark.parametrize("env_id", ["gymnax/MountainCarContinuous-v0", "gymnax/Reacher-misc"])
def test_continuous_envs_keep_the_terminal_observation_and_truncate_apart(env_id):
    env = parallax_zoo.make(env_id, max_steps=3)
    states = rollout(env, env.reset(key=jax.random.key(0)), jnp.ones(env.action_space.shape, jnp.float32), 3)
    assert not bool(states.truncation[1]) and bool(states.truncation[2]) and not bool(states.termination[2])
    first = env.reset(key=jax.random.key(0)).observation
    assert not np.array_equal(np.asarray(states.observation[2]), np.asarray(first))


def test_key_advances_where_step_env_draws_random_numbers(cartpole):
    frozen_lake = GymnaxAdapter(*gymnax.make("FrozenLake-misc"))
    state = frozen_lake.reset(key=jax.random.key(0))
    next_state = frozen_lake.step(state, jnp.int32(0))
    assert not np.array_equal(jax.random.key_data(state.key), jax.random.key_data(next_state.key))
    # CartPole's step_env never touches its key, so the adapter does not spend a split on it.
    _, _, adapter = cartpole
    state = adapter.reset(key=jax.random.key(0))
    np.testing.assert_array_equal(
        jax.random.key_data(adapter.step(state, PUSH_RIGHT).key), jax.random.key_data(state.key)
    )
    assert not np.array_equal(state.observation, adapter.reset(key=jax.random.key(1)).observation)


def test_info_has_the_same_structure_after_reset_and_step(cartpole):
    _, _, adapter = cartpole
    state = adapter.reset(key=jax.random.key(0))
    next_state = adapter.step(state, PUSH_RIGHT)
    assert set(state.info) == set(next_state.info) == {"discount"}
    assert float(next_state.info["discount"]) == 1.0


def test_bad_inputs_get_clear_errors(cartpole):
    _, _, adapter = cartpole
    with pytest.raises(TypeError, match="PRNG key"):
        adapter.reset(key=0)
    state = adapter.reset(key=jax.random.key(0))
    with pytest.raises(ValueError, match=r"expected an action of shape \(\)"):
        adapter.step(state, jnp.zeros(2, jnp.int32))
    with pytest.raises(ValueError, match="dtype int32"):
        adapter.step(state, jnp.float32(1.0))
    with pytest.raises(TypeError, match="gymnax Environment"):
        GymnaxAdapter(object())


def test_satisfies_the_env_protocol(cartpole):
    _, _, adapter = cartpole
    assert isinstance(adapter, Env)


def test_under_vmap_time_limit_and_auto_reset(cartpole):
    _, _, adapter = cartpole
    num_envs, limit = 4, 7
    env = VmapWrapper(AutoResetWrapper(TimeLimit(adapter, max_steps=limit)), num_envs=num_envs)
    state = env.reset(key=jax.random.key(0))
    actions = jnp.arange(num_envs, dtype=jnp.int32) % 2
    states = rollout(env, state, actions, 3 * limit)
    assert states.observation.shape == (3 * limit, num_envs, 4)
    done = np.asarray(states.done)
    # The step that ends an episode already carries the fresh episode's step_count of 0.
    counts = np.asarray(states.step_count)
    assert counts.max() == limit - 1
    np.testing.assert_array_equal(counts[done], 0)
    assert np.asarray(states.truncation).any()
    contained = jax.vmap(jax.vmap(adapter.observation_space.contains))(states.observation)
    assert np.asarray(contained).all()
    check_env(TimeLimit(adapter, max_steps=limit), num_steps=16)


def test_selective_reset_keeps_terminal_observations(cartpole):
    _, _, adapter = cartpole
    env = VmapWrapper(adapter, num_envs=3)
    state = env.reset(key=jax.random.key(0))
    states = rollout(env, state, jnp.array([1, 0, 1], jnp.int32), 60)
    end = int(np.argmax(np.asarray(states.done).any(axis=1)))
    finished = at(states, end)
    assert 0 < int(finished.done.sum()) < 3, "the test needs both finished and running envs at this step"
    terminal = np.asarray(finished.observation)
    reset = env.reset(key=jax.random.key(5), state=finished, done=finished.done)
    for i, ended in enumerate(np.asarray(finished.done)):
        if ended:
            assert abs(terminal[i, 0]) > 2.4 or abs(terminal[i, 2]) > 12 * 2 * np.pi / 360
            assert np.all(np.abs(np.asarray(reset.observation[i])) <= 0.05)
            assert int(reset.step_count[i]) == 0
        else:
            np.testing.assert_array_equal(reset.observation[i], terminal[i])


bounds = st.lists(st.tuples(st.floats(-1e6, 1e6, width=32), st.floats(0, 1e6, width=32)), min_size=1, max_size=5)


@settings(max_examples=25, deadline=None)
@given(per_dimension=bounds, n=st.integers(1, 50))
def test_conversion_keeps_every_bound_and_nests(per_dimension, n):
    low = np.array([lo for lo, _ in per_dimension], np.float32)
    high = np.array([lo + width for lo, width in per_dimension], np.float32)
    box = gymnax_spaces.Box(jnp.asarray(low), jnp.asarray(high), low.shape, jnp.float32)
    converted = to_parallax_space(box)
    np.testing.assert_array_equal(converted.low, low)
    np.testing.assert_array_equal(converted.high, high)
    assert converted.dtype == jnp.float32 and converted.shape == low.shape
    nested = to_parallax_space(
        gymnax_spaces.Dict({"box": box, "pair": gymnax_spaces.Tuple([gymnax_spaces.Discrete(n), box])})
    )
    assert nested == PyTreeSpace({"box": converted, "pair": (Discrete(n), converted)})
