"""XMiniGridAdapter against the real XLand-MiniGrid: terminal observations, truncation at max_steps, spaces, rulesets.

Every registered `xminigrid/` id passes `check_env`; one MiniGrid and one
XLand id run in the default suite, the rest with `--run-slow`.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

xminigrid = pytest.importorskip("xminigrid")

from xminigrid.core.constants import TILES_REGISTRY, Colors, Tiles  # noqa: E402
from xminigrid.core.goals import AgentHoldGoal  # noqa: E402
from xminigrid.core.rules import EmptyRule  # noqa: E402
from xminigrid.types import RuleSet, StepType  # noqa: E402
from xminigrid.wrappers import DirectionObservationWrapper, GymAutoResetWrapper, RulesAndGoalsObservationWrapper  # noqa: E402

import parallax_zoo  # noqa: E402
from parallax import Box, Env, PyTreeSpace, check_env  # noqa: E402
from parallax.adapters.xminigrid import XMiniGridAdapter  # noqa: E402

DEFAULT_IDS = ("xminigrid/MiniGrid-Empty-5x5",)
FORWARD, CLOCKWISE, COUNTERCLOCKWISE = 0, 1, 2
TO_THE_GOAL = (FORWARD, FORWARD, CLOCKWISE, FORWARD, FORWARD)
"""Empty-5x5 starts the agent at (1, 1) facing right; the goal is at (3, 3)."""


@pytest.mark.parametrize(
    "env_id",
    [
        pytest.param(i, marks=() if i in DEFAULT_IDS else pytest.mark.slow)
        for i in parallax_zoo.list_envs(namespace="xminigrid")
    ],
)
def test_every_registered_env_passes_check_env(env_id):
    check_env(parallax_zoo.make(env_id), num_steps=8)


EPISODE = 100
"""Empty-5x5's max_steps: both boundary tests play this many actions, so they share one compiled rollout."""


@functools.cache
def rollout(env):
    """A jitted scan over actions from a state: the adapter's states after each step, and XLand-MiniGrid's own
    `TimeStep` from its `step` on the same state and action (index t = after step t + 1)."""

    def body(state, action):
        own = env.env.step(env.params, state.env_state, action)
        state = env.step(state, action)
        return state, (state, own)

    return jax.jit(lambda state, actions: jax.lax.scan(body, state, actions)[1])


def play(env, actions):
    return rollout(env)(env.reset(key=jax.random.key(0)), jnp.asarray(actions, jnp.int32))


@pytest.fixture(scope="module")
def empty():
    return parallax_zoo.make("xminigrid/MiniGrid-Empty-5x5")


def test_reaching_the_goal_terminates_with_xminigrids_own_terminal_observation(empty):
    padded = TO_THE_GOAL + (COUNTERCLOCKWISE,) * (EPISODE - len(TO_THE_GOAL))
    states, own = jax.tree_util.tree_map(lambda x: x[: len(TO_THE_GOAL)], play(empty, padded))
    assert np.asarray(states.termination).tolist() == [False] * 4 + [True]
    assert not np.asarray(states.truncation).any()
    assert float(states.reward[-1]) == pytest.approx(1.0 - 0.9 * 5 / empty.episode_length)
    # Every observation, the terminal one included, is what XLand-MiniGrid's own step returns from the same state.
    assert int(own.step_type[-1]) == int(StepType.LAST) and float(own.discount[-1]) == 0.0
    np.testing.assert_array_equal(states.observation, own.observation)
    np.testing.assert_array_equal(states.reward, own.reward)
    # The agent stands on the goal, so the view differs from the first step's; the key moved on every step.
    assert not np.array_equal(states.observation[-1], states.observation[0])
    keys = np.asarray(jax.random.key_data(states.key))
    assert len({tuple(k) for k in keys}) == len(TO_THE_GOAL)


def test_max_steps_truncates_on_that_step_and_not_before(empty):
    assert empty.episode_length == EPISODE == parallax_zoo.spec("xminigrid/MiniGrid-Empty-5x5").max_steps
    states, own = play(empty, [COUNTERCLOCKWISE] * EPISODE)
    assert np.asarray(states.truncation).tolist() == [False] * (EPISODE - 1) + [True]
    assert not np.asarray(states.termination).any()
    assert np.asarray(own.step_type).tolist() == [int(StepType.MID)] * (EPISODE - 1) + [int(StepType.LAST)]
    assert float(own.discount[-1]) == 1.0
    np.testing.assert_array_equal(states.observation, own.observation)
    assert parallax_zoo.make("xminigrid/MiniGrid-Empty-5x5", max_steps=7).episode_length == 7


def test_observation_space_bounds_tile_and_colour_ids_per_layer(empty):
    space = empty.observation_space
    assert isinstance(space, Box) and space.dtype == jnp.uint8 and space.shape == (7, 7, 2)
    np.testing.assert_array_equal(space.high[..., 0], 12)
    np.testing.assert_array_equal(space.high[..., 1], 11)
    assert empty.reset(key=jax.random.key(0)).observation.dtype == jnp.uint8
    assert empty.action_space.n == 6


def test_observation_wrappers_become_a_pytree_space():
    env, params = xminigrid.make("XLand-MiniGrid-R1-9x9")
    adapter = XMiniGridAdapter(RulesAndGoalsObservationWrapper(DirectionObservationWrapper(env)), params)
    space = adapter.observation_space
    assert isinstance(space, PyTreeSpace)
    assert set(space.spaces) == {"img", "direction", "goal_encoding", "rule_encoding"}
    assert space.spaces["direction"] == Box(0.0, 1.0, (4,), jnp.float32)
    assert bool(space.contains(adapter.reset(key=jax.random.key(0)).observation))


def test_a_ruleset_is_a_setting_of_the_registered_xland_env():
    goal = AgentHoldGoal(tile=TILES_REGISTRY[Tiles.BALL, Colors.RED]).encode()
    ruleset = RuleSet(
        goal=goal,
        rules=EmptyRule().encode()[None, ...],
        init_tiles=jnp.array((TILES_REGISTRY[Tiles.BALL, Colors.RED],)),
    )
    env = parallax_zoo.make("xminigrid/XLand-MiniGrid-R1-9x9", ruleset=ruleset)
    state = env.reset(key=jax.random.key(0))
    np.testing.assert_array_equal(state.env_state.state.goal_encoding, goal)
    grid = np.asarray(state.env_state.state.grid)
    assert (grid == np.asarray(TILES_REGISTRY[Tiles.BALL, Colors.RED])).all(axis=-1).sum() == 1
    with pytest.raises(TypeError, match="'rulesett'.*accepts:.*ruleset"):
        parallax_zoo.make("xminigrid/XLand-MiniGrid-R1-9x9", rulesett=ruleset)


def test_auto_reset_wrappers_and_other_objects_are_refused(empty):
    assert isinstance(empty, Env)
    env, params = xminigrid.make("MiniGrid-Empty-5x5")
    with pytest.raises(TypeError, match="GymAutoResetWrapper"):
        XMiniGridAdapter(GymAutoResetWrapper(env), params)
    with pytest.raises(TypeError, match="xminigrid.make"):
        XMiniGridAdapter(object())  # type: ignore[arg-type]
