"""PPO training throughput with the env batch sharded over 1, 2 and 4 simulated CPU devices.

XLA fixes the device count when jax starts, so each device count runs in its
own interpreter with `--xla_force_host_platform_device_count=N`, on a mesh of
all N devices (`sharding.default_mesh()`). The 1-device run also times the
same training without a mesh, interleaved, to show what the sharding
constraints cost. Simulated devices share the machine's real cores, so the
scaling is bounded by their number (printed); it is reported, not asserted.

    python benchmarks/bench_sharding.py [--devices 1 2 4] [--repeats 5] [--updates 4]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from timing import compare, print_table

ROOT = Path(__file__).resolve().parent.parent
ENV_ID = "GridWorld-v0"
NUM_ENVS = 64
NUM_STEPS = 64


def run_on_this_process(updates: int, repeats: int) -> dict[str, dict[str, float]]:
    """Time PPO training with and (on one device) without a mesh; seconds per update and env steps per second."""
    import jax

    import parallax_zoo
    from parallax_zoo.agents.ppo import PPOConfig, make_train
    from parallax_zoo.agents.sharding import default_mesh

    config = PPOConfig(
        env_id=ENV_ID, num_envs=NUM_ENVS, num_steps=NUM_STEPS, total_timesteps=NUM_ENVS * NUM_STEPS * updates
    )
    env = parallax_zoo.make(ENV_ID)
    candidates = {"mesh": jax.jit(make_train(config, env, default_mesh()))}
    if len(jax.devices()) == 1:
        candidates["no mesh"] = jax.jit(make_train(config, env))
    timings = compare(candidates, repeats=repeats)
    steps = config.num_updates * config.num_envs * config.num_steps
    return {
        name: {
            "compile_s": t.compile_s,
            "update_s": t.median_s / config.num_updates,
            "steps_per_s": steps / t.median_s,
        }
        for name, t in timings.items()
    }


def run_in_subprocess(devices: int, updates: int, repeats: int) -> dict[str, dict[str, float]]:
    """`run_on_this_process` in a fresh interpreter that sees `devices` CPU devices."""
    env = {
        **os.environ,
        "XLA_FLAGS": f"--xla_force_host_platform_device_count={devices}",
        "JAX_PLATFORMS": "cpu",
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    command = [sys.executable, __file__, "--child", "--updates", str(updates), "--repeats", str(repeats)]
    result = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"the {devices}-device run failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description="PPO throughput with the env batch sharded over simulated devices")
    parser.add_argument("--devices", type=int, nargs="+", default=[1, 2, 4], help="device counts to run")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs after compile (median reported)")
    parser.add_argument("--updates", type=int, default=4, help="PPO updates per timed run")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_on_this_process(args.updates, args.repeats)))
        return

    print(f"PPO on {ENV_ID}: {NUM_ENVS} envs x {NUM_STEPS} steps per update, {args.updates} updates per run")
    print(f"real CPU cores: {os.cpu_count()}; simulated devices share them")
    results = {devices: run_in_subprocess(devices, args.updates, args.repeats) for devices in args.devices}
    base = results[args.devices[0]]["mesh"]["steps_per_s"]
    rows = []
    for devices, runs in results.items():
        for name, r in sorted(runs.items()):
            rows.append(
                (
                    str(devices),
                    name,
                    f"{r['compile_s']:.2f}",
                    f"{r['update_s'] * 1000:.1f}",
                    f"{r['steps_per_s']:,.0f}",
                    f"{r['steps_per_s'] / base:.2f}x",
                )
            )
    header = ("devices", "run", "first call s", "ms / update", "env steps/s", f"vs {args.devices[0]} device(s)")
    print_table("Sharded PPO training (median after the first call)", rows, header)


if __name__ == "__main__":
    main()
