"""Env steps per second of every registered native env, with random legal actions, beside the protocol documentation's
examples.

Each env runs as `VmapWrapper(AutoResetWrapper(make(id)), num_envs)` inside
one jitted `lax.scan` at 1, 128 and 1024 envs. Where the protocol documentation has an example
of the same env (tests/helpers/example_envs.py: GridWorld, MaskedGridWorld, Race),
that example runs under the same wrappers as the peer, and the table prints
ours / peer. Configurations are interleaved, each timing is the median of
the repeats, and compile time is reported separately.

    python benchmarks/bench_envs.py [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from helpers import example_envs  # noqa: E402  # pyright: ignore[reportMissingImports]

import parallax_zoo  # noqa: E402
from parallax import AutoResetWrapper, MARLState, TimeLimit, VmapWrapper  # noqa: E402
from parallax.spaces import Discrete  # noqa: E402

SEED_EXAMPLES: dict[str, Callable[[], Any]] = {
    "GridWorld-v0": example_envs.GridWorld,
    "GridWorld-Masked-v0": example_envs.MaskedGridWorld,
    "Race-v0": example_envs.Race,
}
"""The protocol documentation's example each native env grew from: the peer it is timed against."""

NUM_ENVS = (1, 128, 1024)


def random_legal_action(space: Any, state: Any, key: jax.Array) -> jax.Array:
    """One env's random action: uniform over the legal ones where the state carries an action mask."""
    mask = state.agents.action_mask if isinstance(state, MARLState) else getattr(state, "action_mask", None)
    if mask is not None and isinstance(space, Discrete):
        return jax.random.categorical(key, jnp.where(mask, 0.0, -jnp.inf)).astype(space.dtype)
    return space.sample(key=key)


def build_rollout(env: Any, num_envs: int, num_steps: int) -> tuple[Any, Any]:
    """A jitted `(state, key) -> state` that runs `num_steps` random steps, and its first state."""
    vector = VmapWrapper(AutoResetWrapper(env), num_envs=num_envs)

    def body(carry: tuple[Any, jax.Array], _: None) -> tuple[tuple[Any, jax.Array], None]:
        state, key = carry
        key, action_key = jax.random.split(key)
        keys = jax.random.split(action_key, num_envs)
        action = jax.vmap(lambda s, k: random_legal_action(vector.action_space, s, k))(state, keys)
        return (vector.step(state, action), key), None

    def rollout(state: Any, key: jax.Array) -> Any:
        (state, _), _ = jax.lax.scan(body, (state, key), None, length=num_steps)
        return state

    return jax.jit(rollout), jax.jit(lambda key: vector.reset(key=key))(jax.random.key(0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer steps and repeats (a smoke run)")
    args = parser.parse_args()
    num_steps, repeats = (100, 3) if args.quick else (1000, 5)

    native_ids = [i for i in parallax_zoo.list_envs() if parallax_zoo.spec(i).kind == "native"]
    runs: dict[tuple[str, str, int], tuple[Callable, Any]] = {}
    compile_s: dict[tuple[str, str, int], float] = {}
    key = jax.random.key(1)
    for env_id in native_ids:
        makers = {"ours": lambda env_id=env_id: parallax_zoo.make(env_id)}
        if env_id in SEED_EXAMPLES:
            max_steps = parallax_zoo.spec(env_id).max_steps or num_steps
            makers["seed"] = lambda env_id=env_id, m=max_steps: TimeLimit(SEED_EXAMPLES[env_id](), m)
        for who, make in makers.items():
            for n in NUM_ENVS:
                rollout, state = build_rollout(make(), n, num_steps)
                start = time.perf_counter()
                compiled = rollout.lower(state, key).compile()
                compile_s[(env_id, who, n)] = time.perf_counter() - start
                jax.block_until_ready(compiled(state, key))
                runs[(env_id, who, n)] = (compiled, state)

    timings: dict[tuple[str, str, int], list[float]] = {config: [] for config in runs}
    for _ in range(repeats):
        for config, (compiled, state) in runs.items():
            start = time.perf_counter()
            jax.block_until_ready(compiled(state, key))
            timings[config].append(time.perf_counter() - start)

    print(f"jax {jax.__version__} on {jax.devices()[0].platform}; {num_steps} steps per run, median of {repeats}")
    print(f"{'env':<22}{'envs':>6}{'compile s':>11}{'steps/s':>14}{'seed steps/s':>15}{'ours/seed':>11}")
    for env_id in native_ids:
        for n in NUM_ENVS:
            ours = n * num_steps / statistics.median(timings[(env_id, "ours", n)])
            seed_cell, ratio_cell = "-", "-"
            if (env_id, "seed", n) in timings:
                seed = n * num_steps / statistics.median(timings[(env_id, "seed", n)])
                seed_cell, ratio_cell = f"{seed:,.0f}", f"{ours / seed:.2f}"
            print(
                f"{env_id:<22}{n:>6}{compile_s[(env_id, 'ours', n)]:>11.2f}{ours:>14,.0f}"
                f"{seed_cell:>15}{ratio_cell:>11}"
            )


if __name__ == "__main__":
    main()
