"""Checked by pyright, not run: every adapter is a `parallax.Env[State]` (or `MARLEnv[MARLState]`) and keeps that type
through wrappers."""

from jaxtyping import Array, PRNGKeyArray

from parallax import AutoResetWrapper, Env, MARLEnv, MARLState, State, TimeLimit, VmapWrapper
from parallax.adapters import (
    BraxAdapter,
    CraftaxAdapter,
    GymnaxAdapter,
    JaxMARLAdapter,
    JumanjiAdapter,
    MJXAdapter,
    PgxAdapter,
    PgxSinglePlayerAdapter,
    XMiniGridAdapter,
)
from parallax.adapters.pgx import MaskedState


def takes_env(env: Env[State]) -> State: ...


def adapters_are_envs(
    gymnax_env: GymnaxAdapter, brax_env: BraxAdapter, mjx_env: MJXAdapter, craftax_env: CraftaxAdapter
) -> None:
    takes_env(craftax_env)
    takes_env(gymnax_env)
    takes_env(brax_env)
    takes_env(mjx_env)


def wrapped_adapters_keep_state(env: GymnaxAdapter, key: PRNGKeyArray, action: Array) -> State:
    stacked = VmapWrapper(AutoResetWrapper(TimeLimit(env, max_steps=10)), num_envs=4)
    return stacked.step(stacked.reset(key=key), action)


def takes_marl_env(env: MARLEnv[MARLState]) -> MARLState: ...


def marl_adapters_are_marl_envs(jaxmarl_env: JaxMARLAdapter) -> None:
    takes_marl_env(jaxmarl_env)


def wrapped_marl_adapters_keep_state(env: JaxMARLAdapter, key: PRNGKeyArray, action: Array) -> MARLState:
    stacked = VmapWrapper(AutoResetWrapper(env), num_envs=4)
    return stacked.step(stacked.reset(key=key), action)


def takes_masked_env(env: Env[MaskedState]) -> MaskedState: ...


def suite_adapters_are_envs(
    pgx_game: PgxAdapter, pgx_solo: PgxSinglePlayerAdapter, jumanji_env: JumanjiAdapter, xminigrid_env: XMiniGridAdapter
) -> None:
    takes_marl_env(pgx_game)
    takes_masked_env(pgx_solo)
    takes_env(jumanji_env)
    takes_env(xminigrid_env)


def wrapped_games_keep_their_state(
    env: PgxAdapter, solo: PgxSinglePlayerAdapter, key: PRNGKeyArray, action: Array
) -> None:
    games = VmapWrapper(AutoResetWrapper(TimeLimit(env, max_steps=10)), num_envs=4)
    mask = games.step(games.reset(key=key), action).agents.action_mask
    solos = VmapWrapper(solo, num_envs=4)
    solo_mask = solos.step(solos.reset(key=key), action).action_mask
    del mask, solo_mask
