"""Spaces: sampling, `contains`, hashing, stacking, and `check_action`."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parallax import Box, Discrete, MultiBinary, MultiDiscrete, PyTreeSpace, stack_space
from parallax.spaces import check_action

SPACES = [
    Discrete(5),
    Discrete(3, shape=(2,)),
    Box(0.0, 4.0, (4,)),
    Box(np.array([-1.0, 0.0]), np.array([1.0, 10.0])),
    Box(-np.inf, np.inf, (3,)),
    Box(0.0, np.inf, (3,)),
    Box(-np.inf, 0.0, (3,)),
    Box(-3, 3, (2,), jnp.int32),
    MultiDiscrete([2, 3, 4]),
    MultiBinary(5),
    PyTreeSpace({"position": Box(-1.0, 1.0, (2,)), "goal": Discrete(4)}),
]


@pytest.mark.parametrize("space", SPACES, ids=repr)
@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_samples_are_contained_and_finite(space, seed):
    sample = space.sample(key=jax.random.key(seed))
    assert bool(space.contains(sample))
    for leaf in jax.tree_util.tree_leaves(sample):
        assert bool(jnp.all(jnp.isfinite(leaf)))
    assert jax.tree_util.tree_map(lambda x: x.shape, sample) == space.shape
    assert jax.tree_util.tree_map(lambda x: x.dtype, sample) == space.dtype


@pytest.mark.parametrize("space", SPACES, ids=repr)
def test_contains_is_jit_safe(space):
    sample = space.sample(key=jax.random.key(0))
    assert bool(jax.jit(space.contains)(sample))


@pytest.mark.parametrize(
    ("space", "outside"),
    [
        (Discrete(5), jnp.int32(5)),
        (Discrete(5), jnp.int32(-1)),
        (Discrete(5), jnp.float32(1.0)),
        (Discrete(5), jnp.zeros(2, jnp.int32)),
        (Box(0.0, 4.0, (4,)), jnp.full(4, 4.5)),
        (Box(0.0, 4.0, (4,)), jnp.zeros(3)),
        (Box(np.array([-1.0, 0.0]), np.array([1.0, 10.0])), jnp.array([0.0, -0.5])),
        (MultiDiscrete([2, 3]), jnp.array([1, 3])),
        (MultiBinary(3), jnp.array([0, 2, 1])),
        (PyTreeSpace({"a": Discrete(2)}), {"b": jnp.int32(0)}),
    ],
)
def test_contains_rejects_outside_values(space, outside):
    assert not bool(space.contains(outside))


@pytest.mark.parametrize("space", SPACES, ids=repr)
def test_spaces_are_hashable_comparable_and_static(space):
    twin = stack_space(space, 2)
    assert space == space and hash(space) == hash(space)
    assert twin == stack_space(space, 2) and hash(twin) == hash(stack_space(space, 2))
    assert space != twin

    static = jax.jit(lambda x, s: x + 1, static_argnums=1)
    assert int(static(jnp.int32(1), space)) == 2


def test_equal_spaces_built_separately_share_a_jit_cache_entry():
    traces = []

    def f(x, space):
        traces.append(space)
        return x

    g = jax.jit(f, static_argnums=1)
    g(1.0, Box(0.0, 1.0, (3,)))
    g(1.0, Box(np.zeros(3), np.ones(3)))
    g(1.0, Box(0.0, 2.0, (3,)))
    assert len(traces) == 2


def test_box_keeps_per_dimension_bounds():
    box = Box(np.array([-1.0, 0.0]), np.array([1.0, 10.0]))
    assert box.shape == (2,)
    assert box.low.tolist() == [-1.0, 0.0] and box.high.tolist() == [1.0, 10.0]
    with pytest.raises(ValueError, match="low <= high"):
        Box(1.0, 0.0, (2,))


def test_unbounded_box_samples_finite_values_in_bulk():
    box = Box(-np.inf, np.inf, (1000,))
    half = Box(np.float32(np.finfo(np.float32).min), np.float32(np.finfo(np.float32).max), (1000,))
    for space in (box, half):
        sample = space.sample(key=jax.random.key(3))
        assert bool(jnp.all(jnp.isfinite(sample)))


@pytest.mark.parametrize(
    ("space", "stacked_shape"),
    [
        (Discrete(4), (3,)),
        (Box(0.0, 1.0, (2,)), (3, 2)),
        (MultiDiscrete([2, 5]), (3, 2)),
        (MultiBinary(4), (3, 4)),
    ],
)
def test_stack_space_leads_with_the_count(space, stacked_shape):
    stacked = stack_space(space, 3)
    assert stacked.shape == stacked_shape
    assert stacked.dtype == space.dtype
    sample = stacked.sample(key=jax.random.key(0))
    assert bool(stacked.contains(sample))
    assert all(bool(space.contains(row)) for row in sample)


def test_stacked_discrete_keeps_n_for_network_sizes():
    stacked = stack_space(Discrete(7), 2)
    assert stacked.n == 7 and stacked.shape == (2,)


def test_stack_space_of_pytree_space_stacks_every_leaf():
    stacked = stack_space(PyTreeSpace({"a": Box(0.0, 1.0, (2,)), "b": Discrete(3)}), 4)
    assert stacked.shape == {"a": (4, 2), "b": (4,)}


def test_stack_space_rejects_unknown_types_naming_them():
    class Strange:
        shape = ()
        dtype = jnp.float32

    with pytest.raises(TypeError, match="Strange.*Discrete, Box, MultiDiscrete, MultiBinary and PyTreeSpace"):
        stack_space(Strange(), 2)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="num >= 1"):
        stack_space(Discrete(2), 0)


def test_check_action_names_expected_and_found():
    with pytest.raises(ValueError, match=r"expected an action of shape \(8,\) and dtype int32.*got shape \(8, 1\)"):
        check_action(Discrete(4), jnp.zeros((8, 1), jnp.int32), (8,), "VmapWrapper.step")
    with pytest.raises(ValueError, match="got shape \\(\\) and dtype float32"):
        check_action(Discrete(4), jnp.float32(1.0))
    check_action(Discrete(4), jnp.int32(1))
    check_action(Box(0.0, 1.0, (2,)), jnp.zeros(2))
    with pytest.raises(ValueError, match="structure"):
        check_action(PyTreeSpace({"a": Discrete(2)}), {"b": jnp.int32(0)})


@pytest.mark.parametrize("bad", [lambda: Discrete(0), lambda: MultiDiscrete([2, 0]), lambda: PyTreeSpace({})])
def test_invalid_space_parameters_are_refused(bad):
    with pytest.raises(ValueError):
        bad()
