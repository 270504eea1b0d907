"""PPO training time on gymnax/CartPole-v1: 4 envs x 128 steps for 5e5 steps, then the same vmapped over 4 seeds.

Reports compile time separately from training time (median of `--repeats`
runs after compile), the final return (mean over envs of the latest finished
episode at the last update; mean and worst over seeds) and env steps per second, after compile and for the
whole run including compile. No peer package is installed for comparison
(PureJaxRL is not a package), so only ours is printed.

    python benchmarks/bench_ppo.py [--repeats 3] [--seeds 4]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import jax
import numpy as np

from parallax_zoo.agents.ppo import PPOConfig, make_train

ENV_ID = "gymnax/CartPole-v1"
CONFIG = PPOConfig(env_id=ENV_ID, num_envs=4, num_steps=128, total_timesteps=500_000)


def cartpole() -> Any:
    """The registered CartPole (TimeLimit and adapter as `make` applies them)."""
    import parallax_zoo

    return parallax_zoo.make(ENV_ID)  # pyright: ignore[reportAttributeAccessIssue]


def measure(train: Any, keys: Any, repeats: int, config: PPOConfig = CONFIG) -> dict[str, float]:
    """Compile once, then time `repeats` runs of `train` (made from `config`); returns seconds, the final return and steps per second."""
    jitted = jax.jit(train)
    start = time.perf_counter()
    compiled = jitted.lower(keys).compile()
    compile_s = time.perf_counter() - start
    times, final = [], np.zeros(())
    for _ in range(repeats):
        start = time.perf_counter()
        _, metrics = compiled(keys)
        jax.block_until_ready(metrics)
        times.append(time.perf_counter() - start)
        final = np.asarray(metrics["episode_return"])[..., -1]
    seeds = 1 if keys.ndim == 0 else keys.shape[0]
    steps = seeds * config.num_updates * config.num_envs * config.num_steps
    train_s = statistics.median(times)
    return {
        "compile_s": compile_s,
        "train_s": train_s,
        "final_return": float(np.mean(final)),
        "worst_final_return": float(np.min(final)),
        "steps_per_s": steps / train_s,
        "steps_per_s_with_compile": steps / (train_s + compile_s),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="PPO training-time benchmark on gymnax/CartPole-v1")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs after compile (median reported)")
    parser.add_argument("--seeds", type=int, default=4, help="seeds for the vmapped run")
    args = parser.parse_args()
    env = cartpole()
    train = make_train(CONFIG, env)
    print(f"PPO on {ENV_ID}: {CONFIG.num_envs} envs x {CONFIG.num_steps} steps, {CONFIG.total_timesteps:.0e} steps per seed")
    print(f"devices: {jax.devices()}")
    rows = [
        ("1 seed", measure(train, jax.random.key(0), args.repeats)),
        (f"{args.seeds} seeds (vmap)", measure(jax.vmap(train), jax.random.split(jax.random.key(0), args.seeds), args.repeats)),
    ]
    header = (
        f"{'run':<16}{'compile s':>11}{'train s':>10}{'final return':>14}{'worst seed':>12}"
        f"{'steps/s':>12}{'steps/s incl. compile':>23}"
    )
    print(header)
    for name, r in rows:
        print(
            f"{name:<16}{r['compile_s']:>11.2f}{r['train_s']:>10.2f}{r['final_return']:>14.1f}"
            f"{r['worst_final_return']:>12.1f}"
            f"{r['steps_per_s']:>12,.0f}{r['steps_per_s_with_compile']:>23,.0f}"
        )


if __name__ == "__main__":
    main()
