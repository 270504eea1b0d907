"""JumanjiAdapter against the real Jumanji: terminal observations, truncation at the time limit, spaces, team rewards.

Every registered `jumanji/` id passes `check_env`; one env of each of the
families logic, packing and routing runs in the default suite, the rest
(swarms' SearchAndRescue among them) with `--run-slow`.
"""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jumanji = pytest.importorskip("jumanji")

from jumanji.types import StepType  # noqa: E402
from jumanji.wrappers import AutoResetWrapper  # noqa: E402

import parallax_zoo  # noqa: E402
from parallax import Box, Discrete, Env, MultiBinary, PyTreeSpace, check_env  # noqa: E402
from parallax.adapters.jumanji import JumanjiAdapter  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

DEFAULT_IDS = ("jumanji/TSP-v1",)
"""check_env in the default suite on one routing env; every other id, one family after another, runs under
--run-slow."""


@pytest.mark.parametrize(
    "env_id",
    [
        pytest.param(i, marks=() if i in DEFAULT_IDS else pytest.mark.slow)
        for i in parallax_zoo.list_envs(namespace="jumanji")
    ],
)
def test_every_registered_env_passes_check_env(env_id):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = parallax_zoo.make(env_id)
    check_env(env, num_steps=8)


def play(env, policy, num_steps, key=0):
    """`num_steps` steps from one reset, the action chosen by `policy(state, key)`.

    Returns the adapter's state after each step and Jumanji's own `TimeStep`
    from `env.step` on the same state and action, both from one jitted scan.
    """

    def body(state, step_key):
        action = policy(state, step_key)
        _, own = env.env.step(state.env_state, action)
        following = env.step(state, action)
        return following, (following, own)

    start = env.reset(key=jax.random.key(key))
    return jax.jit(lambda s: jax.lax.scan(body, s, jax.random.split(jax.random.key(key + 1), num_steps))[1])(start)


def assert_same_observations(ours, own):
    for mine, theirs in zip(jax.tree_util.tree_leaves(ours.observation), jax.tree_util.tree_leaves(own.observation)):
        np.testing.assert_array_equal(mine, theirs)


def first_legal_city(state, _):
    return jnp.argmax(state.observation.action_mask).astype(jnp.int32)


@pytest.fixture(scope="module")
def tsp():
    return parallax_zoo.make("jumanji/TSP-v1")


def test_visiting_every_city_terminates_with_jumanjis_own_terminal_observation(tsp):
    cities = tsp.env.num_cities
    after, own = play(tsp, first_legal_city, cities)
    assert np.asarray(after.termination).tolist() == [False] * (cities - 1) + [True]
    assert not np.asarray(after.truncation).any()
    assert int(own.step_type[-1]) == int(StepType.LAST) and float(own.discount[-1]) == 0.0
    # Every observation, the terminal one included, is what Jumanji's own step returns from the same state and action.
    assert_same_observations(after, own)
    np.testing.assert_array_equal(after.reward, own.reward)
    # The tour is complete: every city is in the trajectory, which a reset leaves at -1.
    assert sorted(np.asarray(after.observation.trajectory[-1]).tolist()) == list(range(cities))


def valid_moves(state, key):
    """A random move per agent among those Jumanji's action mask allows (an invalid one ends a Cleaner episode)."""
    mask = state.observation.action_mask
    return jax.random.categorical(key, jnp.where(mask, 0.0, -jnp.inf)).astype(jnp.int32)


