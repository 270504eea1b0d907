"""Race-v0, TeamRace-v0 and RespawnRace-v0: rewards, team play, respawn timing and protocol rules 1-5."""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parallax import AutoResetWrapper, MARLState, TimeLimit, VmapWrapper
from parallax_zoo.envs import rendering
from parallax_zoo.envs.race import Race, RaceState
from parallax_zoo.envs.respawn_race import RespawnRace
from parallax_zoo.envs.team_race import RUN, TRIP, WAIT, TeamAgents, TeamRace, blocking_action, naive_action


def _rollout(env, policy, num_steps: int, key: jax.Array | None = None) -> list[MARLState]:
    """States 0 .. num_steps under `policy(state, t)` (from `key`, by default key 0), stepped eagerly so tests can
    inspect each one."""
    step = jax.jit(env.step)
    states = [env.reset(key=jax.random.key(0) if key is None else key)]
    for t in range(num_steps):
        states.append(step(states[-1], policy(states[-1], t)))
    return states


def _assert_reward_pairs_with_previous_active(states: list[MARLState]) -> None:
    """Protocol rules 2, 3 and 5: rewards only in slots active in the previous state, zero observations when
    inactive."""
    for before, after in zip(states, states[1:]):
        assert not np.any(np.asarray(after.agents.reward)[~np.asarray(before.agents.active)])
        assert not np.any(np.asarray(after.agents.observation)[~np.asarray(after.agents.active)])


def _assert_same_state(a: MARLState, b: MARLState) -> None:
    """Every leaf equal, keys compared by their data."""
    leaves = lambda s: jax.tree_util.tree_leaves(dataclasses.replace(s, key=jax.random.key_data(s.key)))  # noqa: E731
    for x, y in zip(leaves(a), leaves(b), strict=True):
        np.testing.assert_array_equal(x, y)


# --- Race ---------------------------------------------------------------------------------------------------


def test_race_always_forward_earns_the_optimal_return() -> None:
    env = Race(num_agents=3, track_length=10, step_cost=0.01)
    states = _rollout(env, lambda s, t: jnp.ones(3, jnp.int32), 10)
    returns = sum(np.asarray(s.agents.reward) for s in states[1:])
    np.testing.assert_allclose(returns, [0.9, 0.9, 0.9], atol=1e-6)
    assert env.optimal_return() == pytest.approx(0.9)
    assert [bool(s.termination) for s in states] == [False] * 10 + [True]


def test_race_rewards_pair_with_the_previous_active_mask() -> None:
    env = Race(num_agents=3, track_length=4, step_cost=0.01)

    def policy(state: MARLState, t: int) -> jax.Array:
        """Slot 0 always moves, slot 1 every other step, slot 2 never."""
        return jnp.asarray([1, t % 2, 0], jnp.int32)

    states = _rollout(env, policy, 9)
    _assert_reward_pairs_with_previous_active(states)
    active = np.asarray([s.agents.active for s in states])
    assert active[:4, 0].all() and not active[4:, 0].any()
    assert active[:8, 1].all() and not active[8:, 1].any()
    rewards = np.asarray([s.agents.reward for s in states[1:]])
    np.testing.assert_allclose(rewards[3], [0.99, -0.01, -0.01], atol=1e-6)
    np.testing.assert_allclose(rewards[4:, 0], 0.0)
    np.testing.assert_allclose(rewards[7, 1], 0.99, atol=1e-6)
    assert not bool(states[-1].termination)


def test_race_ignores_actions_of_finished_agents() -> None:
    env = Race(num_agents=2, track_length=1)
    finished = env.step(env.reset(key=jax.random.key(0)), jnp.asarray([1, 0], jnp.int32))
    assert not bool(finished.agents.active[0])
    _assert_same_state(
        env.step(finished, jnp.asarray([0, 0], jnp.int32)), env.step(finished, jnp.asarray([1, 0], jnp.int32))
    )


def test_race_observations_show_own_and_others_progress() -> None:
    env = Race(num_agents=3, track_length=10)
    state = env.reset(key=jax.random.key(0))
    state = dataclasses.replace(state, env_state=RaceState(position=jnp.asarray([2, 5, 9], jnp.int32)))
    state = env.step(state, jnp.asarray([0, 0, 1], jnp.int32))
    np.testing.assert_allclose(state.agents.observation, [[0.2, 0.5, 1.0], [0.5, 0.2, 1.0], [0.0, 0.0, 0.0]])
    np.testing.assert_allclose(state.global_observation, [0.2, 0.5, 1.0, 1.0, 1.0, 0.0])


# --- TeamRace -----------------------------------------------------------------------------------------------


def _team_state(env: TeamRace, positions) -> MARLState:
    state = env.reset(key=jax.random.key(0))
    return dataclasses.replace(state, env_state=RaceState(position=jnp.asarray(positions, jnp.int32)))


_TEAM_STEP = jax.jit(TeamRace().step)


