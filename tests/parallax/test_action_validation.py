"""Actions outside the action space: one meaning per env, `ValidateActions` refusing them, `check_env` probing them.

docs/protocol.md, "Out-of-range actions": the zoo's envs and the adapters clip an action
into the space (a NaN entry counting as 0); the board games make it an
illegal move, which loses; `make(id, validate=True)` refuses it instead.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers.example_envs import GridWorld as SeedGridWorld

import parallax_zoo
from parallax import AutoResetWrapper, Box, Discrete, ProtocolError, State, ValidateActions, VmapWrapper, check_env
from parallax.spaces import check_action, clip_action, out_of_range_actions
from parallax_zoo.envs.gridworld import GridWorld

CLIPPING_IDS = ["GridWorld-v0", "TeamRace-v0", "gymnax/MountainCar-v0"]
"""One single-agent and one multi-agent native env and one adapted one (CartPole and Pendulum have their own test)."""
BOARD_IDS = ["TicTacToe-v0", "ConnectFour-v0", "Othello-v0"]


def _leaves_equal(a, b) -> bool:
    def plain(x):
        return np.asarray(jax.random.key_data(x) if jnp.issubdtype(x.dtype, jax.dtypes.prng_key) else x)

    return all(
        np.array_equal(plain(x), plain(y)) for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b))
    )


def _all_finite(tree) -> bool:
    return all(
        np.all(np.isfinite(np.asarray(leaf)))
        for leaf in jax.tree_util.tree_leaves(tree)
        if jnp.issubdtype(leaf.dtype, jnp.inexact)
    )


# --- the meaning of an out-of-range action ------------------------------------------------------------------


@pytest.mark.parametrize("env_id", CLIPPING_IDS)
def test_an_out_of_range_action_acts_as_the_nearest_action_in_the_space(env_id: str) -> None:
    env = parallax_zoo.make(env_id)
    state = env.reset(key=jax.random.key(0))
    step = jax.jit(env.step)
    bad_actions = out_of_range_actions(env.action_space)
    assert bad_actions
    for action in bad_actions:
        stepped = step(state, action)
        assert _leaves_equal(stepped, step(state, clip_action(env.action_space, action))), action
        assert _all_finite(stepped), action


def test_gridworld_above_the_top_action_moves_left_and_below_zero_moves_up() -> None:
    env = GridWorld()
    start = dataclasses.replace(env.reset(key=jax.random.key(0)), env_state=env.reset(key=jax.random.key(0)).env_state)
    middle = dataclasses.replace(start.env_state, position=jnp.array([2, 2], jnp.int32))
    state = dataclasses.replace(start, env_state=middle)
    for action, position in ((4, [1, 2]), (99, [1, 2]), (-1, [2, 3]), (-5, [2, 3])):
        np.testing.assert_array_equal(env.step(state, jnp.int32(action)).env_state.position, position)


def test_cartpole_action_99_pushes_like_action_1_and_a_nan_torque_is_no_torque() -> None:
    cartpole = parallax_zoo.make("gymnax/CartPole-v1")
    state = cartpole.reset(key=jax.random.key(0))
    assert _leaves_equal(cartpole.step(state, jnp.int32(99)), cartpole.step(state, jnp.int32(1)))
    pendulum = parallax_zoo.make("gymnax/Pendulum-v1")
    state = pendulum.reset(key=jax.random.key(0))
    for _ in range(3):
        state = pendulum.step(state, jnp.full((1,), jnp.nan, jnp.float32))
    assert _all_finite(state)
    held = pendulum.reset(key=jax.random.key(0))
    for _ in range(3):
        held = pendulum.step(held, jnp.zeros((1,), jnp.float32))
    assert _leaves_equal(state, held)


@pytest.mark.parametrize("env_id", BOARD_IDS)
def test_an_out_of_range_move_loses_a_board_game_which_then_stays_finished(env_id: str) -> None:
    env = parallax_zoo.make(env_id).unwrapped
    step = jax.jit(env.step)
    start = env.reset(key=jax.random.key(0))
    finished = step(start, jnp.array([env.num_actions + 5, 0], jnp.int32))
    assert bool(finished.termination) and int(finished.env_state.winner) == 1
    np.testing.assert_array_equal(finished.agents.reward, [-1.0, 1.0])
    first_legal = int(jnp.argmax(start.agents.action_mask[0]))
    for action in ([first_legal, env.no_op], [env.no_op, env.no_op], [env.no_op, first_legal], [-1, -1]):
        again = step(finished, jnp.array(action, jnp.int32))
        assert bool(again.termination), action
        np.testing.assert_array_equal(again.agents.reward, [0.0, 0.0])
        assert int(again.step_count) == int(finished.step_count) + 1
        expected = dataclasses.replace(
            finished,
            agents=dataclasses.replace(finished.agents, reward=again.agents.reward),
            step_count=again.step_count,
        )
        assert _leaves_equal(again, expected), action


def test_a_won_tictactoe_game_keeps_its_winner_and_validate_refuses_to_step_it() -> None:
    env = parallax_zoo.make("TicTacToe-v0", validate=True)
    state = env.reset(key=jax.random.key(0))
    for cell, player in ((0, 0), (3, 1), (1, 0), (4, 1), (2, 0)):
        state = env.step(state, jnp.array([cell, 9] if player == 0 else [9, cell], jnp.int32))
    assert bool(state.termination) and int(state.env_state.winner) == 0
    unvalidated = env.env.env
    for action in ([9, 8], [9, 9], [8, 9]):
        after = unvalidated.step(state, jnp.array(action, jnp.int32))
        assert int(after.env_state.winner) == 0 and bool(after.termination)
        np.testing.assert_array_equal(after.env_state.board, state.env_state.board)
    with pytest.raises(RuntimeError, match=r"TicTacToe.step: the episode has ended \(termination True"):
        env.step(state, jnp.array([9, 8], jnp.int32))


def test_clip_action_leaves_actions_in_the_space_alone_and_moves_the_others_in() -> None:
    box = Box(-2.0, 2.0, (3,))
    np.testing.assert_array_equal(clip_action(box, jnp.array([jnp.nan, 5.0, -jnp.inf])), [0.0, 2.0, -2.0])
    np.testing.assert_array_equal(clip_action(box, jnp.array([0.5, -1.0, 2.0])), [0.5, -1.0, 2.0])
    assert int(clip_action(Discrete(4), jnp.int32(-7))) == 0 and int(clip_action(Discrete(4), jnp.int32(2))) == 2
    for space in (box, Discrete(4), Discrete(10, shape=(2,))):
        for action in out_of_range_actions(space):
            assert not bool(space.contains(action)) and bool(space.contains(clip_action(space, action)))


# --- ValidateActions ------------------------------------------------------------------------------------------


def test_make_with_validate_refuses_an_out_of_range_action_eagerly_naming_the_space_and_value() -> None:
    env = parallax_zoo.make("GridWorld-v0", validate=True)
    assert isinstance(env, ValidateActions)
    state = env.reset(key=jax.random.key(0))
    with pytest.raises(
        RuntimeError, match=r"GridWorld.step: action 7 is outside the action space Discrete\(4\) of dtype int32"
    ):
        env.step(state, jnp.int32(7))
    pendulum = parallax_zoo.make("gymnax/Pendulum-v1", validate=True)
    with pytest.raises(
        RuntimeError, match=r"action \[nan\] is outside the action space Box\(-2.0, 2.0, \(1,\), float32\)"
    ):
        pendulum.step(pendulum.reset(key=jax.random.key(0)), jnp.full((1,), jnp.nan, jnp.float32))


def test_validated_env_steps_and_refuses_under_jit_vmap_and_scan() -> None:
    """Valid actions step under `jit` as unvalidated ones do; an invalid one raises from the compiled code itself."""
    env = parallax_zoo.make("Race-v0", validate=True)
    state = env.reset(key=jax.random.key(0))
    legal = jnp.array([1, 0, 1], jnp.int32)
    assert _leaves_equal(jax.jit(env.step)(state, legal), env.env.step(state, legal))
    outside = r"Race.step: the action is outside the action space Discrete\(2, shape=\(3,\)\)"
    with pytest.raises(RuntimeError, match=outside):
        jax.jit(env.step)(state, jnp.array([1, 1, 2], jnp.int32))
    batched = VmapWrapper(env, num_envs=4)
    states = batched.reset(key=jax.random.key(1))
    actions = jnp.ones((4, 3), jnp.int32).at[2, 0].set(-1)
    with pytest.raises(RuntimeError, match=outside):
        batched.step(states, actions)
    with pytest.raises(RuntimeError, match=outside):
        jax.vmap(env.step)(jax.vmap(lambda k: env.reset(key=k))(jax.random.split(jax.random.key(2), 4)), actions)

    def rollout(env, state, actions):
        return jax.lax.scan(lambda s, a: (env.step(s, a), None), state, actions)[0]

    scanned = jax.jit(rollout, static_argnums=0)
    with pytest.raises(RuntimeError, match=outside):
        scanned(env, state, jnp.ones((5, 3), jnp.int32).at[3, 1].set(5))
    stepped = scanned(env, state, jnp.ones((5, 3), jnp.int32))
    assert _leaves_equal(stepped, scanned(env.env, state, jnp.ones((5, 3), jnp.int32)))


def test_validated_env_refuses_a_step_from_an_ended_episode_but_steps_on_after_auto_reset() -> None:
    env = ValidateActions(GridWorld(size=2))
    state = env.reset(key=jax.random.key(0))
    ended = env.step(env.step(state, jnp.int32(0)), jnp.int32(2))
    assert bool(ended.termination)
    with pytest.raises(RuntimeError, match="the episode has ended .termination True, truncation False.; reset it"):
        env.step(ended, jnp.int32(0))
    looping = AutoResetWrapper(env)
    state = looping.reset(key=jax.random.key(0))
    for action in (0, 2, 0, 2, 0):
        state = looping.step(state, jnp.int32(action))
    assert int(state.step_count) == 1


def test_bool_action_to_a_discrete_env_is_refused_naming_both_dtypes() -> None:
    message = r"expected an action of shape \(\) and dtype int32 for Discrete\(4\), got shape \(\) and dtype bool"
    env = GridWorld()
    state = env.reset(key=jax.random.key(0))
    with pytest.raises(ValueError, match=message):
        env.step(state, jnp.bool_(True))
    cartpole = parallax_zoo.make("gymnax/CartPole-v1")
    with pytest.raises(ValueError, match=r"GymnaxAdapter.step: .*for Discrete\(2\), got shape \(\) and dtype bool"):
        cartpole.step(cartpole.reset(key=jax.random.key(0)), jnp.bool_(True))
    with pytest.raises(
        ValueError, match=r"dtype int32 for Discrete\(2, shape=\(3,\)\), got shape \(3,\) and dtype bool"
    ):
        parallax_zoo.make("Race-v0").step(
            parallax_zoo.make("Race-v0").reset(key=jax.random.key(0)), jnp.ones(3, jnp.bool_)
        )
    check_action(Box(0.0, 1.0, (2,)), jnp.zeros(2, jnp.int32))
    with pytest.raises(ValueError, match="dtype bool"):
        check_action(Box(0.0, 1.0, (2,)), jnp.zeros(2, jnp.bool_))


# --- check_env ------------------------------------------------------------------------------------------------


class PushedGridWorld(SeedGridWorld):
    """The protocol's grid walked by a continuous push, kept on the grid by clipping the position: a NaN push poisons
    it."""

    action_space = Box(-1.0, 1.0, (2,))

    def step(self, state: State, action) -> State:
        position = jnp.clip(state.env_state.pos + action, 0.0, 4.0)
        moved = state.env_state._replace(pos=position)
        observation = jnp.concatenate([position, moved.goal])
        return dataclasses.replace(state, env_state=moved, observation=observation, step_count=state.step_count + 1)


def test_check_env_reports_an_env_whose_state_an_out_of_range_action_makes_non_finite() -> None:
    with pytest.raises(ProtocolError) as caught:
        check_env(PushedGridWorld(), num_steps=4)
    assert (caught.value.rule, caught.value.field, caught.value.step) == ("out-of-range actions", "env_state.pos", 1)
    assert "stepping with [nan nan]" in str(caught.value)


def test_check_env_passes_a_validated_env_which_refuses_out_of_range_actions() -> None:
    check_env(parallax_zoo.make("GridWorld-v0", validate=True), num_steps=8)


def test_the_gymnasium_and_pettingzoo_exports_of_a_validated_env_step_through_episode_ends() -> None:
    """The exports jit `step`: a validated env keeps them, Gymnasium's own checker included, and autoresets."""
    from gymnasium.utils.env_checker import check_env as gymnasium_check_env
    from pettingzoo.test import parallel_api_test

    from parallax.interop import to_gymnasium, to_gymnasium_vector, to_pettingzoo

    gymnasium_check_env(to_gymnasium(parallax_zoo.make("GridWorld-v0", validate=True)), skip_render_check=True)
    vector = to_gymnasium_vector(parallax_zoo.make("GridWorld-v0", max_steps=8, validate=True), 3)
    vector.reset(seed=0)
    ends = 0
    for _ in range(20):
        _, _, termination, truncation, _ = vector.step(np.array([0, 2, 1]))
        ends += int((termination | truncation).sum())
    assert ends >= 3, "episodes ended and the vector env stepped on after its autoresets"
    parallel_api_test(to_pettingzoo(parallax_zoo.make("Race-v0", validate=True)), num_cycles=40)
