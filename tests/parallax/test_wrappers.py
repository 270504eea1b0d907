"""Wrappers: batching with selective reset, time limits, auto-reset, episode statistics."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers.example_envs import GridWorld, MaskedGridWorld, MaskedState, Race

from parallax import AutoResetWrapper, RecordEpisodeStatistics, TimeLimit, VmapWrapper, Wrapper
from parallax.core import is_key_dtype


def _key_data(x):
    return np.asarray(jax.random.key_data(x))


def _assert_trees_identical(a, b):
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
        if is_key_dtype(x.dtype):
            x, y = _key_data(x), _key_data(y)
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def _up(num_envs):
    return jnp.zeros(num_envs, jnp.int32)


def test_vmap_wrapper_batches_every_field():
    env = VmapWrapper(GridWorld(), num_envs=6)
    state = env.reset(key=jax.random.key(0))
    assert state.observation.shape == (6, 4)
    assert state.reward.shape == state.termination.shape == state.step_count.shape == (6,)
    state = env.step(state, _up(6))
    assert state.step_count.tolist() == [1] * 6
    assert env.observation_space.shape == (4,)


def test_vmap_wrapper_multi_agent_fields_widen():
    env = VmapWrapper(Race(), num_envs=5)
    state = env.step(env.reset(key=jax.random.key(0)), jnp.ones((5, 3), jnp.int32))
    assert state.agents.reward.shape == state.agents.active.shape == (5, 3)
    assert state.termination.shape == (5,)
    assert env.num_agents == 3 and env.action_space.shape == (3,)


def test_selective_reset_leaves_other_envs_bit_identical():
    env = VmapWrapper(GridWorld(), num_envs=4)
    state = env.reset(key=jax.random.key(0))
    for _ in range(3):
        state = env.step(state, jnp.array([0, 2, 0, 2]))
    done = jnp.array([True, False, False, True])
    reset = env.reset(key=jax.random.key(9), state=state, done=done)
    kept = jax.tree_util.tree_map(lambda x: x[1:3], reset)
    _assert_trees_identical(kept, jax.tree_util.tree_map(lambda x: x[1:3], state))
    assert reset.step_count.tolist() == [0, 3, 3, 0]
    assert reset.observation[0, :2].tolist() == [0.0, 0.0]


def test_selective_reset_passes_through_wrapper_stacks():
    env = RecordEpisodeStatistics(TimeLimit(VmapWrapper(MaskedGridWorld(), num_envs=3), max_steps=50))
    state = env.reset(key=jax.random.key(0))
    state = env.step(state, _up(3))
    reset = env.reset(key=jax.random.key(1), state=state, done=jnp.array([False, True, False]))
    assert isinstance(reset, MaskedState)
    assert reset.step_count.tolist() == [1, 0, 1]


@pytest.mark.parametrize("given", ["state", "done"])
def test_selective_reset_needs_both_arguments(given):
    env = VmapWrapper(GridWorld(), num_envs=2)
    state = env.reset(key=jax.random.key(0))
    kwargs = {"state": state} if given == "state" else {"done": jnp.zeros(2, bool)}
    with pytest.raises(ValueError, match=f"needs both state= and done=; got {given}="):
        env.reset(key=jax.random.key(1), **kwargs)


def test_selective_reset_checks_done_shape():
    env = VmapWrapper(GridWorld(), num_envs=2)
    state = env.reset(key=jax.random.key(0))
    with pytest.raises(ValueError, match=r"bool array of shape \(2,\)"):
        env.reset(key=jax.random.key(1), state=state, done=jnp.zeros(3, bool))


class CostlyGridWorld(GridWorld):
    """A GridWorld that declares its reset costly, as the Brax, Playground, Craftax, XLand-MiniGrid and Jumanji
    adapters do."""

    costly_reset = True


def _played(env, num_envs, key):
    state = env.reset(key=key)
    for step_key in jax.random.split(key, 4):
        state = env.step(state, jax.random.randint(step_key, (num_envs,), 0, 4))
    return state


@pytest.mark.parametrize("finished", [0, 2, 3, 8, 13])  # none, under one batch, one batch, three rounds, every env
def test_reset_batch_resets_the_finished_envs_as_the_full_selective_reset_does(finished):
    full, batched = VmapWrapper(GridWorld(), num_envs=13), VmapWrapper(GridWorld(), num_envs=13, reset_batch=3)
    state = _played(full, 13, jax.random.key(0))
    done = jnp.zeros(13, bool).at[jax.random.permutation(jax.random.key(1), 13)[:finished]].set(True)
    reset_batched = jax.jit(lambda key, state, done: batched.reset(key=key, state=state, done=done))
    expected = full.reset(key=jax.random.key(2), state=state, done=done)
    _assert_trees_identical(reset_batched(jax.random.key(2), state, done), expected)
    assert int((expected.step_count == 0).sum()) == finished


def test_reset_batch_under_vmap_resets_each_batch_members_finished_envs():
    full, batched = VmapWrapper(GridWorld(), num_envs=8), VmapWrapper(GridWorld(), num_envs=8, reset_batch=2)
    keys = jax.random.split(jax.random.key(0), 3)
    states = jax.vmap(lambda key: _played(full, 8, key))(keys)
    done = jnp.array([[True] + [False] * 7, [True, False] * 4, [False] * 8])  # one round, two rounds, none

    def reset_each(env):
        return jax.vmap(lambda key, state, done: env.reset(key=key, state=state, done=done))(keys, states, done)

    _assert_trees_identical(jax.jit(lambda: reset_each(batched))(), reset_each(full))


def test_reset_batch_defaults_to_an_eighth_for_envs_whose_reset_is_costly():
    assert VmapWrapper(GridWorld(), num_envs=16).reset_batch is None
    assert VmapWrapper(CostlyGridWorld(), num_envs=16).reset_batch == 2
    assert VmapWrapper(TimeLimit(CostlyGridWorld(), max_steps=5), num_envs=4).reset_batch == 1
    assert VmapWrapper(CostlyGridWorld(), num_envs=16, reset_batch=5).reset_batch == 5
    assert VmapWrapper(GridWorld(), num_envs=16, reset_batch=16).reset_batch == 16


@pytest.mark.parametrize("reset_batch", [0, 17, 2.0, True])
def test_vmap_wrapper_refuses_bad_reset_batch(reset_batch):
    with pytest.raises(ValueError, match=r"reset_batch to be None or an int from 1 to num_envs \(16\)"):
        VmapWrapper(GridWorld(), num_envs=16, reset_batch=reset_batch)


@pytest.mark.parametrize("num_envs", [0, -1, 2.0, True])
def test_vmap_wrapper_refuses_bad_num_envs(num_envs):
    with pytest.raises(ValueError, match="num_envs to be an int >= 1"):
        VmapWrapper(GridWorld(), num_envs=num_envs)


def test_vmap_wrapper_refuses_wrong_action_shape_and_dtype():
    env = VmapWrapper(GridWorld(), num_envs=3)
    state = env.reset(key=jax.random.key(0))
    with pytest.raises(ValueError, match=r"expected an action of shape \(3,\).*got shape \(4,\)"):
        env.step(state, jnp.zeros(4, jnp.int32))
    with pytest.raises(ValueError, match="dtype float32"):
        env.step(state, jnp.zeros(3, jnp.float32))


@pytest.mark.parametrize("bad", [0, jnp.zeros(2), "seed"])
def test_vmap_wrapper_refuses_non_keys(bad):
    with pytest.raises(TypeError, match="expects a JAX PRNG key"):
        VmapWrapper(GridWorld(), num_envs=2).reset(key=bad)


def test_vmap_wrapper_accepts_one_key_per_env():
    env = VmapWrapper(GridWorld(), num_envs=3)
    keys = jax.random.split(jax.random.key(4), 3)
    batched = env.reset(key=keys)
    for i in range(3):
        single = GridWorld().reset(key=keys[i])
        np.testing.assert_array_equal(batched.observation[i], single.observation)
    with pytest.raises(ValueError, match="one key per env"):
        env.reset(key=jax.random.split(jax.random.key(4), 5))


def test_time_limit_truncates_at_max_steps_not_before():
    env = TimeLimit(GridWorld(), max_steps=3)
    state = env.reset(key=jax.random.key(0))
    flags = []
    for _ in range(3):
        state = env.step(state, jnp.int32(3))
        flags.append(bool(state.truncation))
    assert flags == [False, False, True]
    assert not bool(state.termination)
    with pytest.raises(ValueError, match="max_steps"):
        TimeLimit(GridWorld(), max_steps=0)


def test_time_limit_works_on_multi_agent_envs():
    env = TimeLimit(Race(), max_steps=2)
    state = env.step(env.step(env.reset(key=jax.random.key(0)), jnp.zeros(3, jnp.int32)), jnp.zeros(3, jnp.int32))
    assert bool(state.truncation) and not bool(state.termination)


def _run_auto_reset(env, num_envs, steps):
    state = env.reset(key=jax.random.key(0))

    def body(s, _):
        s = env.step(s, jnp.zeros((num_envs, 3), jnp.int32) + 1)
        return s, (s.step_count, s.done, s.agents.reward, jax.random.key_data(s.key))

    return jax.lax.scan(body, state, None, length=steps)


def test_auto_reset_inside_and_outside_vmap_agree():
    inside = VmapWrapper(AutoResetWrapper(TimeLimit(Race(), max_steps=7)), num_envs=2)
    outside = AutoResetWrapper(VmapWrapper(TimeLimit(Race(), max_steps=7), num_envs=2))
    _, (count_in, done_in, reward_in, _) = _run_auto_reset(inside, 2, 25)
    _, (count_out, done_out, reward_out, _) = _run_auto_reset(outside, 2, 25)
    # Agents move +1 per step and finish at 10, but the limit cuts every episode at 7:
    # the step count cycles 1..6 then restarts at 0 on the truncating step.
    expected = [i % 7 + 1 if (i % 7 + 1) < 7 else 0 for i in range(25)]
    assert count_in[:, 0].tolist() == expected
    np.testing.assert_array_equal(count_in, count_out)
    np.testing.assert_array_equal(done_in, done_out)
    assert float(reward_in.sum()) == float(reward_out.sum()) == 0.0


def test_auto_reset_keeps_the_terminal_reward_and_flags():
    env = AutoResetWrapper(Race())
    state = env.reset(key=jax.random.key(0))
    for _ in range(10):
        state = env.step(state, jnp.ones(3, jnp.int32))
    assert bool(state.termination)
    assert state.agents.reward.tolist() == [1.0, 1.0, 1.0]
    assert state.agents.active.tolist() == [True, True, True]
    assert state.env_state.tolist() == [0.0, 0.0, 0.0]
    assert int(state.step_count) == 0


@pytest.mark.parametrize("outside", [False, True])
def test_auto_reset_key_advances_every_step_and_through_resets(outside):
    if outside:
        env = AutoResetWrapper(VmapWrapper(TimeLimit(Race(), max_steps=3), num_envs=2))
    else:
        env = VmapWrapper(AutoResetWrapper(TimeLimit(Race(), max_steps=3)), num_envs=2)
    _, (_, done, _, keys) = _run_auto_reset(env, 2, 9)
    assert bool(done.any())
    flat = [tuple(k.reshape(-1).tolist()) for k in np.asarray(keys).reshape(9 * 2, -1)]
    assert len(set(flat)) == len(flat)


def test_episode_statistics_per_agent_returns_and_lengths():
    env = RecordEpisodeStatistics(AutoResetWrapper(VmapWrapper(Race(), num_envs=2)))
    state = env.reset(key=jax.random.key(0))
    for step in range(1, 11):
        state = env.step(state, jnp.ones((2, 3), jnp.int32))
        stats = state.info["episode"]
        assert stats.finished.tolist() == [step == 10] * 2
    assert stats.episode_return.tolist() == [[1.0, 1.0, 1.0]] * 2
    assert stats.episode_length.tolist() == [10, 10]
    assert stats.current_length.tolist() == [0, 0]
    state = env.step(state, jnp.ones((2, 3), jnp.int32))
    assert state.info["episode"].episode_length.tolist() == [10, 10]
    assert state.info["episode"].current_length.tolist() == [1, 1]


def test_episode_statistics_survive_selective_reset_inside_vmap():
    env = VmapWrapper(RecordEpisodeStatistics(TimeLimit(GridWorld(), max_steps=4)), num_envs=2)
    state = env.reset(key=jax.random.key(0))
    returns = jnp.zeros(2)
    for _ in range(4):
        state = env.step(state, jnp.array([3, 3]))
        returns = returns + state.reward
    assert state.truncation.tolist() == [True, True]
    np.testing.assert_allclose(state.info["episode"].episode_return, returns, rtol=1e-6)
    np.testing.assert_array_equal(state.info["episode"].episode_length, [4, 4])


def test_episode_statistics_outside_vmap_keep_last_episode_across_selective_reset():
    env = RecordEpisodeStatistics(VmapWrapper(TimeLimit(GridWorld(), max_steps=2), num_envs=2))
    state = env.reset(key=jax.random.key(0))
    state = env.step(env.step(state, jnp.array([3, 3])), jnp.array([3, 3]))
    finished = state.info["episode"]
    reset = env.reset(key=jax.random.key(1), state=state, done=state.done)
    np.testing.assert_array_equal(reset.info["episode"].episode_return, finished.episode_return)
    assert reset.info["episode"].current_length.tolist() == [0, 0]


def test_wrapper_forwards_spaces_statically_and_other_attributes_at_runtime():
    class Tagged(GridWorld):
        label = "grid"

    env = VmapWrapper(TimeLimit(Tagged(), max_steps=3), num_envs=2)
    assert env.action_space == GridWorld.action_space
    assert env.label == "grid"
    assert env.max_steps == 3
    assert isinstance(env.unwrapped, Tagged)
    with pytest.raises(AttributeError):
        env.not_there  # noqa: B018
    assert VmapWrapper(GridWorld(), num_envs=2).num_agents == 1


def test_custom_wrapper_subclass_preserves_state_type():
    class RewardScale(Wrapper):
        def step(self, state, action):
            state = self.env.step(state, action)
            return dataclasses.replace(state, reward=state.reward * 2)

    env = RewardScale(MaskedGridWorld())
    state = env.step(env.reset(key=jax.random.key(0)), jnp.int32(0))
    assert isinstance(state, MaskedState)
