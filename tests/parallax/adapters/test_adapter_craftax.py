"""CraftaxAdapter against the real Craftax: terminal observations, death apart from the time limit, spaces, registry."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers.slow_params import slow_except

pytest.importorskip("craftax")

import parallax_zoo  # noqa: E402
from parallax import Box, Discrete, Env, VmapWrapper, check_env  # noqa: E402
from parallax.adapters.base import next_and_step_key  # noqa: E402
from parallax.adapters.craftax import CraftaxAdapter  # noqa: E402

DEFAULT_SUITE: set[str] = set()
"""Craftax compiles slowly on a CPU (`check_env` on Craftax-Classic-Symbolic: about a minute on 2 cores), so every
`check_env` here runs with --run-slow; the default suite judges Craftax-Classic's boundaries against Craftax itself."""

NOOP = jnp.int32(0)


@pytest.fixture(scope="module")
def classic():
    """Craftax-Classic-Symbolic with a 5-step time limit, so episodes end within a test."""
    return parallax_zoo.make("craftax/Craftax-Classic-Symbolic-v1", max_timesteps=5)


@pytest.mark.parametrize("env_id", slow_except(parallax_zoo.list_envs(tag="craftax"), DEFAULT_SUITE))
def test_every_registered_id_passes_check_env(env_id):
    env = parallax_zoo.make(env_id)
    assert env.episode_length == parallax_zoo.spec(env_id).max_steps
    check_env(env, num_steps=4)


@pytest.fixture(scope="module")
def judged_step(classic):
    """A step by the adapter and, from the same state with the key the adapter hands it, Craftax's own `step_env`.

    Both run in one compiled program: the two steps are the same computation, so XLA compiles it once.
    """

    def both(state, action):
        _, step_key = next_and_step_key(state.key)
        return classic._step_unchecked(state, action), classic.env.step_env(
            step_key, state.env_state, action, classic.params
        )

    return jax.jit(both)


def test_time_limit_truncates_on_the_last_step_with_the_true_observation(classic, judged_step):
    state = classic.reset(key=jax.random.key(0))
    flags = []
    for _ in range(5):
        state, (obs, env_state, reward, done, _) = judged_step(state, NOOP)
        flags.append((bool(state.termination), bool(state.truncation), bool(done)))
    assert flags == [(False, False, False)] * 4 + [(False, True, True)]
    assert int(env_state.timestep) == 5
    np.testing.assert_array_equal(obs, state.observation)
    assert float(reward) == float(state.reward)
    # A reset one would show a new world: the map part of the observation differs.
    assert not np.array_equal(classic.reset(key=jax.random.key(9)).observation, state.observation)


def test_death_terminates_even_on_the_last_step(classic, judged_step):
    state = classic.reset(key=jax.random.key(0))
    for _ in range(3):
        state, _ = judged_step(state, NOOP)
    no_health = jnp.asarray(0.0, state.env_state.player_health.dtype)
    dying = dataclasses.replace(state, env_state=state.env_state.replace(player_health=no_health))
    dead, (obs, _, _, done, _) = judged_step(dying, NOOP)
    assert bool(dead.termination) and not bool(dead.truncation)
    assert bool(done)
    np.testing.assert_array_equal(obs, dead.observation)
    # Dying on the step the time limit arrives is still a death: no bootstrapping from it.
    on_time, _ = judged_step(state, NOOP)
    dying_late = dataclasses.replace(on_time, env_state=on_time.env_state.replace(player_health=no_health))
    last, _ = judged_step(dying_late, NOOP)
    assert int(last.env_state.timestep) == 5
    assert bool(last.termination) and not bool(last.truncation)


def test_spaces_follow_craftax(classic):
    assert classic.action_space == Discrete(17)
    space = classic.observation_space
    assert isinstance(space, Box) and space.shape == (1345,) and space.dtype == jnp.float32
    assert float(space.low.min()) == 0.0 and float(space.high.max()) == 1.0
    assert classic.reset(key=jax.random.key(0)).observation.dtype == jnp.float32


def test_key_advances_and_info_keeps_its_structure(classic, judged_step):
    state = classic.reset(key=jax.random.key(0))
    following, _ = judged_step(state, NOOP)
    assert not np.array_equal(jax.random.key_data(state.key), jax.random.key_data(following.key))
    assert set(state.info) == set(following.info) and "discount" in state.info


def test_settings_are_constructor_kwargs():
    env = parallax_zoo.make("craftax/Craftax-Classic-Symbolic-v1", day_length=50)
    assert env.params.day_length == 50 and env.episode_length == 10000
    with pytest.raises(TypeError, match="does not take the keyword argument 'day_lenght'"):
        parallax_zoo.make("craftax/Craftax-Classic-Symbolic-v1", day_lenght=50)


@pytest.mark.slow
def test_under_vmap_selective_reset(classic):
    env = VmapWrapper(classic, num_envs=2)
    state = env.reset(key=jax.random.key(0))
    for _ in range(5):
        state = env.step(state, jnp.zeros(2, jnp.int32))
    assert np.asarray(state.truncation).all()
    fresh = env.reset(key=jax.random.key(1), state=state, done=jnp.array([True, False]))
    np.testing.assert_array_equal(fresh.observation[1], state.observation[1])
    assert fresh.step_count.tolist() == [0, 5]


def test_bad_inputs_get_clear_errors(classic):
    with pytest.raises(TypeError, match="PRNG key"):
        classic.reset(key=0)
    with pytest.raises(ValueError, match=r"expected an action of shape \(\)"):
        classic.step(classic.reset(key=jax.random.key(0)), jnp.zeros(2, jnp.int32))
    with pytest.raises(TypeError, match="Craftax environment"):
        CraftaxAdapter(object())


def test_satisfies_the_env_protocol(classic):
    assert isinstance(classic, Env)


@pytest.mark.slow
def test_craftax_truncates_at_its_time_limit_and_matches_its_own_step():
    env = parallax_zoo.make("craftax/Craftax-Symbolic-v1", max_timesteps=2)
    state = env.reset(key=jax.random.key(0))
    first = env.step(state, NOOP)
    last = env.step(first, NOOP)
    assert (bool(first.truncation), bool(last.truncation), bool(last.termination)) == (False, True, False)
    _, step_key = jax.random.split(first.key)
    obs, _, _, done, _ = jax.jit(lambda k, s: env.env.step_env(k, s, NOOP, env.params))(step_key, first.env_state)
    assert bool(done)
    np.testing.assert_array_equal(obs, last.observation)
    assert env.action_space == Discrete(43) and env.observation_space.shape == obs.shape


@pytest.mark.parametrize(
    "env_id",
    [
        # A Pixels env's first build makes Craftax's texture cache inside the installed package: 20 s (Classic) to
        # 100 s on 2 cores in a fresh environment, as CI's always is; the symbolic ids build in seconds.
        pytest.param(i, marks=pytest.mark.slow) if "Pixels" in i else i
        for i in parallax_zoo.list_envs(tag="craftax")
    ],
)
def test_every_registered_id_builds_with_the_registered_episode_length(env_id):
    env = parallax_zoo.make(env_id)
    assert env.episode_length == parallax_zoo.spec(env_id).max_steps
    assert env.action_space == Discrete(17 if "Classic" in env_id else 43)
