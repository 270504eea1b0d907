"""Wrapper overhead: `VmapWrapper(AutoResetWrapper(TimeLimit(env)))` against the same env by hand.

The hand-written peer steps the bare env with `jax.vmap`, applies the time
limit and resets finished envs with `jnp.where`, exactly what the wrappers do.
Both run a `lax.scan` of random actions in one process; runs are interleaved
and the median reported, compile time separately. Target: ratio >= 0.95.

    python benchmarks/bench_wrappers.py [--num-envs 1024] [--steps 1000] [--repeats 7]
"""

from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp
from timing import compare, print_table

from parallax import AutoResetWrapper, TimeLimit, VmapWrapper
from parallax_zoo.envs.gridworld import GridWorld

MAX_STEPS = 200


def wrapped_rollout(num_envs: int, steps: int):
    env = VmapWrapper(AutoResetWrapper(TimeLimit(GridWorld(), max_steps=MAX_STEPS)), num_envs=num_envs)

    @jax.jit
    def run(key):
        reset_key, scan_key = jax.random.split(key)
        state = env.reset(key=reset_key)

        def body(state, key):
            action = jax.random.randint(key, (num_envs,), 0, 4)
            state = env.step(state, action)
            return state, state.reward

        state, rewards = jax.lax.scan(body, state, jax.random.split(scan_key, steps))
        return rewards.sum()

    return run


def manual_rollout(num_envs: int, steps: int):
    env = GridWorld()

    @jax.jit
    def run(key):
        reset_key, scan_key = jax.random.split(key)
        state = jax.vmap(lambda k: env.reset(key=k))(jax.random.split(reset_key, num_envs))

        def body(state, key):
            action_key, reset_key = jax.random.split(key)
            action = jax.random.randint(action_key, (num_envs,), 0, 4)
            next_state = jax.vmap(env.step)(state, action)
            truncation = next_state.step_count >= MAX_STEPS
            done = next_state.termination | truncation
            fresh = jax.vmap(lambda k: env.reset(key=k))(jax.random.split(reset_key, num_envs))

            def select(new, old):
                return jnp.where(jnp.reshape(done, done.shape + (1,) * (new.ndim - 1)), new, old)

            reward = next_state.reward
            state = jax.tree_util.tree_map(select, fresh, next_state)
            return state, reward

        state, rewards = jax.lax.scan(body, state, jax.random.split(scan_key, steps))
        return rewards.sum()

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num-envs", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    timings = compare(
        {
            "parallax wrappers": wrapped_rollout(args.num_envs, args.steps),
            "by hand": manual_rollout(args.num_envs, args.steps),
        },
        repeats=args.repeats,
    )
    total = args.num_envs * args.steps
    ours, peer = timings["parallax wrappers"], timings["by hand"]
    rows = [
        (t.name, f"{t.compile_s:.2f}", f"{t.median_s * 1e3:.1f}", f"{total / t.median_s / 1e6:.2f}")
        for t in (ours, peer)
    ]
    print_table(
        f"GridWorld, {args.num_envs} envs x {args.steps} steps, median of {args.repeats} interleaved runs",
        rows,
        ("rollout", "compile+first run s", "median ms", "M steps/s"),
    )
    print(f"\nthroughput ratio wrappers / by hand: {peer.median_s / ours.median_s:.3f} (target >= 0.95)")


if __name__ == "__main__":
    main()
