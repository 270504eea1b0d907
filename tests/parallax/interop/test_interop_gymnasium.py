"""`to_gymnasium`, `to_gymnasium_vector` and the `parallax_zoo/...` ids in Gymnasium's registry, judged by Gymnasium's
own checker."""

from __future__ import annotations

import re
import subprocess
import sys
import warnings
from typing import NamedTuple

import chex
import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode
from helpers.example_envs import GridWorld, Race

import parallax_zoo
from parallax import Box, Discrete, MultiBinary, MultiDiscrete, PyTreeSpace, State, VmapWrapper, spaces
from parallax.interop import GymnasiumVectorEnv, to_gymnasium, to_gymnasium_vector
from parallax.interop.gymnasium_spaces import scalar_converter, to_gymnasium_space
from parallax_zoo.catalogue.foreign_envs import IncompatibleVersionsError
from parallax_zoo.catalogue.gymnasium_ids import gymnasium_id, shared_env
from parallax_zoo.catalogue.menagerie import MissingAssetsError
from parallax_zoo.envs.rendering import BLUE, GREEN

SINGLE_AGENT_IDS = [env_id for env_id in parallax_zoo.list_envs() if not parallax_zoo.spec(env_id).multi_agent]
CHEAP_KINDS = ("native",)
CHEAP_IDS = ("gymnax/CartPole-v1", "gymnax/Catch-bsuite", "gymnax/Reacher-misc")
"""Compiled in the default suite: every native id and a gymnax id of three families (classic control, bsuite,
misc); the rest, one of each other family among them (MinAtar, Brax, Playground), run with --run-slow."""

ENV_PROPERTY_WARNINGS = (
    "observation space minimum value is -infinity",
    "observation space maximum value is infinity",
    "we recommend using a symmetric and normalized space",
    "maximum and minimum values are equal",
)
"""Gymnasium's advice about an env's own declared bounds (physics observations, Pendulum's torque, the bsuite
bandits' constant observation), not about the export."""


def _ids(ids: list[str]) -> list:
    cheap = lambda env_id: parallax_zoo.spec(env_id).kind in CHEAP_KINDS or env_id in CHEAP_IDS  # noqa: E731
    return [env_id if cheap(env_id) else pytest.param(env_id, marks=pytest.mark.slow) for env_id in ids]


def _gymnasium_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    messages = [str(w.message) for w in caught if "WARN:" in str(w.message)]
    return [m for m in messages if not any(allowed in m for allowed in ENV_PROPERTY_WARNINGS)]


@pytest.mark.parametrize("env_id", _ids(SINGLE_AGENT_IDS))
def test_gymnasium_check_env_passes_on_every_single_agent_id(env_id: str) -> None:
    """Gymnasium's checker, on the env `gymnasium.make` builds (so it also re-makes it per render mode)."""
    try:
        env = gymnasium.make(gymnasium_id(env_id)).unwrapped
    except (MissingAssetsError, IncompatibleVersionsError) as error:
        pytest.skip(str(error))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env)
    assert _gymnasium_warnings(caught) == []
    assert env.parallax_env is not None and env.spec is not None and env.spec.id == gymnasium_id(env_id)


def test_every_single_agent_id_is_in_gymnasiums_registry() -> None:
    registered = {env_id for env_id in gymnasium.registry if env_id.startswith("parallax_zoo/")}
    assert registered == {gymnasium_id(env_id) for env_id in SINGLE_AGENT_IDS}
    assert gymnasium_id("gymnax/CartPole-v1") == "parallax_zoo/gymnax-CartPole-v1"
    vector = gymnasium.make_vec("parallax_zoo/GridWorld-v0", num_envs=3)
    assert isinstance(vector.unwrapped, GymnasiumVectorEnv) and vector.num_envs == 3


