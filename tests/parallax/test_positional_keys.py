"""`env.reset(key)` and `space.sample(key)` with the key passed positionally, as gymnax and Brax code writes them,
give the same state as `key=` on the zoo's native envs, the protocol's wrappers and the adapters."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

import parallax_zoo
from parallax import AutoResetWrapper, RecordEpisodeStatistics, TimeLimit, ValidateActions, VmapWrapper
from parallax.adapters.gymnax import GymnaxAdapter
from parallax_zoo.envs.gridworld import GridWorld


def plain(leaf):
    """A leaf as an array to compare: a typed key as its data."""
    return jax.random.key_data(leaf) if jnp.issubdtype(leaf.dtype, jax.dtypes.prng_key) else leaf


def same(left, right) -> bool:
    leaves = zip(jax.tree.leaves(left), jax.tree.leaves(right), strict=True)
    return all(bool(jnp.array_equal(plain(a), plain(b), equal_nan=True)) for a, b in leaves)


NATIVE = [
    "GridWorld-v0",
    "GridWorld-Masked-v0",
    "Race-v0",
    "RespawnRace-v0",
    "TeamRace-v0",
    "TicTacToe-v0",
    "ConnectFour-v0",
    "Othello-v0",
]


@pytest.mark.parametrize("env_id", NATIVE)
def test_native_envs_take_the_key_positionally(env_id):
    env = parallax_zoo.make(env_id).unwrapped
    key = jax.random.key(3)
    assert same(env.reset(key), env.reset(key=key))


def test_every_wrapper_takes_the_key_positionally():
    key = jax.random.key(4)
    stacks = [
        TimeLimit(GridWorld(), max_steps=5),
        AutoResetWrapper(GridWorld()),
        RecordEpisodeStatistics(GridWorld()),
        ValidateActions(GridWorld()),
        VmapWrapper(RecordEpisodeStatistics(GridWorld()), num_envs=3),
        parallax_zoo.make("Race-v0"),
    ]
    for env in stacks:
        assert same(env.reset(key), env.reset(key=key)), env
    batched = VmapWrapper(GridWorld(), num_envs=3)
    state = batched.reset(key)
    again = batched.reset(jax.random.key(5), state=state, done=jnp.array([True, False, True]))
    assert same(again, batched.reset(key=jax.random.key(5), state=state, done=jnp.array([True, False, True])))


def test_an_adapter_takes_the_key_positionally():
    adapter = parallax_zoo.make("gymnax/CartPole-v1")
    assert isinstance(adapter, GymnaxAdapter)
    key = jax.random.key(6)
    assert same(adapter.reset(key), adapter.reset(key=key))
    env = AutoResetWrapper(TimeLimit(adapter, max_steps=50))
    assert same(env.reset(key), env.reset(key=key))
    state = env.step(env.reset(key), env.action_space.sample(key))
    assert int(state.step_count) == 1


def test_spaces_sample_with_the_key_positionally():
    key = jax.random.key(7)
    for env_id in ("GridWorld-v0", "Race-v0", "gymnax/Pendulum-v1"):
        space = parallax_zoo.make(env_id).action_space
        assert same(space.sample(key), space.sample(key=key)), env_id


def test_a_key_that_is_not_a_key_says_what_to_pass():
    with pytest.raises(TypeError, match=r"expects a JAX PRNG key \(jax.random.key\(seed\)\)"):
        parallax_zoo.make("gymnax/CartPole-v1").reset(0)
