"""Checked by pyright (tests/project/test_typing.py): state types survive wrapper stacks."""

from typing import assert_type

import jax
import jax.numpy as jnp
from helpers.example_envs import GridWorld, MaskedGridWorld, MaskedState, Race
from jaxtyping import Array

from parallax import (
    AutoResetWrapper,
    Env,
    MARLEnv,
    MARLState,
    RecordEpisodeStatistics,
    State,
    TimeLimit,
    VmapWrapper,
)

masked_env: Env[MaskedState] = MaskedGridWorld()
plain_env: Env = GridWorld()
assert_type(plain_env.reset(key=jax.random.key(0)), State)
race_env: MARLEnv = Race()

stack = VmapWrapper(TimeLimit(MaskedGridWorld(), max_steps=10), num_envs=4)
state = stack.reset(key=jax.random.key(0))
assert_type(state, MaskedState)
mask: Array = state.action_mask
state = stack.step(state, jnp.zeros(4, jnp.int32))
assert_type(state, MaskedState)
selective = stack.reset(key=jax.random.key(1), state=state, done=state.done)
assert_type(selective, MaskedState)
num_envs: int = stack.num_envs

deep = RecordEpisodeStatistics(AutoResetWrapper(VmapWrapper(TimeLimit(MaskedGridWorld(), 10), num_envs=2)))
assert_type(deep.reset(key=jax.random.key(0)).action_mask, Array)

race = VmapWrapper(AutoResetWrapper(TimeLimit(Race(), max_steps=5)), num_envs=2)
race_state = race.reset(key=jax.random.key(0))
assert_type(race_state, MARLState)
agents_active: Array = race_state.agents.active
num_agents: int = race.num_agents
