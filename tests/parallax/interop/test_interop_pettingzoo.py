"""`to_pettingzoo` and `to_pettingzoo_aec`, judged by PettingZoo's own API and seed tests."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers.example_envs import GridWorld
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test

import parallax_zoo
from parallax import TimeLimit
from parallax.interop import to_pettingzoo, to_pettingzoo_aec
from parallax_zoo.catalogue.gymnasium_ids import shared_env
from parallax_zoo.envs.respawn_race import RespawnRace

MULTI_AGENT_IDS = [env_id for env_id in parallax_zoo.list_envs() if parallax_zoo.spec(env_id).multi_agent]
CYCLES = 120
"""Steps per PettingZoo check: longer than every native episode but RespawnRace's 100 steps."""


def _ids() -> list:
    return [
        env_id if parallax_zoo.spec(env_id).kind == "native" else pytest.param(env_id, marks=pytest.mark.slow)
        for env_id in MULTI_AGENT_IDS
    ]


@pytest.mark.parametrize("env_id", _ids())
def test_parallel_api_and_seed_tests_pass_on_every_multi_agent_id(env_id: str) -> None:
    env = shared_env(env_id)
    parallel_api_test(to_pettingzoo(env), num_cycles=CYCLES)
    parallel_seed_test(lambda: to_pettingzoo(env), num_cycles=CYCLES)


@pytest.mark.parametrize("env_id", _ids())
def test_aec_api_test_passes_on_every_multi_agent_id(env_id: str) -> None:
    api_test(to_pettingzoo_aec(shared_env(env_id)), num_cycles=CYCLES)


def _reference_key(seed: int) -> jax.Array:
    """The key `reset(seed=seed)` hands the env: `jax.random.key(seed)`, split once (docs/interop.md)."""
    return jax.random.split(jax.random.key(seed))[1]


@pytest.mark.parametrize("env_id", ["TicTacToe-v0", "RespawnRace-v0"])
def test_random_play_matches_the_jax_env_step_for_step(env_id: str) -> None:
    parallax_env = shared_env(env_id)
    exported = to_pettingzoo(parallax_env)
    observations, _ = exported.reset(seed=4)
    state = jax.jit(lambda k: parallax_env.reset(key=k))(_reference_key(4))
    step = jax.jit(parallax_env.step)
    steps = 0
    while exported.agents:
        actions = {}
        for agent in exported.agents:
            observation = observations[agent]
            mask = observation["action_mask"] if isinstance(observation, dict) else None
            actions[agent] = exported.action_space(agent).sample(mask=mask)
        joint = np.zeros(parallax_env.num_agents, np.int32)
        for agent, action in actions.items():
            joint[exported.possible_agents.index(agent)] = action
        before = state
        state = step(state, jnp.asarray(joint))
        observations, rewards, terminations, truncations, _ = exported.step(actions)
        for agent, reward in rewards.items():
            slot = exported.possible_agents.index(agent)
            assert reward == float(state.agents.reward[slot])
        assert bool(state.done) == (not exported.agents)
        assert int(state.step_count) == int(exported.parallax_state.step_count) == int(before.step_count) + 1
        steps += 1
    assert steps >= 3


def test_aec_board_game_lets_the_player_to_move_act_with_classic_dict_observations() -> None:
    env = to_pettingzoo_aec(shared_env("TicTacToe-v0"))
    env.reset(seed=0)
    movers = []
    for agent in env.agent_iter():
        observation, reward, terminated, truncated, _ = env.last()
        assert set(observation) == {"observation", "action_mask"} and observation["action_mask"].dtype == np.int8
        if terminated or truncated:
            env.step(None)
            continue
        assert observation["action_mask"][:-1].any() and not observation["action_mask"][-1]
        movers.append(agent)
        before = int(env.parallax_state.step_count)
        env.step(int(np.flatnonzero(observation["action_mask"])[0]))
        assert int(env.parallax_state.step_count) == before + 1, "every move of a board game is one env step"
    assert movers[:4] == ["agent_0", "agent_1", "agent_0", "agent_1"]
    assert len(movers) == 7  # the first free cell every time: X wins on the diagonal 2, 4, 6 with its 4th move


def test_aec_simultaneous_env_takes_every_agents_action_in_slot_order_then_steps() -> None:
    env = to_pettingzoo_aec(shared_env("Race-v0"))
    env.reset(seed=0)
    order = []
    for _ in range(6):
        order.append(env.agent_selection)
        env.step(1)
        assert int(env.parallax_state.step_count) == len(order) // 3
    assert order == ["agent_0", "agent_1", "agent_2"] * 2


def test_parallel_agents_leave_when_their_slot_goes_inactive() -> None:
    env = to_pettingzoo(shared_env("Race-v0"))
    env.reset(seed=0)
    left_alone = []
    while env.agents:
        live = list(env.agents)
        speed = int(env.parallax_state.step_count) % 2  # agent_0 runs every step, the others every other step
        _, _, terminations, truncations, infos = env.step({agent: 1 if agent == "agent_0" else speed for agent in live})
        left_alone.append(env.agents == ["agent_1", "agent_2"])
        for agent in live:
            slot = env.possible_agents.index(agent)
            still_active = bool(env.parallax_state.agents.active[slot]) and not bool(env.parallax_state.done)
            assert (agent in env.agents) == still_active
            assert terminations[agent] == (not still_active) and not truncations[agent]
            assert infos[agent]["active"] == bool(env.parallax_state.agents.active[slot])
    assert any(left_alone), "agent_0 finishes first and leaves while the others race on"


