"""Export overhead: `to_gymnasium` and `to_gymnasium_vector` against the jitted JAX step called by hand from Python.

Both sides do the same work per step, in one process: step the env with a
NumPy action, bring the observation, reward and flags to NumPy, and reset
where an episode ended. The single env restarts with its own `reset` when
done; the vector env auto-resets inside its one jitted step, and the hand
peer steps `VmapWrapper` and resets the finished envs in one jitted call.
Rounds alternate between the candidates and the median round is reported;
compilation happens before timing. The export fetches a step's reward and
flags in one transfer; the second hand-written peer does so too, so that the
ratio against it is the export's own overhead. Targets: `to_gymnasium` at
most 10% slower than by hand (ratio >= 0.9); the vector ratio is reported
at 1, 128 and 1024 envs.

    python benchmarks/bench_interop.py [--env GridWorld-v0] [--steps 2000] [--rounds 7]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
from timing import print_table

import parallax_zoo
from parallax import VmapWrapper
from parallax.interop import to_gymnasium, to_gymnasium_vector

Loop = Callable[[np.ndarray], None]


def gymnasium_loop(env_id: str) -> Loop:
    env = to_gymnasium(parallax_zoo.make(env_id))
    env.reset(seed=0)

    def run(actions: np.ndarray) -> None:
        for action in actions:
            _, _, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                env.reset()

    return run


def by_hand_loop(env_id: str) -> Loop:
    env = parallax_zoo.make(env_id)

    @jax.jit
    def reset(key):
        key, reset_key = jax.random.split(key)
        return key, env.reset(key=reset_key)

    step = jax.jit(env.step)
    key, state = reset(jax.random.key(0))
    carry = {"key": key, "state": state}

    def run(actions: np.ndarray) -> None:
        key, state = carry["key"], carry["state"]
        for action in actions:
            state = step(state, action)
            np.asarray(state.observation), float(state.reward)
            if bool(state.termination) or bool(state.truncation):
                key, state = reset(key)
        carry["key"], carry["state"] = key, state

    return run


def by_hand_packed_loop(env_id: str) -> Loop:
    """The by-hand loop with the export's own trick: reward and flags come back in one array, one transfer."""
    env = parallax_zoo.make(env_id)

    @jax.jit
    def reset(key):
        key, reset_key = jax.random.split(key)
        return key, env.reset(key=reset_key)

    @jax.jit
    def step(state, action):
        state = env.step(state, action)
        return state, jnp.stack([state.reward, state.termination, state.truncation]).astype(jnp.float32)

    key, state = reset(jax.random.key(0))
    carry = {"key": key, "state": state}

    def run(actions: np.ndarray) -> None:
        key, state = carry["key"], carry["state"]
        for action in actions:
            state, scalars = step(state, action)
            np.asarray(state.observation)
            _, termination, truncation = np.asarray(scalars).tolist()
            if termination or truncation:
                key, state = reset(key)
        carry["key"], carry["state"] = key, state

    return run


def gymnasium_vector_loop(env_id: str, num_envs: int) -> Loop:
    env = to_gymnasium_vector(parallax_zoo.make(env_id), num_envs)
    env.reset(seed=0)

    def run(actions: np.ndarray) -> None:
        for action in actions:
            env.step(action)

    return run


def vmap_by_hand_loop(env_id: str, num_envs: int) -> Loop:
    env = VmapWrapper(parallax_zoo.make(env_id), num_envs)

    @jax.jit
    def step(key, state, action):
        key, reset_key = jax.random.split(key)
        state = env.step(state, action)
        view = state.observation, state.reward, state.termination, state.truncation
        return key, env.reset(key=reset_key, state=state, done=state.done), view

    carry = {"key": jax.random.key(1), "state": env.reset(key=jax.random.key(0))}

    def run(actions: np.ndarray) -> None:
        key, state = carry["key"], carry["state"]
        for action in actions:
            key, state, view = step(key, state, action)
            for array in view:
                np.asarray(array)
        carry["key"], carry["state"] = key, state

    return run


def interleaved(candidates: dict[str, Loop], actions: np.ndarray, rounds: int) -> dict[str, float]:
    """Steps per second of each candidate: one warm-up round each, then `rounds` alternating rounds, the median."""
    for run in candidates.values():
        run(actions[: max(1, len(actions) // 10)])
    seconds: dict[str, list[float]] = {name: [] for name in candidates}
    for _ in range(rounds):
        for name, run in candidates.items():
            start = time.perf_counter()
            run(actions)
            seconds[name].append(time.perf_counter() - start)
    return {name: len(actions) / statistics.median(runs) for name, runs in seconds.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="GridWorld-v0", help="a single-agent zoo id with a Discrete action space")
    parser.add_argument("--steps", type=int, default=2000, help="Python-side steps per round")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--num-envs", type=int, nargs="+", default=[1, 128, 1024])
    args = parser.parse_args()
    num_actions = parallax_zoo.make(args.env).action_space.n
    rng = np.random.default_rng(0)

    actions = rng.integers(0, num_actions, args.steps).astype(np.int32)
    single = interleaved(
        {
            "to_gymnasium": gymnasium_loop(args.env),
            "jitted step by hand": by_hand_loop(args.env),
            "jitted step by hand, one transfer": by_hand_packed_loop(args.env),
        },
        actions,
        args.rounds,
    )
    ours = single["to_gymnasium"]
    print_table(
        f"{args.env}, one env stepped from Python, {args.steps} steps x {args.rounds} interleaved rounds (median)",
        [(name, f"{rate:,.0f}", f"{ours / rate:.3f}") for name, rate in single.items()],
        ("loop", "steps/s", "to_gymnasium / this"),
    )
    print("\ntarget: to_gymnasium / by hand >= 0.90")

    rows = []
    for num_envs in args.num_envs:
        steps = max(200, args.steps // max(1, num_envs // 64))
        batch = rng.integers(0, num_actions, (steps, num_envs)).astype(np.int32)
        rates = interleaved(
            {
                "to_gymnasium_vector": gymnasium_vector_loop(args.env, num_envs),
                "VmapWrapper by hand": vmap_by_hand_loop(args.env, num_envs),
            },
            batch,
            args.rounds,
        )
        ours, peer = rates["to_gymnasium_vector"] * num_envs, rates["VmapWrapper by hand"] * num_envs
        rows.append((str(num_envs), f"{ours:,.0f}", f"{peer:,.0f}", f"{ours / peer:.3f}"))
    print_table(
        f"{args.env}, vector env stepped from Python, {args.rounds} interleaved rounds (median)",
        rows,
        ("envs", "to_gymnasium_vector env-steps/s", "VmapWrapper by hand env-steps/s", "ratio"),
    )


if __name__ == "__main__":
    main()
