"""The state pytrees and protocols of `parallax.core` (docs/protocol.md)."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import jax
import jax.numpy as jnp
import pytest
from helpers.example_envs import GridWorld, MaskedGridWorld, MaskedState, Race

from parallax import Agents, Env, MARLEnv, MARLState, State, TimeLimit, VmapWrapper
from parallax.core import fold_in_key, is_key, require_key


def _state(**overrides):
    fields = dict(
        env_state=jnp.zeros(2),
        observation=jnp.zeros(4),
        reward=jnp.float32(0.0),
        termination=jnp.bool_(False),
        truncation=jnp.bool_(False),
        info={},
        step_count=jnp.int32(0),
        key=jax.random.key(0),
    )
    fields.update(overrides)
    return State(**fields)


@pytest.mark.parametrize(
    ("termination", "truncation", "done"),
    [(False, False, False), (True, False, True), (False, True, True), (True, True, True)],
)
def test_done_is_termination_or_truncation(termination, truncation, done):
    state = _state(termination=jnp.bool_(termination), truncation=jnp.bool_(truncation))
    assert bool(state.done) is done


def test_state_missing_field_names_it():
    with pytest.raises(TypeError, match="key"):
        State(
            env_state=0,
            observation=jnp.zeros(4),
            reward=jnp.float32(0.0),
            termination=jnp.bool_(False),
            truncation=jnp.bool_(False),
            info={},
            step_count=jnp.int32(0),
        )


def test_state_is_a_pytree_with_every_field():
    leaves = jax.tree_util.tree_leaves(_state(info={"x": jnp.ones(3)}))
    # env_state, observation, reward, termination, truncation, info["x"], step_count, key
    assert len(leaves) == 8


def test_marl_state_done_and_optional_fields():
    state = Race().reset(key=jax.random.key(0))
    assert isinstance(state, MARLState)
    assert state.agents.action_mask is None and state.global_observation is None
    assert not bool(state.done)
    done = dataclasses.replace(state, termination=jnp.bool_(True))
    assert bool(done.done)


def test_state_subclass_survives_jit_vmap_scan_and_wrappers():
    env = VmapWrapper(TimeLimit(MaskedGridWorld(), max_steps=5), num_envs=3)
    state = jax.jit(lambda k: env.reset(key=k))(jax.random.key(0))
    assert isinstance(state, MaskedState)
    assert state.action_mask.shape == (3, 4)

    def body(s, _):
        s = env.step(s, jnp.zeros(3, jnp.int32))
        return s, s.action_mask

    final, masks = jax.lax.scan(body, state, None, length=4)
    assert isinstance(final, MaskedState)
    assert masks.shape == (4, 3, 4)
    # Moving "up" (+y) four times from y=0 reaches the top edge: "up" becomes illegal.
    assert not bool(final.action_mask[0, 0])
    assert bool(final.action_mask[0, 1])


def test_agents_subclass_survives_vmap():
    @jax.tree_util.register_dataclass
    @dataclasses.dataclass
    class TeamAgents(Agents):
        team: jax.Array

    agents = TeamAgents(
        observation=jnp.zeros(4), active=jnp.ones(4, bool), reward=jnp.zeros(4), team=jnp.array([0, 0, 1, 1])
    )
    batched = jax.vmap(lambda a: a)(jax.tree_util.tree_map(lambda x: jnp.stack([x, x]), agents))
    assert isinstance(batched, TeamAgents)
    assert batched.team.shape == (2, 4)


def test_examples_satisfy_the_runtime_protocols():
    assert isinstance(GridWorld(), Env)
    assert isinstance(Race(), MARLEnv)
    assert not isinstance(GridWorld(), MARLEnv)


@pytest.mark.parametrize("bad", [0, 1.5, "key", jnp.zeros(3), jnp.zeros(2, jnp.float32), None])
def test_require_key_rejects_non_keys(bad):
    assert not is_key(bad)
    with pytest.raises(TypeError, match=r"expects a JAX PRNG key.*jax\.random\.key"):
        require_key(bad, "reset")


def test_require_key_accepts_typed_and_raw_keys():
    require_key(jax.random.key(0), "reset")
    require_key(jax.random.PRNGKey(0), "reset")
    require_key(jax.random.split(jax.random.key(0), 3), "reset")


def test_fold_in_key_handles_batches_like_per_key_folds():
    keys = jax.random.split(jax.random.key(1), 3)
    folded = fold_in_key(keys, 7)
    assert folded.shape == (3,)
    for i in range(3):
        expected = jax.random.fold_in(keys[i], 7)
        assert jnp.array_equal(jax.random.key_data(folded[i]), jax.random.key_data(expected))
    raw = fold_in_key(jax.random.PRNGKey(2), 7)
    assert jnp.array_equal(raw, jax.random.fold_in(jax.random.PRNGKey(2), 7))


def test_import_parallax_stays_light():
    code = (
        "import sys, parallax, parallax.adapters, parallax.checker\n"
        "heavy = sorted(m for m in ('flax', 'optax', 'gymnax', 'brax', 'mujoco', 'mujoco_playground', "
        "'huggingface_hub', 'yaml', 'safetensors') if m in sys.modules)\n"
        "print(heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