class RespawnRaceUndeclared(RespawnRace):
    """RespawnRace without its declaration: the exports cannot know that slots come back."""

    respawns = False


def test_a_slot_that_comes_back_rejoins_the_agents_unless_the_env_declares_respawns() -> None:
    undeclared = to_pettingzoo(_time_limited(RespawnRaceUndeclared(fall_probability=0.0)))
    undeclared.reset(seed=0)
    seen = []
    for _ in range(16):
        undeclared.step({agent: 1 for agent in undeclared.agents})
        seen.append(tuple(undeclared.agents))
    assert () in seen and seen[-1] == ("agent_0", "agent_1", "agent_2"), (
        "everyone finishes at step 10, sits out 3, comes back"
    )
    declared = to_pettingzoo(shared_env("RespawnRace-v0"))
    declared.reset(seed=0)
    for _ in range(16):
        _, _, terminations, _, infos = declared.step({agent: 1 for agent in declared.agents})
        assert declared.agents == declared.possible_agents and not any(terminations.values())
    assert infos["agent_0"]["active"] is True


def _time_limited(env: RespawnRace) -> TimeLimit:
    return TimeLimit(env, max_steps=100)


def test_state_is_the_global_observation_and_bad_input_gets_a_clear_error() -> None:
    env = to_pettingzoo(shared_env("TeamRace-v0"))
    env.reset(seed=0)
    np.testing.assert_array_equal(env.state(), np.asarray(env.parallax_state.global_observation))
    with pytest.raises(ValueError, match="missing \\['agent_3'\\]"):
        env.step({"agent_0": 0, "agent_1": 0, "agent_2": 0})
    with pytest.raises(TypeError, match="single-agent.*to_gymnasium"):
        to_pettingzoo(GridWorld())
    aec = to_pettingzoo_aec(shared_env("TeamRace-v0"))
    aec.reset(seed=0)
    with pytest.raises(ValueError, match="needs an action"):
        aec.step(None)


def test_render_returns_the_envs_rgb_picture_of_the_current_state() -> None:
    env = to_pettingzoo_aec(shared_env("TicTacToe-v0"), render_mode="rgb_array")
    env.reset(seed=0)
    empty = env.render()
    assert empty is not None and empty.dtype == np.uint8 and empty.shape == (96, 96, 3)
    env.step(4)
    centre = env.render()
    assert centre is not None and not np.array_equal(centre[32:64, 32:64], empty[32:64, 32:64])
    np.testing.assert_array_equal(centre[:32], empty[:32])  # only the centre cell changed


def test_an_unknown_agent_or_an_action_outside_its_space_is_refused_naming_it() -> None:
    import gymnasium

    env = to_pettingzoo(parallax_zoo.make("Race-v0"))
    env.reset(seed=0)
    legal = {agent: 1 for agent in env.agents}
    with pytest.raises(
        ValueError,
        match=r"actions for \['bob'\], which are not agents of this env; its agents are "
        r"\['agent_0', 'agent_1', 'agent_2'\]",
    ):
        env.step({**legal, "bob": 0})
    for agent, action, shown in (
        ("agent_0", 99, "99 (int)"),
        ("agent_1", -1, "-1 (int)"),
        ("agent_2", 1.7, "1.7 (float)"),
    ):
        with pytest.raises(
            gymnasium.error.InvalidAction,
            match=rf"PettingZooParallelEnv.step, {agent}: action {re.escape(shown)} is not in the action space "
            r"Discrete\(2\)",
        ):
            env.step({**legal, agent: action})
    assert int(env.parallax_state.step_count) == 0, "a refused action does not step the env"
    aec = to_pettingzoo_aec(parallax_zoo.make("TicTacToe-v0"))
    aec.reset(seed=0)
    with pytest.raises(gymnasium.error.InvalidAction, match=r"PettingZooAECEnv.step, agent_0: action 10 \(int\)"):
        aec.step(10)


def test_a_step_after_the_episode_ended_returns_empty_dicts_and_pays_nothing() -> None:
    """PettingZoo's parallel envs answer a step without agents with empty dicts; the env is not stepped."""
    import warnings

    env = to_pettingzoo(parallax_zoo.make("Race-v0", max_steps=3))
    env.reset(seed=0)
    for _ in range(3):
        _, _, _, truncations, _ = env.step({agent: 0 for agent in env.agents})
    assert env.agents == [] and all(truncations.values())
    ended = env.parallax_state
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = [env.step({}), env.step({"agent_0": 1})]
    assert results == [({}, {}, {}, {}, {})] * 2
    assert len(caught) == 1 and "after the episode ended; call reset()" in str(caught[0].message)
    assert env.parallax_state is ended