@pytest.mark.parametrize(
    "env_id, discount_at_limit",
    [("jumanji/Cleaner-v0", 0.0), pytest.param("jumanji/LevelBasedForaging-v0", 1.0, marks=pytest.mark.slow)],
)
def test_the_time_limit_truncates_on_that_step_and_not_before(env_id, discount_at_limit):
    # Cleaner ends its time limit with discount 0, LevelBasedForaging with discount 1: both are truncations.
    env = parallax_zoo.make(env_id, time_limit=8)
    assert env.episode_length == 8 and parallax_zoo.spec(env_id).max_steps == 100
    after, own = play(env, valid_moves, 8)
    assert np.asarray(after.truncation).tolist() == [False] * 7 + [True]
    assert not np.asarray(after.termination).any()
    assert np.asarray(own.step_type).tolist() == [int(StepType.MID)] * 7 + [int(StepType.LAST)]
    assert np.all(np.asarray(own.discount[-1]) == discount_at_limit)
    assert_same_observations(after, own)


def random_action(env):
    return lambda state, key: env.action_space.sample(key=key)


@pytest.mark.parametrize(
    "env_id",
    [
        pytest.param("jumanji/LevelBasedForaging-v0", marks=pytest.mark.slow),
        pytest.param("jumanji/SearchAndRescue-v0", marks=pytest.mark.slow),
        pytest.param("jumanji/Connector-v3", marks=pytest.mark.slow),
    ],
)
def test_per_agent_rewards_sum_to_the_team_reward_and_stay_in_info(env_id):
    env = parallax_zoo.make(env_id)
    after, own = play(env, random_action(env), 12)
    agent_reward = np.asarray(after.info["agent_reward"])
    assert agent_reward.ndim == 2 and agent_reward.shape[1] > 1
    np.testing.assert_array_equal(agent_reward, own.reward)
    np.testing.assert_allclose(np.asarray(after.reward), agent_reward.sum(axis=1), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(after.info["discount"]), own.discount)


def test_spaces_keep_jumanjis_bounds_structure_and_emitted_dtypes(tsp):
    space = tsp.observation_space
    assert isinstance(space, PyTreeSpace) and type(space.spaces).__name__ == "Observation"
    fields = space.spaces
    assert fields.coordinates == Box(0.0, 1.0, (20, 2), jnp.float32)
    # Jumanji declares position a DiscreteArray(20), but a reset observation holds -1 (no city yet).
    assert fields.position == Box(-1, 19, (), jnp.int32)
    assert fields.trajectory == Box(-1, 19, (20,), jnp.int32)
    assert fields.action_mask == MultiBinary((20,), jnp.bool_)
    assert tsp.action_space == Discrete(20)
    assert bool(space.contains(tsp.reset(key=jax.random.key(0)).observation))
    assert int(tsp.reset(key=jax.random.key(0)).observation.position) == -1


@pytest.mark.parametrize("env_id", ["jumanji/Snake-v1", "jumanji/Tetris-v0"])
def test_step_count_may_reach_the_time_limit(env_id):
    # Jumanji declares DiscreteArray(time_limit), but the last step's observation holds time_limit itself.
    env = parallax_zoo.make(env_id, time_limit=30)
    step_count = env.observation_space.spaces.step_count
    assert step_count == Box(0, 30, (), jnp.int32) and bool(step_count.contains(jnp.int32(30)))


def test_the_key_advances_and_wrappers_are_refused(tsp):
    state = tsp.reset(key=jax.random.key(0))
    following = tsp.step(state, jnp.int32(0))
    assert not np.array_equal(jax.random.key_data(state.key), jax.random.key_data(following.key))
    assert isinstance(tsp, Env)
    with pytest.raises(TypeError, match="bare Jumanji environment"):
        JumanjiAdapter(AutoResetWrapper(jumanji.make("TSP-v1")))
    with pytest.raises(TypeError, match="jumanji.make"):
        JumanjiAdapter(object())  # type: ignore[arg-type]


def test_registry_passes_settings_and_names_the_accepted_ones():
    assert parallax_zoo.make("jumanji/Cleaner-v0", penalty_per_timestep=0.25).env.penalty_per_timestep == 0.25
    with pytest.raises(TypeError, match="'time_limitt'.*accepts:.*time_limit"):
        parallax_zoo.make("jumanji/Cleaner-v0", time_limitt=5)
    assert parallax_zoo.spec("jumanji/TSP-v1").max_steps is None