@settings(max_examples=60, deadline=None)
@given(
    positions=st.lists(st.integers(0, 9), min_size=4, max_size=4),
    actions=st.lists(st.integers(0, 2), min_size=4, max_size=4),
)
def test_team_rewards_are_zero_sum_and_broadcast_to_each_team(positions: list[int], actions: list[int]) -> None:
    env = TeamRace()
    after = _TEAM_STEP(_team_state(env, positions), jnp.asarray(actions, jnp.int32))
    reward = np.asarray(after.agents.reward)
    assert reward.sum() == 0.0
    assert reward[0] == reward[1] and reward[2] == reward[3]
    home = np.asarray(after.env_state.position) >= 10
    team_home = [home[:2].any(), home[2:].any()]
    assert reward[0] == float(team_home[0]) - float(team_home[1])
    assert bool(after.termination) == (team_home[0] or team_home[1])


def test_tripping_knocks_back_opponents_within_reach_only() -> None:
    env = TeamRace(track_length=10, knockback=3, reach=1)
    state = _team_state(env, [3, 3, 4, 0])
    after = env.step(state, jnp.asarray([TRIP, RUN, RUN, RUN], jnp.int32))
    np.testing.assert_array_equal(after.env_state.position, [3, 4, 2, 1])
    clamped = env.step(_team_state(env, [5, 0, 1, 6]), jnp.asarray([WAIT, WAIT, TRIP, WAIT], jnp.int32))
    np.testing.assert_array_equal(clamped.env_state.position, [5, 0, 1, 6])
    both = env.step(_team_state(env, [1, 5, 0, 5]), jnp.asarray([TRIP, RUN, TRIP, RUN], jnp.int32))
    np.testing.assert_array_equal(both.env_state.position, [0, 6, 0, 6])


def _play(env: Any, team_0_policy, team_1_policy) -> tuple[np.ndarray, int]:
    """One game; returns each slot's return and the number of steps it lasted."""
    step = jax.jit(env.step)
    state = env.reset(key=jax.random.key(0))
    total, steps = np.zeros(4), 0
    while not bool(state.done):
        action = jnp.where(state.agents.team == 0, team_0_policy(state), team_1_policy(state))
        state = step(state, action)
        total += np.asarray(state.agents.reward)
        steps += 1
    return total, steps


def test_naive_teams_draw_but_blocking_beats_naive_from_either_side() -> None:
    env = TimeLimit(TeamRace(track_length=10), max_steps=50)
    draw, steps = _play(env, naive_action, naive_action)
    np.testing.assert_array_equal(draw, [0, 0, 0, 0])
    assert steps == 10
    win, steps = _play(env, blocking_action, naive_action)
    np.testing.assert_array_equal(win, [1, 1, -1, -1])
    assert steps == 10
    loss, _ = _play(env, naive_action, blocking_action)
    np.testing.assert_array_equal(loss, [-1, -1, 1, 1])


def test_team_membership_is_exposed_and_survives_wrappers() -> None:
    env = VmapWrapper(AutoResetWrapper(TeamRace()), num_envs=3)
    state = env.reset(key=jax.random.key(0))
    state = jax.jit(env.step)(state, jnp.ones((3, 4), jnp.int32))
    agents = state.agents
    assert isinstance(agents, TeamAgents)
    np.testing.assert_array_equal(agents.team, np.tile([0, 0, 1, 1], (3, 1)))
    assert agents.active.all()


def test_team_observation_is_egocentric_with_the_rank_in_team() -> None:
    env = TeamRace(track_length=10)
    after = env.step(_team_state(env, [1, 2, 3, 4]), jnp.zeros(4, jnp.int32))
    np.testing.assert_allclose(
        after.agents.observation,
        [
            [0.1, 0.2, 0.3, 0.4, 0.0],
            [0.2, 0.1, 0.3, 0.4, 1.0],
            [0.3, 0.4, 0.1, 0.2, 0.0],
            [0.4, 0.3, 0.1, 0.2, 1.0],
        ],
    )
    np.testing.assert_allclose(after.global_observation, [0.1, 0.2, 0.3, 0.4])


# --- RespawnRace --------------------------------------------------------------------------------------------


def test_respawn_timing_is_exact_to_the_step() -> None:
    env = RespawnRace(num_agents=1, track_length=3, fall_probability=0.0, respawn_delay=2)
    states = _rollout(env, lambda s, t: jnp.ones(1, jnp.int32), 10)
    active = [bool(s.agents.active[0]) for s in states[1:]]
    assert active == [True, True, False, False, True, True, True, False, False, True]
    rewards = [float(s.agents.reward[0]) for s in states[1:]]
    assert rewards == [0, 0, 1, 0, 0, 0, 0, 1, 0, 0]
    assert [int(s.env_state.position[0]) for s in states[4:7]] == [0, 0, 1]
    assert not any(bool(s.termination) for s in states)
    _assert_reward_pairs_with_previous_active(states)


