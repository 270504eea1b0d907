"""How well gymnax Pendulum-v1 can be played: a near-optimal controller's protocol score, a floor under the optimum.

Finite-horizon value iteration over a grid of (angle, angular velocity), the
value between grid points read bilinearly, for the 200 steps of an episode.
The controller then plays the protocol's own 128 episodes through the env's
own `step`, choosing each torque among 401 levels by one step of look-ahead
on that value (its grid model, the same equations, only chooses). It is a
controller, so its score is one a policy can reach: a lower bound on the
optimum, which finer grids approach from below. It also plays many uniformly
drawn starts, the expected score over the env's start distribution
(docs/baselines.md, "Baselines re-made with settings of their own").

    python benchmarks/pendulum_optimum.py [--angles 361] [--speeds 321] [--torques 41] [--starts 8192]
"""

from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

import parallax_zoo
from parallax.core import State
from parallax.wrappers import VmapWrapper
from parallax_zoo.judging.evaluation import protocol

ENV_ID = "gymnax/Pendulum-v1"
HORIZON = 200
"""Steps of a Pendulum-v1 episode (its time limit), each rewarded."""
CHOICES = 401
"""Torque levels the controller chooses among at play time."""


def wrap(angle: Array) -> Array:
    """The angle in [-pi, pi), as the env's reward reads it."""
    return ((angle + jnp.pi) % (2 * jnp.pi)) - jnp.pi


def controller_returns(angles: int, speeds: int, torques: int, envs: VmapWrapper, starts: State) -> Float[Array, " n"]:
    """The return of the grid controller in each of the batched env's episodes from `starts`, played by the env's own
    `step` (the grid model only chooses the torques)."""
    params = parallax_zoo.make(ENV_ID).params  # pyright: ignore[reportAttributeAccessIssue]
    max_speed = float(params.max_speed)
    grid_angles = jnp.linspace(-jnp.pi, jnp.pi, angles, endpoint=False)
    grid_speeds = jnp.linspace(-max_speed, max_speed, speeds)
    levels = jnp.linspace(-params.max_torque, params.max_torque, torques)

    def step(angle: Array, speed: Array, torque: Array) -> tuple[Array, Array, Array]:
        reward = -(wrap(angle) ** 2 + 0.1 * speed**2 + 0.001 * torque**2)
        accel = 3 * params.g / (2 * params.l) * jnp.sin(angle) + 3.0 / (params.m * params.l**2) * torque
        speed = jnp.clip(speed + accel * params.dt, -max_speed, max_speed)
        return angle + speed * params.dt, speed, reward

    def value_at(value: Array, angle: Array, speed: Array) -> Array:
        x = (wrap(angle) + jnp.pi) / (2 * jnp.pi) * angles
        i = jnp.floor(x).astype(int)
        fx, i = x - i, i % angles
        y = (speed + max_speed) / (2 * max_speed) * (speeds - 1)
        j = jnp.clip(jnp.floor(y).astype(int), 0, speeds - 2)
        fy = jnp.clip(y - j, 0.0, 1.0)
        i1 = (i + 1) % angles
        return (1 - fx) * ((1 - fy) * value[i, j] + fy * value[i, j + 1]) + fx * (
            (1 - fy) * value[i1, j] + fy * value[i1, j + 1]
        )

    angle_grid, speed_grid = jnp.meshgrid(grid_angles, grid_speeds, indexing="ij")

    def backup(value: Array, _: None) -> tuple[Array, Array]:
        def after(torque: Array) -> Array:
            angle, speed, reward = step(angle_grid, speed_grid, torque)
            return reward + value_at(value, angle, speed)

        better = jax.lax.map(after, levels).max(axis=0)
        return better, better

    _, values = jax.lax.scan(backup, jnp.zeros((angles, speeds)), None, HORIZON)
    to_go = jnp.concatenate([jnp.zeros((1, angles, speeds)), values])  # to_go[k]: the value with k steps left
    choices = jnp.linspace(-params.max_torque, params.max_torque, CHOICES)

    def choose(to_go_now: Array, angle: Array, speed: Array) -> Array:
        """The torque whose next state's reward and value are highest."""
        ahead_angle, ahead_speed, ahead_reward = step(angle, speed, choices)
        return choices[jnp.argmax(ahead_reward + value_at(to_go_now, ahead_angle, ahead_speed))]

    def act(states: State, t: Array) -> tuple[State, Array]:
        pendulum = states.env_state
        torque = jax.vmap(choose, in_axes=(None, 0, 0))(to_go[HORIZON - t - 1], pendulum.theta, pendulum.theta_dot)
        states = envs.step(states, torque[:, None])
        return states, states.reward

    @jax.jit
    def play(states: State) -> tuple[Array, Array]:
        final, rewards = jax.lax.scan(act, states, jnp.arange(HORIZON))
        return rewards.sum(axis=0), final.termination | final.truncation

    returns, ended = play(starts)
    assert bool(ended.all()), "every episode ends at the env's time limit"
    return returns


def main() -> None:
    parser = argparse.ArgumentParser(description="How well gymnax Pendulum-v1 can be played.")
    parser.add_argument("--angles", type=int, default=361, help="grid points of the angle")
    parser.add_argument("--speeds", type=int, default=321, help="grid points of the angular velocity")
    parser.add_argument("--torques", type=int, default=41, help="torque levels of each backup")
    parser.add_argument("--starts", type=int, default=8192, help="uniformly drawn starts for the expected score")
    args = parser.parse_args()
    env = parallax_zoo.make(ENV_ID)
    fixed = protocol(parallax_zoo.spec(ENV_ID))
    reset_key, _ = jax.random.split(jax.random.key(fixed.root_seed))  # as `rollout.play_episodes` splits it
    grid = (args.angles, args.speeds, args.torques)
    protocol_envs, drawn_envs = VmapWrapper(env, fixed.episodes), VmapWrapper(env, args.starts)
    on_protocol = controller_returns(*grid, protocol_envs, protocol_envs.reset(key=reset_key))
    expected = controller_returns(*grid, drawn_envs, drawn_envs.reset(key=jax.random.key(1)))
    print(f"grid {args.angles} angles x {args.speeds} speeds x {args.torques} torques")
    print(f"the protocol's {fixed.episodes} starts: mean {float(on_protocol.mean()):.2f}")
    print(
        f"{args.starts} uniformly drawn starts: mean {float(expected.mean()):.2f} "
        f"(standard error {float(expected.std() / args.starts**0.5):.2f})"
    )


if __name__ == "__main__":
    main()
