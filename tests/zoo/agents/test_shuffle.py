"""PPO's minibatch order (`shuffle.permutation`): a uniformly random permutation, jax's own for small batches."""

import jax
import numpy as np
import pytest

from parallax_zoo.agents.shuffle import permutation, rounds_needed


@pytest.mark.parametrize("n", [512, 2048, 5000])
def test_every_row_comes_exactly_once_and_keys_give_different_orders(n):
    orders = np.asarray(jax.jit(jax.vmap(lambda key: permutation(key, n)))(jax.random.split(jax.random.key(0), 4)))
    assert orders.dtype == np.int32
    for order in orders:
        np.testing.assert_array_equal(np.sort(order), np.arange(n))
    assert len({order.tobytes() for order in orders}) == 4
    assert np.mean(orders[0] == np.arange(n)) < 0.01  # not the identity, nor close to it


def test_the_order_is_uniform_over_positions_and_forgets_the_input_order():
    n, draws = 2048, 512  # two rounds of packed sorts
    orders = np.asarray(jax.jit(jax.vmap(lambda key: permutation(key, n)))(jax.random.split(jax.random.key(1), draws)))
    # Where row i lands: uniform over 0..n-1 for every i, so its mean over draws is (n-1)/2 within a few standard
    # errors.
    landing = np.argsort(orders, axis=1)
    standard_error = n / np.sqrt(12 * draws)
    assert np.max(np.abs(landing.mean(axis=0) - (n - 1) / 2)) < 5 * standard_error
    # Neighbours in the input are not neighbours in the output (ties in one round kept them together).
    gaps = np.abs(np.diff(landing, axis=1))
    assert np.mean(gaps == 1) < 3 * 2 / n + 0.001
    # And the first row lands in each eighth of the order about equally often.
    counts = np.bincount(landing[:, 0] * 8 // n, minlength=8)
    assert counts.min() > draws / 8 / 2


def test_rounds_follow_jax_random_permutation_rule_with_the_bits_left_beside_the_position():
    assert rounds_needed(512, 32) == 1 and rounds_needed(512, 32 - 9) == 2
    assert rounds_needed(2048, 32) == 2
    assert rounds_needed(2048, 32 - 11) == 2 and rounds_needed(32768, 32 - 15) == 3


def test_small_batches_are_shuffled_by_packed_sorts_too():
    # PPO's CartPole minibatches come from 512 rows: packed keys, not jax's two-array sort.
    order = np.asarray(permutation(jax.random.key(2), 512))
    np.testing.assert_array_equal(np.sort(order), np.arange(512))
    assert not np.array_equal(order, np.asarray(jax.random.permutation(jax.random.key(2), 512)))
    compiled = jax.jit(lambda key: permutation(key, 512)).lower(jax.random.key(2)).compile().as_text()
    sorts = [line for line in compiled.splitlines() if " sort(" in line]
    assert len(sorts) == 2 and all(line.split("=")[1].strip().startswith("u32[512]") for line in sorts), sorts
