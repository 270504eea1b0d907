"""The API a user meets first: `make(max_steps=)` and its bounds for every suite, short reprs, `dir(parallax_zoo)`."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import pytest

import parallax_zoo
from parallax_zoo.catalogue.signatures import InvalidKwargError
from parallax_zoo.judging.recording import random_act


@pytest.mark.parametrize("env_id", ["Race-v0", "gymnax/CartPole-v1"])
def test_make_takes_max_steps_and_carries_its_spec(env_id):
    env = parallax_zoo.make(env_id, max_steps=3)
    assert env.spec.id == env_id and env.spec.max_steps == 3
    state = env.reset(key=jax.random.key(0))
    for _ in range(3):
        assert not bool(jnp.all(state.done))
        state = env.step(state, random_act(env)(state, jax.random.key(1)))
    assert bool(jnp.all(state.truncation | state.termination))
    assert parallax_zoo.make(env_id).spec == parallax_zoo.spec(env_id)
    with pytest.raises(InvalidKwargError, match="max_steps must be an int from 1 to 2,147,483,647"):
        parallax_zoo.make(env_id, max_steps=0)


@pytest.mark.parametrize("namespace", [None, "gymnax", "brax", "xminigrid", "jumanji", "jaxmarl", "craftax"])
def test_a_time_limit_past_int32_is_refused_by_make_for_every_suite(namespace):
    """Steps are counted in int32: 2**31 would overflow at the first step (or in the suite's own make)."""
    env_id = parallax_zoo.list_envs(namespace=namespace)[0] if namespace else "Race-v0"
    message = rf"{re.escape(env_id)}: max_steps must be an int from 1 to 2,147,483,647 .*got 2147483648"
    with pytest.raises(InvalidKwargError, match=message):
        parallax_zoo.make(env_id, max_steps=2**31)


def test_reprs_are_short_and_say_what_matters():
    env_spec = parallax_zoo.spec("TicTacToe-v0")
    line = repr(env_spec)
    assert "\n" not in line and len(line) < 200 and "kind=native" in line and "agents=2" in line
    assert "sha256" not in line and "sha256" in env_spec.describe()
    assert repr(parallax_zoo.make("TicTacToe-v0").unwrapped) == "TicTacToe()"
    assert repr(parallax_zoo.make("Othello-v0").unwrapped) == "Othello()"
    policy = parallax_zoo.load_baseline("TicTacToe-v0")
    shown = repr(policy)
    assert f"{policy.num_parameters:,} parameters" in shown and "\n" not in shown and "Array" not in shown


def test_dir_shows_the_public_api():
    names = dir(parallax_zoo)
    for name in ("load_baseline", "evaluate", "make", "spec", "list_envs", "leaderboard", "__version__"):
        assert name in names
    for name in ("importlib", "Any", "TYPE_CHECKING", "sys"):
        assert name not in names
