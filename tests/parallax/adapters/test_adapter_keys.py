"""The adapters' keys (`parallax/adapters/base.py`, "Keys"): a reset hashes nothing, a step hashes once.

The keys a step derives sit at counters that the suite's own draws from the
same key never reach, so no key is used twice; the suites' steps are
checked against the suites themselves in each adapter's own tests.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from parallax.adapters.base import KEY_COUNTER, next_and_step_key, next_key

HASHES = {"random_split", "random_fold_in", "random_bits", "threefry2x32"}
"""The primitives that each run one hash (a batch of counters at once) over a key."""


def _hashes(fn, *args) -> int:
    """How many hashes the traced `fn(*args)` runs, nested calls included."""

    def count(jaxpr) -> int:
        total = 0
        for eqn in jaxpr.eqns:
            total += eqn.primitive.name in HASHES
            for value in eqn.params.values():
                inner = getattr(value, "jaxpr", value)
                if hasattr(inner, "eqns"):
                    total += count(inner)
        return total

    return count(jax.make_jaxpr(fn)(*args).jaxpr)


def test_step_keys_are_new_keys():
    key = jax.random.key(7)
    following, step_key = next_and_step_key(key)
    drawn = jax.random.key_data(jax.random.split(key, 4096))
    derived = np.stack([jax.random.key_data(k) for k in (following, step_key, next_key(key))])
    np.testing.assert_array_equal(derived[0], derived[2])
    assert not np.array_equal(derived[0], derived[1])
    assert not np.any(np.all(drawn[None, :, :] == derived[:, None, :], axis=-1))
    np.testing.assert_array_equal(derived[0], jax.random.key_data(jax.random.fold_in(key, KEY_COUNTER)))


def test_raw_keys_work_as_typed_ones():
    raw, typed = jax.random.PRNGKey(3), jax.random.wrap_key_data(jax.random.PRNGKey(3))
    np.testing.assert_array_equal(next_and_step_key(raw)[1], jax.random.key_data(next_and_step_key(typed)[1]))


def _pgx_connect_four():
    pgx = pytest.importorskip("pgx")
    from parallax.adapters.pgx import PgxAdapter

    game = pgx.make("connect_four")
    return PgxAdapter(game), game.init, lambda key, state: game.step(state, jnp.int32(0)), jnp.zeros((2,), jnp.int32)


def _jaxmarl_spread():
    jaxmarl = pytest.importorskip("jaxmarl")
    from parallax.adapters.jaxmarl import JaxMARLAdapter

    raw = jaxmarl.make("MPE_simple_spread_v3")
    actions = {agent: jnp.int32(0) for agent in raw.agents}
    return (
        JaxMARLAdapter(raw),
        raw.reset,
        lambda key, state: raw.step_env(key, state, actions),
        jnp.zeros((3,), jnp.int32),
    )


@pytest.mark.parametrize("suite", [_pgx_connect_four, _jaxmarl_spread], ids=["pgx", "jaxmarl"])
def test_a_reset_hashes_no_more_than_the_suites_and_a_step_once_more(suite):
    env, suite_reset, suite_step, action = suite()
    key = jax.random.key(0)
    assert _hashes(env._reset_unchecked, key) == _hashes(suite_reset, key)
    state = env.reset(key=key)
    assert _hashes(env._step_unchecked, state, action) == _hashes(suite_step, key, state.env_state) + 1
    assert not np.array_equal(jax.random.key_data(env.step(state, action).key), jax.random.key_data(state.key))
