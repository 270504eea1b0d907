"""Checked by pyright, not run: every adapter is a `parallax.Env[State]` and keeps that type through wrappers."""

from jaxtyping import Array, PRNGKeyArray

from parallax import AutoResetWrapper, Env, State, TimeLimit, VmapWrapper
from parallax.adapters import BraxAdapter, GymnaxAdapter, MJXAdapter


def takes_env(env: Env[State]) -> State: ...


def adapters_are_envs(gymnax_env: GymnaxAdapter, brax_env: BraxAdapter, mjx_env: MJXAdapter) -> None:
    takes_env(gymnax_env)
    takes_env(brax_env)
    takes_env(mjx_env)


def wrapped_adapters_keep_state(env: GymnaxAdapter, key: PRNGKeyArray, action: Array) -> State:
    stacked = VmapWrapper(AutoResetWrapper(TimeLimit(env, max_steps=10)), num_envs=4)
    return stacked.step(stacked.reset(key=key), action)
