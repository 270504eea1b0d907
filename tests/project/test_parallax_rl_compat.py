"""Code written against the published parallax-rl 0.4.0 API runs unchanged; the deliberate differences hold.

The surface exercised here is the package's public one: constructors by
keyword with their defaults, attribute names, wrapper attributes through
stacks, error types and module paths. docs/compatibility.md lists the
differences this file checks at the end.
"""

from __future__ import annotations

import dataclasses
import importlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers.example_envs import GridWorld, Race

import parallax
from parallax import AutoResetWrapper, TimeLimit, VmapWrapper, Wrapper, spaces, stack_space

PUBLISHED_NAMES = [
    "Env", "VectorEnv", "State", "MARLEnv", "MARLVectorEnv", "MARLState", "Agents", "Space", "spaces",
    "stack_space", "AutoResetWrapper", "VmapWrapper", "TimeLimit", "Wrapper",
]  # fmt: skip
"""parallax-rl 0.4.0's `parallax.__all__`."""

PUBLISHED_MODULES = {
    "parallax.core": [
        "State",
        "Agents",
        "MARLState",
        "Env",
        "VectorEnv",
        "MARLEnv",
        "MARLVectorEnv",
        "StateT",
        "MARLStateT",
    ],
    "parallax.spaces": ["Space", "Discrete", "Box", "MultiDiscrete", "MultiBinary", "PyTreeSpace", "stack_space"],
    "parallax.wrappers": ["Wrapper", "VmapWrapper", "AutoResetWrapper", "TimeLimit"],
    "parallax.adapters": ["BraxAdapter", "GymnaxAdapter", "MJXAdapter"],
}


def test_published_names_and_module_paths_exist() -> None:
    assert set(PUBLISHED_NAMES) <= set(parallax.__all__)
    for name in PUBLISHED_NAMES:
        assert getattr(parallax, name) is not None
    for module_name, names in PUBLISHED_MODULES.items():
        module = importlib.import_module(module_name)
        for name in names:
            if module_name != "parallax.adapters":  # adapters import their package on access: checked below
                assert getattr(module, name) is not None, f"{module_name}.{name}"
        assert set(names) <= set(getattr(module, "__all__", names))
    for submodule in ("gymnax", "brax", "mjx"):
        assert importlib.util.find_spec(f"parallax.adapters.{submodule}") is not None


def test_space_constructors_take_the_published_keywords_and_defaults() -> None:
    discrete = spaces.Discrete(n=4)
    assert (discrete.n, discrete.shape) == (4, ())
    assert spaces.Discrete(n=4, shape=(3,)).shape == (3,)
    box = spaces.Box(low=0.0, high=4.0, shape=(4,))
    assert box.shape == (4,) and float(box.low.min()) == 0.0 and float(box.high.max()) == 4.0
    multi = spaces.MultiDiscrete(actions_per_dim=jnp.array([2, 3, 4]))
    assert multi.shape == (3,) and multi.actions_per_dim.tolist() == [2, 3, 4]
    assert spaces.MultiDiscrete(jnp.array([2, 3])).actions_per_dim.tolist() == [2, 3]
    assert spaces.MultiBinary(n=5).n == 5 and spaces.MultiBinary(n=5).shape == (5,)
    assert spaces.MultiBinary(n=(2, 3)).n == (2, 3) and spaces.MultiBinary(n=(2, 3)).shape == (2, 3)
    tree = spaces.PyTreeSpace(spaces={"a": discrete, "b": box})
    assert tree.spaces == {"a": discrete, "b": box} and tree.shape == {"a": (), "b": (4,)}
    assert bool(jax.jit(lambda key: tree.contains(tree.sample(key=key)))(jax.random.key(0)))
    assert jax.eval_shape(lambda key: spaces.MultiBinary(n=5).sample(key=key), jax.random.key(0)).dtype == jnp.int8


def test_stack_space_by_keyword_and_its_type_error() -> None:
    stacked = stack_space(space=spaces.MultiDiscrete(actions_per_dim=jnp.array([2, 3])), num=4)
    assert stacked.shape == (4, 2) and stacked.actions_per_dim.tolist() == [[2, 3]] * 4
    assert stack_space(spaces.MultiBinary(n=3), num=2).shape == (2, 3)

    class Custom:
        shape = ()

    with pytest.raises(TypeError):
        stack_space(Custom(), 2)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="nvec .*exactly once"):
        spaces.MultiDiscrete(nvec=[2], actions_per_dim=[2])


def test_every_wrapper_exposes_num_agents_and_vmap_num_envs_through_stacks() -> None:
    single = GridWorld()
    for wrapped in (Wrapper(single), TimeLimit(single, max_steps=5), AutoResetWrapper(single)):
        assert wrapped.num_agents == 1
    stack = VmapWrapper(AutoResetWrapper(TimeLimit(single, max_steps=5)), num_envs=3)
    assert (stack.num_agents, stack.num_envs, stack.max_steps) == (1, 3, 5)
    marl = VmapWrapper(TimeLimit(Race(), max_steps=20), num_envs=2)
    assert (marl.num_agents, marl.num_envs) == (3, 2)
    assert marl.action_space.shape == (3,)


