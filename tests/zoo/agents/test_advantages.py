"""Advantage estimation (docs/baselines.md) against values worked out by hand.

Every hand case uses gamma = lambda = 0.5, so gamma * lambda = 0.25, and the
same base trajectory: values V = [1, 2, 3], rewards r = [1, 1, 1], last_value 4.
"""

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parallax_zoo.agents.advantages import estimate_advantages

GAMMA = LAMBDA = 0.5
V = jnp.array([1.0, 2.0, 3.0])
R = jnp.array([1.0, 1.0, 1.0])
LAST = jnp.asarray(4.0)
NO = jnp.array([False, False, False])
AT_1 = jnp.array([False, True, False])
UNUSED_BOOTSTRAP = jnp.array([100.0, 100.0, 100.0])


def estimate(**kwargs: Any):
    args: dict[str, Any] = dict(
        value=V,
        reward=R,
        termination=NO,
        truncation=NO,
        bootstrap_value=UNUSED_BOOTSTRAP,
        last_value=LAST,
        gamma=GAMMA,
        gae_lambda=LAMBDA,
    )
    args.update(kwargs)
    return estimate_advantages(**args)


def test_no_boundaries_is_plain_gae():
    # t=2: delta = 1 + 0.5*4 - 3 = 0                       A2 = 0
    # t=1: delta = 1 + 0.5*3 - 2 = 0.5                     A1 = 0.5 + 0.25*0 = 0.5
    # t=0: delta = 1 + 0.5*2 - 1 = 1                       A0 = 1 + 0.25*0.5 = 1.125
    targets, advantages = estimate()
    np.testing.assert_allclose(advantages, [1.125, 0.5, 0.0])
    np.testing.assert_allclose(targets, [2.125, 2.5, 3.0])


def test_termination_suppresses_bootstrap_and_cuts_the_trace():
    # t=2: delta = 1 + 0.5*4 - 3 = 0                       A2 = 0
    # t=1: terminal, no bootstrap: delta = 1 - 2 = -1      A1 = -1
    # t=0: delta = 1 + 0.5*V1 - 1 = 1                      A0 = 1 + 0.25*(-1) = 0.75
    targets, advantages = estimate(termination=AT_1)
    np.testing.assert_allclose(advantages, [0.75, -1.0, 0.0])
    np.testing.assert_allclose(targets, [1.75, 1.0, 3.0])


def test_truncation_bootstraps_from_the_pre_reset_value():
    # bootstrap_value[1] = 6 is V(pre-reset observation); V[2] = 3 belongs to the next episode.
    # t=2: A2 = 0
    # t=1: delta = 1 + 0.5*6 - 2 = 2, trace cut              A1 = 2
    # t=0: delta = 1 + 0.5*2 - 1 = 1                       A0 = 1 + 0.25*2 = 1.5
    targets, advantages = estimate(truncation=AT_1, bootstrap_value=jnp.array([100.0, 6.0, 100.0]))
    np.testing.assert_allclose(advantages, [1.5, 2.0, 0.0])
    np.testing.assert_allclose(targets, [2.5, 4.0, 3.0])


def test_truncation_on_the_last_step_uses_the_bootstrap_not_last_value():
    # t=2: truncated, delta = 1 + 0.5*8 - 3 = 2              A2 = 2
    # t=1: delta = 1 + 0.5*3 - 2 = 0.5                     A1 = 0.5 + 0.25*2 = 1
    # t=0: delta = 1 + 0.5*2 - 1 = 1                       A0 = 1 + 0.25*1 = 1.25
    truncated_last = jnp.array([False, False, True])
    _, advantages = estimate(truncation=truncated_last, bootstrap_value=jnp.array([100.0, 100.0, 8.0]))
    np.testing.assert_allclose(advantages, [1.25, 1.0, 2.0])


def test_termination_wins_over_truncation_on_the_same_step():
    # Same numbers as the termination case: the bootstrap value 6 must be ignored.
    _, advantages = estimate(termination=AT_1, truncation=AT_1, bootstrap_value=jnp.array([100.0, 6.0, 100.0]))
    np.testing.assert_allclose(advantages, [0.75, -1.0, 0.0])