def test_inactive_slots_ignore_their_actions() -> None:
    env = RespawnRace(num_agents=3, track_length=2, fall_probability=0.0, respawn_delay=3)
    sitting_out = _rollout(env, lambda s, t: jnp.asarray([1, 0, 1], jnp.int32), 2)[-1]
    np.testing.assert_array_equal(sitting_out.agents.active, [False, True, False])
    _assert_same_state(
        env.step(sitting_out, jnp.asarray([0, 1, 0], jnp.int32)),
        env.step(sitting_out, jnp.asarray([1, 1, 1], jnp.int32)),
    )


def test_falls_send_agents_out_without_reward_and_the_episode_never_terminates() -> None:
    env = RespawnRace(num_agents=3, track_length=10, fall_probability=0.5, respawn_delay=2)
    states = _rollout(env, lambda s, t: jnp.ones(3, jnp.int32), 60, key=jax.random.key(4))
    _assert_reward_pairs_with_previous_active(states)
    fell = [(b.agents.active & ~a.agents.active & (a.agents.reward == 0)).any() for b, a in zip(states, states[1:])]
    assert any(bool(f) for f in fell)
    assert not any(bool(s.termination) for s in states)


def test_respawn_optimal_return_without_falls_is_the_lap_count() -> None:
    assert RespawnRace(track_length=10, fall_probability=0.0, respawn_delay=3).optimal_return(100) == pytest.approx(7.0)
    assert RespawnRace(track_length=10, fall_probability=0.0, respawn_delay=3).optimal_return(9) == 0.0


def test_respawn_optimal_return_matches_monte_carlo() -> None:
    env = RespawnRace(num_agents=3, track_length=10, fall_probability=0.05, respawn_delay=3)
    num_envs, num_steps = 512, 100
    vector = VmapWrapper(TimeLimit(env, num_steps), num_envs=num_envs)
    forward = jnp.ones((num_envs, 3), jnp.int32)

    def body(state, _):
        state = vector.step(state, forward)
        return state, (state.agents.reward, state.truncation)

    _, (rewards, truncation) = jax.jit(lambda k: jax.lax.scan(body, vector.reset(key=k), None, length=num_steps))(
        jax.random.key(7)
    )
    assert bool(truncation[-1].all()) and not bool(truncation[:-1].any())
    returns = np.asarray(rewards.sum(axis=0)).ravel()
    standard_error = returns.std() / np.sqrt(returns.size)
    assert abs(returns.mean() - env.optimal_return(num_steps)) < 4 * standard_error


# --- rendering ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "lanes"),
    [
        (Race(num_agents=3, track_length=10, cell_pixels=8), 3),
        (TeamRace(track_length=10, cell_pixels=8), 4),
        (RespawnRace(num_agents=3, track_length=10, cell_pixels=8), 3),
    ],
    ids=["Race", "TeamRace", "RespawnRace"],
)
def test_races_render_one_lane_per_slot(env, lanes: int) -> None:
    state = env.reset(key=jax.random.key(0))
    image = np.asarray(jax.jit(env.render)(state))
    assert image.shape == (lanes * 8, 11 * 8, 3) and image.dtype == np.uint8
    np.testing.assert_array_equal(image[4, 4], rendering.BLUE)
    np.testing.assert_array_equal(image[4, 10 * 8 + 4], rendering.GREEN)


@pytest.mark.parametrize(
    "env",
    [Race(num_agents=6, track_length=10), RespawnRace(num_agents=6, track_length=10), TeamRace(track_length=10)],
    ids=["Race", "RespawnRace", "TeamRace"],
)
def test_every_racer_stays_visible_on_every_cell_the_finish_included(env) -> None:
    """Each disc differs from the cell under it, at its centre and around its rim, on every cell of the track."""
    lanes = env.num_agents
    cell = env.cell_pixels
    nobody = jnp.zeros(lanes, bool)
    empty = np.asarray(rendering.race_track(jnp.zeros(lanes, jnp.int32), nobody, env.track_length, cell))
    for position in range(env.track_length + 1):
        state = env.reset(key=jax.random.key(0))
        state = dataclasses.replace(
            state,
            env_state=dataclasses.replace(state.env_state, position=jnp.full_like(state.env_state.position, position)),
        )
        image = np.asarray(env.render(state)).astype(int)
        for lane in range(lanes):
            centre = (lane * cell + cell // 2, position * cell + cell // 2)
            rim = (lane * cell + cell // 2, position * cell + cell // 2 - int(0.36 * cell))
            for row, col in (centre, rim):
                contrast = np.abs(image[row, col] - empty[row, col]).sum()
                assert contrast > 120, (type(env).__name__, lane, position, (row, col), image[row, col])


def test_respawn_race_hides_agents_sitting_out() -> None:
    env = RespawnRace(num_agents=2, track_length=1, fall_probability=0.0, respawn_delay=2, cell_pixels=8)
    sitting_out = env.step(env.reset(key=jax.random.key(0)), jnp.asarray([1, 0], jnp.int32))
    image = np.asarray(env.render(sitting_out))
    np.testing.assert_array_equal(image[4, 4], rendering.WHITE)
    np.testing.assert_array_equal(image[12, 4], rendering.ORANGE)
