"""GridWorld-v0 and GridWorld-Masked-v0: dynamics, the reward's optimal return, masks, rendering."""

from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from parallax import State, VmapWrapper
from parallax_zoo.envs import rendering
from parallax_zoo.envs.gridworld import GridState, GridWorld, MaskedGridWorld, MaskedState
from parallax_zoo.judging.recording import save_gif

UP, DOWN, RIGHT, LEFT = 0, 1, 2, 3
_STEP = jax.jit(GridWorld(step_cost=0.01).step)


def _at(env: GridWorld, position: tuple[int, int], goal: tuple[int, int]) -> State:
    """A freshly reset state moved to a chosen position and goal."""
    state = env.reset(key=jax.random.key(0))
    grid = GridState(position=jnp.asarray(position, jnp.int32), goal=jnp.asarray(goal, jnp.int32))
    return dataclasses.replace(state, env_state=grid)


def _greedy(state: State) -> jax.Array:
    """Right until the goal's column, then up: a shortest path from (0, 0)."""
    grid = state.env_state
    return jnp.where(grid.position[0] < grid.goal[0], RIGHT, UP).astype(jnp.int32)


def test_reset_starts_at_the_origin_with_a_goal_inside_the_grid() -> None:
    env = GridWorld()
    states = jax.vmap(lambda k: env.reset(key=k))(jax.random.split(jax.random.key(1), 256))
    assert (states.env_state.position == 0).all()
    goals = np.asarray(states.env_state.goal)
    assert goals.min() == 1 and goals.max() == 4
    np.testing.assert_array_equal(states.observation[:, 2:], goals.astype(np.float32))


def test_moves_follow_seed_000_and_stop_at_the_walls() -> None:
    env = GridWorld()
    state = _at(env, (0, 0), (3, 3))
    positions = []
    for action in (UP, RIGHT, DOWN, LEFT, LEFT):
        state = env.step(state, jnp.int32(action))
        positions.append(tuple(int(v) for v in state.env_state.position))
    assert positions == [(0, 1), (1, 1), (1, 0), (0, 0), (0, 0)]


@pytest.mark.parametrize("goal", [(1, 1), (2, 3), (4, 4), (4, 1)])
def test_a_shortest_path_earns_the_documented_optimal_return(goal: tuple[int, int]) -> None:
    env = GridWorld(step_cost=0.01)
    state = _at(env, (0, 0), goal)
    total, steps = 0.0, 0
    while not bool(state.termination):
        state = env.step(state, _greedy(state))
        total += float(state.reward)
        steps += 1
    gx, gy = goal
    assert steps == gx + gy
    assert total == pytest.approx(1.0 - math.exp(-math.hypot(gx, gy)) - 0.01 * (gx + gy), abs=1e-5)


def test_loitering_near_the_goal_only_costs() -> None:
    env = GridWorld(step_cost=0.01)
    state = _at(env, (2, 2), (2, 3))
    away = env.step(state, jnp.int32(DOWN))
    back = env.step(away, jnp.int32(UP))
    assert float(away.reward) + float(back.reward) == pytest.approx(-0.02, abs=1e-6)
    bump = env.step(_at(env, (0, 0), (2, 3)), jnp.int32(LEFT))
    assert float(bump.reward) == pytest.approx(-0.01, abs=1e-7)


@settings(max_examples=40, deadline=None)
@given(goal=st.tuples(st.integers(1, 4), st.integers(1, 4)), actions=st.lists(st.integers(0, 3), max_size=12))
def test_any_trajectory_returns_the_potential_gain_minus_the_step_costs(
    goal: tuple[int, int], actions: list[int]
) -> None:
    env = GridWorld(step_cost=0.01)
    state = _at(env, (0, 0), goal)
    total, steps = 0.0, 0
    for action in actions:
        if bool(state.termination):
            break
        state = _STEP(state, jnp.int32(action))
        total += float(state.reward)
        steps += 1
    distance = float(np.hypot(*(np.asarray(state.env_state.position) - np.asarray(goal))))
    expected = math.exp(-distance) - math.exp(-math.hypot(*goal)) - 0.01 * steps
    assert total == pytest.approx(expected, abs=1e-5)


def test_optimal_return_on_a_two_by_two_grid() -> None:
    assert GridWorld(size=2, step_cost=0.01).optimal_return() == pytest.approx(1.0 - math.exp(-math.sqrt(2.0)) - 0.02)


