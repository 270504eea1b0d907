"""Head-to-head evaluation and the snapshot buffer, checked with a hand-written perfect Nim player."""

from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers.nim import Nim, PerfectNim
from jaxtyping import Array, Int

from parallax import Agents, MARLState, TimeLimit
from parallax_zoo.agents.mappo import MAPPOConfig
from parallax_zoo.agents.players import Greedy, RandomPlayer, ScriptedPlayer
from parallax_zoo.agents.policy import Policy
from parallax_zoo.agents.ppo import model_for
from parallax_zoo.agents.selfplay import (
    SnapshotBuffer,
    TrainingOpponent,
    collect_against,
    head_to_head,
    seated_slots,
    sides,
)
from parallax_zoo.agents.slots import Slots

ENV = TimeLimit(Nim(), max_steps=20)
MODEL = model_for(ENV, MAPPOConfig())


def play(first, second, episodes=256):
    return jax.jit(lambda key: head_to_head(ENV, first, second, key, episodes, 20))(jax.random.key(0))


def test_perfect_play_beats_random_from_both_seats():
    results = play(PerfectNim(), RandomPlayer(MODEL))
    assert float(results["win"]) > 0.8
    assert float(results["win"] + results["loss"]) == 1.0  # Nim has no draws and every game ends in 20 steps
    np.testing.assert_allclose(results["return"], results["win"] - results["loss"])
    mirrored = play(RandomPlayer(MODEL), PerfectNim())
    np.testing.assert_allclose(mirrored["win"], 1.0 - results["win"], atol=0.1)


def test_perfect_against_itself_wins_exactly_the_first_mover_wins():
    # Piles 4..9; the first mover wins unless pile % 3 == 0 (6 or 9). Seats alternate per episode, so the
    # seated side wins 1/2 * 4/6 (moving first) + 1/2 * 2/6 (moving second) = 1/2 of the games on average.
    results = play(PerfectNim(), PerfectNim(), episodes=512)
    np.testing.assert_allclose(results["win"], 0.5, atol=0.07)


@jax.tree_util.register_dataclass
@dataclass(kw_only=True)
class TeamAgents(Agents):
    team: Int[Array, " num_agents"]


def test_sides_are_teams_where_the_env_has_them():
    agents = dict(observation=jnp.zeros((2, 4)), active=jnp.ones((2, 4), bool), reward=jnp.zeros((2, 4)))
    flags: dict[str, Any] = dict(
        env_state=None,
        termination=jnp.zeros(2, bool),
        truncation=jnp.zeros(2, bool),
        info={},
        step_count=jnp.zeros(2, jnp.int32),
        key=jax.random.split(jax.random.key(0), 2),
    )
    plain = MARLState(agents=Agents(**agents), **flags)
    np.testing.assert_array_equal(sides(plain), [[0, 1, 2, 3]] * 2)
    teams = MARLState(agents=TeamAgents(**agents, team=jnp.array([[0, 0, 1, 1]] * 2)), **flags)
    np.testing.assert_array_equal(sides(teams), [[0, 0, 1, 1]] * 2)


def test_snapshot_buffer_overwrites_the_oldest():
    policy = Policy(MODEL, MODEL.init(jax.random.key(0)))
    buffer = SnapshotBuffer.create(policy, capacity=2)
    assert buffer.capacity == 2 and not buffer.filled.any()
    marked = [jax.tree_util.tree_map(lambda x, i=i: jnp.full_like(x, i), policy) for i in (1.0, 2.0, 3.0)]
    for snapshot in marked:
        buffer = buffer.push(snapshot)
    kernel = jax.tree_util.tree_leaves(buffer.policies)[0]
    np.testing.assert_array_equal(kernel[:, 0, 0] if kernel.ndim > 2 else kernel[:, 0], [3.0, 2.0])
    assert buffer.filled.all() and int(buffer.count) == 3


def test_seated_slots_hold_each_side_equally_in_contested_envs_and_all_slots_after():
    state = jax.vmap(lambda k: ENV.reset(key=k))(jax.random.split(jax.random.key(0), 6))
    np.testing.assert_array_equal(
        seated_slots(state, 4),
        [[True, False], [False, True], [True, False], [False, True], [True, True], [True, True]],
    )


def test_collect_against_seats_the_opponent_and_hides_its_slots_from_learning():
    from parallax_zoo.agents.ppo import vector_env
    from parallax_zoo.agents.rollout import collect

    vec_env = vector_env(ENV, 8)
    state = vec_env.reset(key=jax.random.key(1))
    always_take_one = ScriptedPlayer(lambda observation: jnp.zeros(observation.shape[:-1], jnp.int32))
    policy = Policy(MODEL, MODEL.init(jax.random.key(2)))
    opponent = TrainingOpponent(always_take_one, envs=4)
    _, trajectory = jax.jit(lambda s, k: collect_against(vec_env, policy, opponent, s, k, 12))(state, jax.random.key(3))
    learner = np.asarray(seated_slots(state, 4))
    _, plain = jax.jit(lambda s, k: collect(vec_env, policy, s, k, 12))(state, jax.random.key(3))
    np.testing.assert_array_equal(trajectory.active, np.asarray(plain.active) & learner)
    # The opponent's slots play its rule; the learner's slots the policy's own samples.
    np.testing.assert_array_equal(np.asarray(trajectory.action)[:, ~learner], 0)
    assert np.any(np.asarray(trajectory.action)[:, learner] != 0)


def test_training_against_the_random_player_only_beats_it():
    config = MAPPOConfig(
        num_envs=16,
        num_steps=32,
        total_timesteps=16 * 32 * 40,
        learning_rate=3e-3,
        opponent="random",
        opponent_share=1.0,
    )
    from parallax_zoo.agents.mappo import make_train

    policy, _ = jax.jit(make_train(config, ENV, opponent=RandomPlayer(MODEL)))(jax.random.key(0))
    results = play(Greedy(policy), RandomPlayer(MODEL))
    assert float(results["win"]) > 0.75


def test_scripted_player_checks_the_shape_of_its_actions():
    player = ScriptedPlayer(lambda observation: jnp.zeros(observation.shape[:-2], jnp.int32))
    slots = Slots(jnp.zeros((3, 2, 11)), jnp.zeros((3, 22)), None, jnp.ones((3, 2), bool), jnp.zeros((3, 2)))
    with pytest.raises(ValueError, match=r"expected one per slot \(3, 2\)"):
        player.act_slots(slots, jax.random.key(0))