def test_a_custom_wrapper_written_for_parallax_rl_runs_unchanged() -> None:
    """Its style: assign the spaces in `__init__`, forward `**kwargs` in `reset`, read unknown attributes through."""

    class ScaledObservation(Wrapper):
        def __init__(self, env, scale: float) -> None:
            super().__init__(env)
            self.scale = scale
            self.observation_space = spaces.Box(0.0, 4.0 * scale, (4,))

        def reset(self, *, key, **kwargs):
            state = self.env.reset(key=key, **kwargs)
            return dataclasses.replace(state, observation=state.observation * self.scale)

        def step(self, state, action):
            state = self.env.step(state, action)
            return dataclasses.replace(state, observation=state.observation * self.scale)

    env = ScaledObservation(TimeLimit(GridWorld(), max_steps=10), scale=2.0)
    assert env.observation_space == spaces.Box(0.0, 8.0, (4,))
    assert env.action_space == GridWorld.action_space and env.max_steps == 10 and env.num_agents == 1
    assert VmapWrapper(env, num_envs=2).observation_space == spaces.Box(0.0, 8.0, (4,))
    state = jax.jit(lambda key: env.step(env.reset(key=key), jnp.int32(0)))(jax.random.key(0))
    assert float(state.observation[1]) == 2.0
    with pytest.raises(AttributeError):
        env.not_an_attribute  # noqa: B018


def test_selective_reset_needs_state_and_done_together() -> None:
    env = VmapWrapper(TimeLimit(GridWorld(), max_steps=8), num_envs=4)
    with pytest.raises(ValueError):
        env.reset(key=jax.random.key(0), state=object())  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        env.reset(key=jax.random.key(0), done=jnp.zeros(4, bool))


def test_a_space_with_only_shape_and_sample_still_steps_through_wrappers() -> None:
    """parallax-rl's `Space` protocol asks for `shape` and `sample` only."""

    @dataclasses.dataclass(frozen=True)
    class Coin:
        shape: tuple = ()

        def sample(self, *, key):
            return jax.random.randint(key, self.shape, 0, 2)

    class CoinGridWorld(GridWorld):
        action_space = Coin()

    env = VmapWrapper(CoinGridWorld(), num_envs=2)
    state = jax.eval_shape(lambda key: env.step(env.reset(key=key), jnp.array([0, 1])), jax.random.key(0))
    assert state.observation.shape == (2, 4)
    with pytest.raises(ValueError, match="expected an action of shape \\(2,\\)"):
        jax.eval_shape(env.step, state, jnp.zeros(3, jnp.int32))


# The documented differences (docs/compatibility.md), each kept on purpose.


def test_auto_reset_keeps_the_terminal_reward_and_flags() -> None:
    """parallax-rl replaces the whole state on the ending step; ours keeps its reward and flags, resets the rest."""
    env = AutoResetWrapper(TimeLimit(GridWorld(), max_steps=1))
    ended = jax.jit(lambda key: env.step(env.reset(key=key), jnp.int32(2)))(jax.random.key(0))
    assert bool(ended.truncation) and float(ended.reward) > 0.0
    assert int(ended.step_count) == 0 and ended.observation[:2].tolist() == [0.0, 0.0]


def test_infinite_box_bounds_sample_finite_values_and_spaces_are_hashable() -> None:
    unbounded = spaces.Box(low=-jnp.inf, high=jnp.inf, shape=(3,))
    assert np.isfinite(np.asarray(jax.jit(unbounded.sample)(key=jax.random.key(0)))).all()
    assert (
        hash(spaces.Discrete(n=3)) == hash(spaces.Discrete(n=3))
        and len({spaces.MultiBinary(n=2), spaces.MultiBinary(2)}) == 1
    )


def test_state_fields_are_keyword_only() -> None:
    """So that subclasses may add fields without defaults after `Agents.action_mask` and
    `MARLState.global_observation`."""
    fields = dict(env_state=0, observation=jnp.zeros(2), reward=jnp.float32(0), termination=jnp.bool_(False),
                  truncation=jnp.bool_(False), info={}, step_count=jnp.int32(0), key=jax.random.key(0))  # fmt: skip
    assert parallax.State(**fields).reward == 0
    with pytest.raises(TypeError):
        parallax.State(*fields.values())  # type: ignore[misc]


def test_gymnax_adapter_reports_time_limits_as_truncation() -> None:
    """parallax-rl reports every gymnax episode end as termination; ours tells the time limit apart."""
    gymnax = pytest.importorskip("gymnax")
    from parallax.adapters import GymnaxAdapter

    adapter = GymnaxAdapter(gymnax.make("CartPole-v1")[0], params=None)
    assert adapter.params == adapter.env.default_params and adapter.episode_length == 500
    state = adapter.reset(key=jax.random.key(0))
    state = dataclasses.replace(state, env_state=state.env_state.replace(time=499))
    state = adapter.step(state, jnp.int32(0))
    assert bool(state.truncation) and not bool(state.termination)
    np.testing.assert_array_equal(np.asarray(adapter.observation_space.shape), [4])