def _two_slots(slot1_value, slot1_reward):
    """Slot 0 is the plain case; slot 1 dies on step 0, is inactive at t=1 and respawns at t=2."""
    value = jnp.stack([V, slot1_value], axis=-1)
    reward = jnp.stack([R, slot1_reward], axis=-1)
    active = jnp.array([[True, True], [True, False], [True, True]])
    termination = jnp.array([[False, True], [False, False], [False, False]])
    return estimate(
        value=value,
        reward=reward,
        active=active,
        termination=termination,
        truncation=jnp.zeros((3, 2), bool),
        bootstrap_value=jnp.full((3, 2), 100.0),
        last_value=jnp.array([4.0, 6.0]),
    )


def test_inactive_slots_have_zero_advantage_and_do_not_leak():
    # Slot 1: V = [1, 9, 3], r = [2, 7, 1], last_value 6, active = [1, 0, 1], died on step 0.
    # t=2: active, delta = 1 + 0.5*6 - 3 = 1                A2 = 1
    # t=1: inactive: delta = 0 and the trace is masked      A1 = 0, target = V1 = 9
    # t=0: terminal (died): delta = 2 - 1 = 1               A0 = 1
    targets, advantages = _two_slots(jnp.array([1.0, 9.0, 3.0]), jnp.array([2.0, 7.0, 1.0]))
    np.testing.assert_allclose(advantages[:, 0], [1.125, 0.5, 0.0])
    np.testing.assert_allclose(advantages[:, 1], [1.0, 0.0, 1.0])
    np.testing.assert_allclose(targets[:, 1], [2.0, 9.0, 4.0])
    # Garbage in the inactive step (t=1) changes nothing else.
    perturbed_targets, perturbed = _two_slots(jnp.array([1.0, -50.0, 3.0]), jnp.array([2.0, 123.0, 1.0]))
    np.testing.assert_allclose(perturbed, advantages)
    np.testing.assert_allclose(
        np.delete(np.asarray(perturbed_targets), 1, axis=0), np.delete(np.asarray(targets), 1, axis=0)
    )


def test_vtrace_clips_ratios():
    # ratios [2, 0.5, 1], caps 1: rho = c = [1, 0.5, 1]
    # t=2: delta = 1*(1 + 0.5*4 - 3) = 0                    A2 = 0
    # t=1: delta = 0.5*(1 + 0.5*3 - 2) = 0.25               A1 = 0.25 + 0.25*0.5*0 = 0.25
    # t=0: delta = 1*(1 + 0.5*2 - 1) = 1                    A0 = 1 + 0.25*1*0.25 = 1.0625
    ratio = jnp.array([2.0, 0.5, 1.0])
    targets, advantages = estimate(ratio=ratio, rho_clip=1.0, c_clip=1.0)
    np.testing.assert_allclose(advantages, [1.0625, 0.25, 0.0])
    np.testing.assert_allclose(targets, [2.0625, 2.25, 3.0])
    # Uncapped, rho0 = c0 = 2: A0 = 2*(1) + 0.25*2*0.25 = 2.125
    _, uncapped = estimate(ratio=ratio, rho_clip=np.inf, c_clip=np.inf)
    np.testing.assert_allclose(uncapped, [2.125, 0.25, 0.0])


def test_vtrace_with_unit_ratios_equals_gae_by_hand():
    _, gae = estimate(termination=AT_1)
    _, vtrace = estimate(termination=AT_1, ratio=jnp.ones(3), rho_clip=1.0, c_clip=1.0)
    np.testing.assert_allclose(vtrace, gae)
    np.testing.assert_allclose(vtrace, [0.75, -1.0, 0.0])