def test_greedy_policy_averages_the_optimal_return_over_all_goals() -> None:
    env = GridWorld()
    goals = [(x, y) for x in range(1, 5) for y in range(1, 5)]

    def episode_return(goal: jax.Array) -> jax.Array:
        start = dataclasses.replace(
            env.reset(key=jax.random.key(0)), env_state=GridState(position=jnp.zeros(2, jnp.int32), goal=goal)
        )

        def body(carry, _):
            state, total = carry
            following = env.step(state, _greedy(state))
            live = ~state.termination
            return (
                jax.tree_util.tree_map(lambda a, b: jnp.where(live, a, b), following, state),
                total + jnp.where(live, following.reward, 0.0),
            ), None

        (_, total), _ = jax.lax.scan(body, (start, jnp.float32(0.0)), None, length=8)
        return total

    returns = jax.vmap(episode_return)(jnp.asarray(goals, jnp.int32))
    assert float(returns.mean()) == pytest.approx(env.optimal_return(), abs=1e-5)


def test_masked_gridworld_marks_moves_off_the_grid_illegal() -> None:
    env = MaskedGridWorld()
    state = env.reset(key=jax.random.key(0))
    assert isinstance(state, MaskedState)
    np.testing.assert_array_equal(state.action_mask, [True, False, True, False])
    corner = env.step(_at(env, (4, 3), (1, 1)), jnp.int32(UP))
    np.testing.assert_array_equal(corner.action_mask, [False, True, False, True])
    middle = env.step(_at(env, (2, 1), (1, 1)), jnp.int32(UP))
    np.testing.assert_array_equal(middle.action_mask, [True, True, True, True])


def test_masked_state_keeps_its_mask_under_vmap_and_jit() -> None:
    env = VmapWrapper(MaskedGridWorld(), num_envs=4)
    state = jax.jit(lambda k: env.reset(key=k))(jax.random.key(0))
    state = jax.jit(env.step)(state, jnp.full((4,), UP, jnp.int32))
    assert isinstance(state, MaskedState) and state.action_mask.shape == (4, 4)
    np.testing.assert_array_equal(state.action_mask, np.tile([True, True, True, False], (4, 1)))


def test_an_illegal_move_leaves_the_agent_in_place_at_the_step_cost() -> None:
    env = MaskedGridWorld(step_cost=0.05)
    state = env.reset(key=jax.random.key(0))
    after = env.step(state, jnp.int32(DOWN))
    np.testing.assert_array_equal(after.env_state.position, [0, 0])
    assert float(after.reward) == pytest.approx(-0.05)


def test_bad_key_and_bad_action_are_rejected_with_the_method_named() -> None:
    env = GridWorld()
    with pytest.raises(TypeError, match=r"GridWorld.reset expects a JAX PRNG key"):
        env.reset(key=0)  # pyright: ignore[reportArgumentType]
    state = env.reset(key=jax.random.key(0))
    with pytest.raises(ValueError, match=r"GridWorld.step: expected an action of shape \(\)"):
        env.step(state, jnp.zeros(2, jnp.int32))
    with pytest.raises(ValueError, match="GridWorld: argument .size. must be an int >= 2, got 1"):
        GridWorld(size=1)


def test_render_draws_the_agent_and_the_goal() -> None:
    env = GridWorld(cell_pixels=10)
    image = jax.jit(env.render)(_at(env, (0, 0), (2, 3)))
    assert image.shape == (50, 50, 3) and image.dtype == jnp.uint8
    image = np.asarray(image)
    np.testing.assert_array_equal(image[45, 5], rendering.BLUE)
    np.testing.assert_array_equal(image[(4 - 3) * 10 + 5, 2 * 10 + 5], rendering.GREEN)
    np.testing.assert_array_equal(image[25, 45], rendering.WHITE)


def test_an_episode_renders_to_a_gif(tmp_path) -> None:
    env = MaskedGridWorld(cell_pixels=8)

    def body(state, _):
        state = env.step(state, _greedy(state))
        return state, env.render(state)

    _, frames = jax.lax.scan(body, env.reset(key=jax.random.key(2)), None, length=6)
    path = save_gif(np.asarray(frames), tmp_path / "episode.gif", scale=1)
    with Image.open(path) as gif:
        assert getattr(gif, "n_frames") == 6 and gif.size == (40, 40)