def test_importing_parallax_zoo_registers_without_importing_gymnasium() -> None:
    script = (
        "import sys, parallax_zoo\n"
        "assert 'gymnasium' not in sys.modules, 'import parallax_zoo imported gymnasium'\n"
        "import gymnasium\n"
        "env = gymnasium.make('parallax_zoo/GridWorld-v0')\n"
        "observation, info = env.reset(seed=0)\n"
        "assert observation.shape == (4,) and info == {}\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def _reference_key(seed: int) -> jax.Array:
    """The key `reset(seed=seed)` hands the env: `jax.random.key(seed)`, split once (docs/interop.md)."""
    return jax.random.split(jax.random.key(seed))[1]


@pytest.mark.parametrize("env_id", ["GridWorld-Masked-v0", "gymnax/CartPole-v1"])
def test_random_play_matches_the_jax_env_step_for_step(env_id: str) -> None:
    parallax_env = shared_env(env_id)
    exported = to_gymnasium(parallax_env)
    exported.action_space.seed(7)
    observation, info = exported.reset(seed=3)
    state = jax.jit(lambda k: parallax_env.reset(key=k))(_reference_key(3))
    step = jax.jit(parallax_env.step)
    np.testing.assert_array_equal(observation, np.asarray(state.observation))
    for _ in range(60):
        mask = info.get("action_mask")
        action = exported.action_space.sample(mask=mask)
        observation, reward, terminated, truncated, info = exported.step(action)
        state = step(state, jnp.asarray(action, jnp.int32))
        assert reward == float(state.reward)
        assert (terminated, truncated) == (bool(state.termination), bool(state.truncation))
        np.testing.assert_array_equal(observation, np.asarray(state.observation))
        if mask is not None:
            np.testing.assert_array_equal(info["action_mask"], np.asarray(state.action_mask, np.int8))
        if terminated or truncated:
            break


def test_reset_seed_sets_the_key_and_no_seed_goes_on() -> None:
    exported = to_gymnasium(shared_env("GridWorld-v0"))
    first, _ = exported.reset(seed=11)
    again, _ = exported.reset(seed=11)
    np.testing.assert_array_equal(first, again)
    goals = {tuple(exported.reset()[0][2:]) for _ in range(12)}
    assert len(goals) > 1, "resets without a seed must draw new goals"


def test_render_returns_the_envs_rgb_picture_and_none_without_a_render_method() -> None:
    exported = to_gymnasium(shared_env("GridWorld-v0"), render_mode="rgb_array")
    observation, _ = exported.reset(seed=0)
    frame = exported.render()
    assert frame is not None and frame.dtype == np.uint8 and frame.shape == (80, 80, 3)
    goal_x, goal_y = observation[2:].astype(int)
    # 16-pixel cells, y upwards: the agent's blue disc in the bottom-left cell, the goal's green square at its cell
    assert tuple(frame[4 * 16 + 8, 8]) == BLUE
    assert tuple(frame[(4 - goal_y) * 16 + 8, goal_x * 16 + 8]) == GREEN
    plain = to_gymnasium(GridWorld())
    assert plain.metadata["render_modes"] == []
    plain.reset(seed=0)
    assert plain.render() is None
    with pytest.raises(ValueError, match="render_mode='rgb_array' is not available.*no render"):
        to_gymnasium(GridWorld(), render_mode="rgb_array")


def test_bad_input_gets_a_clear_error() -> None:
    with pytest.raises(TypeError, match="multi-agent.*to_pettingzoo"):
        to_gymnasium(Race())
    with pytest.raises(TypeError, match="unbatched.*to_gymnasium_vector"):
        to_gymnasium(VmapWrapper(GridWorld(), num_envs=2))
    with pytest.raises(gymnasium.error.ResetNeeded, match="before reset"):
        to_gymnasium(GridWorld()).step(0)


class DictGridWorld(GridWorld):
    """GridWorld observing a dict of a float position and a discrete goal index: a `PyTreeSpace` observation."""

    observation_space = PyTreeSpace({"position": spaces.Box(0.0, 4.0, (2,)), "goal": (spaces.Discrete(25),)})

    def reset(self, *, key: jax.Array) -> State:
        return self._observe(super().reset(key=key))

    def step(self, state: State, action: jax.Array) -> State:
        return self._observe(super().step(state, action))

    def _observe(self, state: State) -> State:
        goal = (state.env_state.goal[0] * 5 + state.env_state.goal[1]).astype(jnp.int32)
        return State(**{**vars(state), "observation": {"position": state.env_state.pos, "goal": (goal,)}})


def test_pytree_observations_become_dict_and_tuple_spaces_that_check_env_accepts() -> None:
    exported = to_gymnasium(DictGridWorld())
    assert exported.observation_space == gymnasium.spaces.Dict(
        {
            "position": gymnasium.spaces.Box(0.0, 4.0, (2,), np.float32),
            "goal": gymnasium.spaces.Tuple((gymnasium.spaces.Discrete(25),)),
        }
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(exported, skip_render_check=True)
    assert _gymnasium_warnings(caught) == []


@pytest.mark.parametrize(
    ("space", "expected"),
    [
        (Discrete(5), gymnasium.spaces.Discrete(5)),
        (Discrete(3, shape=(2,)), gymnasium.spaces.MultiDiscrete([3, 3], dtype=np.int32)),
        (
            Box(np.array([-1.0, 0.0]), np.array([1.0, np.inf])),
            gymnasium.spaces.Box(
                np.array([-1.0, 0.0], np.float32), np.array([1.0, np.inf], np.float32), (2,), np.float32
            ),
        ),
        (Box(-1, 1, (3, 3), jnp.int8), gymnasium.spaces.Box(-1, 1, (3, 3), np.int8)),
        (MultiDiscrete([2, 3]), gymnasium.spaces.MultiDiscrete([2, 3], dtype=np.int32)),
        (MultiBinary(4), gymnasium.spaces.MultiBinary(4)),
        (MultiBinary(4, jnp.bool_), gymnasium.spaces.Box(0, 1, (4,), np.bool_)),
    ],
    ids=["discrete", "stacked-discrete", "box-per-dim", "box-int8", "multidiscrete", "multibinary", "multibinary-bool"],
)
def test_spaces_convert_exactly(space, expected) -> None:
    converted = to_gymnasium_space(space)
    assert converted == expected and converted.dtype == expected.dtype


def test_a_space_without_a_gymnasium_counterpart_is_refused() -> None:
    with pytest.raises(TypeError, match="no Gymnasium space corresponds"):
        to_gymnasium_space(object())


def test_vector_env_next_step_autoreset_true_terminal_observations_seeds_masks_and_render() -> None:
    """GridWorld of size 2: the goal is always (1, 1), so an episode ends often and its terminal position is the
    goal."""
    num_envs = 16
    parallax_env = parallax_zoo.make("GridWorld-Masked-v0", size=2)
    vector = to_gymnasium_vector(parallax_env, num_envs, render_mode="rgb_array")
    assert vector.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    assert vector.single_observation_space == gymnasium.spaces.Box(0.0, 1.0, (4,), np.float32)
    vector.action_space.seed(0)
    observation, info = vector.reset(seed=0)
    np.testing.assert_array_equal(info["action_mask"], np.tile(np.array([1, 0, 1, 0], np.int8), (num_envs, 1)))
    assert info["_action_mask"].all()
    frames = vector.render()
    assert frames is not None and len(frames) == num_envs and frames[0].shape == (32, 32, 3)
    step = jax.jit(vector.parallax_env.step)
    ended = np.zeros(num_envs, bool)
    terminal_steps = 0
    for _ in range(30):
        action = vector.action_space.sample()
        before = vector.parallax_state
        observation, reward, terminated, truncated, _ = vector.step(action)
        expected = step(before, jnp.asarray(action, jnp.int32))
        going = ~ended
        np.testing.assert_array_equal(reward[going], np.asarray(expected.reward)[going])
        np.testing.assert_array_equal(terminated[going], np.asarray(expected.termination)[going])
        np.testing.assert_array_equal(observation[going], np.asarray(expected.observation)[going])
        np.testing.assert_array_equal(observation[terminated], np.ones((terminated.sum(), 4)))
        # the step after an ending resets: reset observation, reward 0, no flags
        np.testing.assert_array_equal(observation[ended][:, :2], np.zeros((ended.sum(), 2)))
        assert not reward[ended].any() and not terminated[ended].any() and not truncated[ended].any()
        terminal_steps += int(terminated.sum())
        ended = terminated | truncated
    assert terminal_steps > num_envs

    seeds = list(range(100, 100 + num_envs))
    np.testing.assert_array_equal(vector.reset(seed=5)[0], vector.reset(seed=5)[0])
    vector.reset(seed=seeds)
    single = to_gymnasium(parallax_env)
    for slot in (0, num_envs - 1):
        single.reset(seed=seeds[slot])
        reference = single.parallax_state.env_state
        np.testing.assert_array_equal(np.asarray(vector.parallax_state.key[slot] == single.parallax_state.key), True)
        np.testing.assert_array_equal(
            np.asarray(vector.parallax_state.env_state.goal[slot]), np.asarray(reference.goal)
        )
    vector.step(np.full(num_envs, 2))
    mask = np.arange(num_envs) % 3 == 0
    observation, _ = vector.reset(options={"reset_mask": mask})
    np.testing.assert_array_equal(observation[mask][:, :2], np.zeros((mask.sum(), 2)))
    np.testing.assert_array_equal(observation[~mask][:, :2], np.tile([1.0, 0.0], ((~mask).sum(), 1)))
    with pytest.raises(ValueError, match="reset_mask"):
        vector.reset(options={"reset_mask": mask.astype(int)})


def test_an_action_outside_the_space_raises_invalid_action_naming_it_and_the_space() -> None:
    """As Gymnasium's own envs refuse an action their space does not hold; a bool or a float is no Discrete action."""
    env = to_gymnasium(parallax_zoo.make("GridWorld-v0"))
    env.reset(seed=0)
    for action, shown in (
        (99, "99 (int)"),
        (-1, "-1 (int)"),
        (2.7, "2.7 (float)"),
        (True, "True (bool)"),
        (np.int64(4), "np.int64(4) (int64)"),
    ):
        with pytest.raises(
            gymnasium.error.InvalidAction,
            match=rf"GymnasiumEnv.step: action {re.escape(shown)} is not in "
            r"the action space Discrete\(4\)",
        ):
            env.step(action)
    assert int(env.parallax_state.step_count) == 0, "a refused action does not step the env"
    env.step(np.int64(1))
    env.step(1)
    vector = to_gymnasium_vector(parallax_zoo.make("GridWorld-v0"), 3)
    vector.reset(seed=0)
    with pytest.raises(
        gymnasium.error.InvalidAction, match=r"action array\(\[ 0, 99,  1\]\) .* MultiDiscrete\(\[4 4 4\]\)"
    ):
        vector.step(np.array([0, 99, 1]))


def test_a_step_after_the_episode_ended_warns_once_and_pays_nothing() -> None:
    """Gymnasium's own envs (CartPole) warn on a step after `terminated` and pay 0; the env is not stepped."""
    from parallax_zoo.envs.gridworld import GridWorld as ZooGridWorld

    env = to_gymnasium(ZooGridWorld(size=2))
    env.reset(seed=0)
    env.step(0)
    observation, reward, terminated, _, _ = env.step(2)
    assert terminated and reward > 0
    ended = env.parallax_state
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        after = [env.step(action) for action in (0, 1, 3)]
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1 and "already returned terminated = True" in messages[0] and "reset()" in messages[0]
    for again, paid, still_terminated, truncated, _ in after:
        np.testing.assert_array_equal(again, observation)
        assert paid == 0.0 and still_terminated and not truncated
    assert env.parallax_state is ended
    env.reset(seed=1)
    assert env.step(0)[1] != 0.0, "a reset starts paying again"


class _GridAndMask(NamedTuple):
    grid: Box
    action_mask: MultiBinary


def test_a_namedtuple_observation_space_exports_as_a_dict_by_field() -> None:
    """Jumanji's observations are NamedTuples: exported as a Gymnasium `Dict` keyed by field, and dicts to match."""
    space = PyTreeSpace(_GridAndMask(Box(0.0, 1.0, (3, 3)), MultiBinary((4,))))
    exported = to_gymnasium_space(space)
    assert isinstance(exported, gymnasium.spaces.Dict) and set(exported.spaces) == {"grid", "action_mask"}
    observation = space.sample(jax.random.key(0))
    convert = scalar_converter(space)
    assert convert is not None
    converted = convert(jax.tree_util.tree_map(np.asarray, observation))
    assert isinstance(converted, dict) and exported.contains(converted)


@chex.dataclass(frozen=True)
class _Corners:
    low: Box
    high: Box


def test_a_mapping_inside_an_observation_space_exports_as_a_dict_by_key() -> None:
    """BinPack and MultiCVRP nest chex dataclasses (mappings, not dicts) in their NamedTuple observations: each level
    becomes a Gymnasium `Dict`, and the observation a dict of dicts that the space contains."""
    space = PyTreeSpace(_GridAndMask(_Corners(low=Box(0.0, 1.0, (2,)), high=Box(0.0, 1.0, (2,))), MultiBinary((4,))))
    exported = to_gymnasium_space(space)
    assert isinstance(exported["grid"], gymnasium.spaces.Dict) and set(exported["grid"].spaces) == {"low", "high"}
    convert = scalar_converter(space)
    assert convert is not None
    converted = convert(jax.tree_util.tree_map(np.asarray, space.sample(jax.random.key(0))))
    assert isinstance(converted["grid"], dict) and exported.contains(converted)