def _reference(value, reward, term, trunc, boot, last, active, ratio, gamma, lam, rho_clip, c_clip):
    """The advantage recurrence (docs/baselines.md) as a plain Python loop."""
    steps = len(value)
    advantages = np.zeros(steps)
    following = 0.0
    for t in reversed(range(steps)):
        next_value = last if t == steps - 1 else value[t + 1]
        bootstrap = boot[t] if trunc[t] else next_value
        rho, c = min(ratio[t], rho_clip), min(ratio[t], c_clip)
        delta = active[t] * rho * (reward[t] + gamma * (1 - term[t]) * bootstrap - value[t])
        following = delta + gamma * lam * active[t] * (1 - (term[t] or trunc[t])) * c * following
        advantages[t] = following
    return advantages


floats = st.floats(-5.0, 5.0, allow_nan=False, width=32)


@st.composite
def trajectories(draw):
    steps = draw(st.integers(1, 12))
    vec = lambda elements: np.asarray(draw(st.lists(elements, min_size=steps, max_size=steps)))  # noqa: E731
    return dict(
        value=vec(floats),
        reward=vec(floats),
        term=vec(st.booleans()),
        trunc=vec(st.booleans()),
        boot=vec(floats),
        last=draw(floats),
        active=vec(st.booleans()),
        ratio=vec(st.floats(0.125, 3.0, width=32)),
        gamma=draw(st.floats(0.0, 1.0)),
        lam=draw(st.floats(0.0, 1.0)),
    )


def _ours(case, ratio=None, rho_clip=1.0, c_clip=1.0):
    """Ours on one drawn case, jitted: the floats are traced, so each trajectory length compiles once."""
    return _estimate_jitted(
        jnp.asarray(case["value"], jnp.float32),
        jnp.asarray(case["reward"], jnp.float32),
        jnp.asarray(case["term"]),
        jnp.asarray(case["trunc"]),
        jnp.asarray(case["boot"], jnp.float32),
        jnp.asarray(case["last"], jnp.float32),
        gamma=case["gamma"],
        gae_lambda=case["lam"],
        active=jnp.asarray(case["active"]),
        ratio=ratio,
        rho_clip=rho_clip,
        c_clip=c_clip,
    )


_estimate_jitted = jax.jit(estimate_advantages)


@settings(max_examples=40, deadline=None)
@given(trajectories(), st.floats(1.0, 10.0))
def test_unit_ratio_vtrace_equals_gae(case, cap):
    _, gae = _ours(case)
    _, vtrace = _ours(case, ratio=jnp.ones(len(case["value"])), rho_clip=cap, c_clip=cap)
    np.testing.assert_allclose(vtrace, gae, rtol=1e-6, atol=1e-6)


@settings(max_examples=40, deadline=None)
@given(trajectories(), st.floats(0.5, 2.0), st.floats(0.5, 2.0))
def test_matches_the_recurrence_written_as_a_loop(case, rho_clip, c_clip):
    _, ours = _ours(case, ratio=jnp.asarray(case["ratio"], jnp.float32), rho_clip=rho_clip, c_clip=c_clip)
    expected = _reference(
        case["value"],
        case["reward"],
        case["term"],
        case["trunc"],
        case["boot"],
        case["last"],
        case["active"].astype(float),
        case["ratio"],
        case["gamma"],
        case["lam"],
        rho_clip,
        c_clip,
    )
    np.testing.assert_allclose(ours, expected, rtol=1e-4, atol=1e-4)


def test_gradients_are_stopped():
    grad = jax.grad(lambda v: estimate(value=v)[1].sum() + estimate(value=v)[0].sum())(V)
    np.testing.assert_array_equal(grad, jnp.zeros(3))


@pytest.mark.parametrize("shape", [(3,), (3, 4), (3, 4, 2)])
def test_any_trailing_batch_shape(shape):
    value = jnp.broadcast_to(V.reshape((3,) + (1,) * (len(shape) - 1)), shape)
    reward = jnp.ones(shape)
    flags = jnp.zeros(shape, bool)
    _, advantages = estimate_advantages(
        value, reward, flags, flags, jnp.zeros(shape), jnp.full(shape[1:], 4.0), gamma=GAMMA, gae_lambda=LAMBDA
    )
    assert advantages.shape == shape
    np.testing.assert_allclose(advantages.reshape(3, -1), np.tile([[1.125], [0.5], [0.0]], (1, advantages[0].size)))
