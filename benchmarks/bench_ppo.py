"""PPO training time on gymnax/CartPole-v1: ours, and side by side with PureJaxRL's `ppo.py`.

The settings default to PureJaxRL's own CartPole-v1 config (4 envs x 128
steps, 5e5 steps, 4 epochs of 4 minibatches, 64x64 tanh, lr 2.5e-4 annealed).
Each program is compiled ahead of time from cold caches (compile time printed
apart; wall and CPU seconds of compile and runs, `timing.compare_compiled`), then the
programs run in turns, `--repeats` times, each run with a fresh seed; training
time is the median run, with the fastest and slowest beside it, and the final
return (mean over envs of each env's latest finished episode) is listed per
run. Every program returns its trained params and its final return only, so
XLA drops the unread per-step metrics of both sides alike. One row trains one
seed, the other `--seeds` seeds vmapped in one program.

`--purejaxrl DIR` adds PureJaxRL, imported at run time from a checkout of its
public repository (`luchris429/purejaxrl`; it needs `distrax` importable).
Nothing of it is copied here. Two adjustments let it run unchanged: gymnax
1.x steps return `(obs, state, reward, terminated, truncated, info)` where
PureJaxRL unpacks five values, so it gets a view of the gymnax env whose step
returns `terminated | truncated` as `done`; and its `wrappers.py` imports
navix and brax for other envs, so those imports get empty stand-ins. For the
vmapped row, its orthogonal initializer is flax's drawn one matrix at a time
(`networks.orthogonal`, the same weights): XLA:CPU's batched QR, which vmapping
flax's would use, can deadlock, and does here at 16 seeds. The
ratio is PureJaxRL's time over ours (above 1: ours is faster), per pair of
interleaved runs. The two differ in one known way: PureJaxRL treats every
episode end as terminal, ours bootstraps truncated episodes from the value of
their last observation. Its learning rate falls once per update, ours once per
minibatch, along the same line.

    python benchmarks/bench_ppo.py [--repeats 5] [--seeds 16]
    python benchmarks/bench_ppo.py --purejaxrl PATH [--num-envs 256 --total-timesteps 10000000]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import numpy as np
from peers import import_script, require
from timing import Timing, compare_compiled

from parallax_zoo.agents.networks import orthogonal
from parallax_zoo.agents.ppo import PPOConfig, make_train

ENV_ID = "gymnax/CartPole-v1"
PUREJAXRL_ENV = "CartPole-v1"
CONFIG = PPOConfig(env_id=ENV_ID, num_envs=4, num_steps=128, total_timesteps=500_000)
"""PureJaxRL's CartPole-v1 settings (the rest are `PPOConfig`'s defaults, which are PureJaxRL's too)."""


def cartpole() -> Any:
    """The registered CartPole (TimeLimit and adapter as `make` applies them)."""
    import parallax_zoo

    return parallax_zoo.make(ENV_ID)  # pyright: ignore[reportAttributeAccessIssue]


def ours(config: PPOConfig, seeds: int) -> Callable[[jax.Array], Any]:
    """Our training as a function of a raw key (one per seed): trained params and final return."""
    train = make_train(config, cartpole())

    def run(raw_key: jax.Array) -> Any:
        policy, metrics = train(jax.random.wrap_key_data(raw_key))
        return policy.params, metrics["episode_return"][-1]

    return run if seeds == 1 else jax.vmap(run)


def measure(train: Any, keys: Any, repeats: int, config: PPOConfig = CONFIG) -> dict[str, float]:
    """Compile `train` (made from `config`) once, time `repeats` runs on `keys`: seconds, final return, steps/s."""
    timing = compare_compiled({"ours": train}, lambda _: keys, repeats)["ours"]
    final = np.stack([np.asarray(metrics["episode_return"])[..., -1] for _, metrics in timing.outputs])
    seeds = 1 if keys.ndim == 0 else keys.shape[0]
    steps = seeds * config.num_updates * config.num_envs * config.num_steps
    return {
        "compile_s": timing.compile_s,
        "train_s": timing.median_s,
        "final_return": float(np.mean(final[-1])),
        "worst_final_return": float(np.min(final[-1])),
        "steps_per_s": steps / timing.median_s,
        "steps_per_s_with_compile": steps / (timing.median_s + timing.compile_s),
    }


class FiveValueStep:
    """A gymnax env whose `step` returns five values, `terminated | truncated` as `done` (gymnax 0.x's form)."""

    def __init__(self, env: Any):
        self._env = env

    def step(self, key: Any, state: Any, action: Any, params: Any = None) -> Any:
        obs, state, reward, terminated, truncated, info = self._env.step(key, state, action, params)
        return obs, state, reward, terminated | truncated, info

    def __getattr__(self, name: str) -> Any:
        return getattr(self._env, name)


def load_purejaxrl(checkout: Path, script: str = "ppo") -> types.ModuleType:
    """PureJaxRL's `script` module (`ppo`, `ppo_rnn`) from a checkout, its gymnax envs seen through `FiveValueStep`."""
    folder = checkout / "purejaxrl"
    if not (folder / f"{script}.py").is_file():
        sys.exit(f"--purejaxrl: no purejaxrl/{script}.py under {checkout}; pass a checkout of luchris429/purejaxrl.")
    require("distrax", f"PureJaxRL's {script}.py")
    import gymnax

    unused = ("navix", "brax", "brax.envs", "brax.envs.wrappers", "brax.envs.wrappers.training")
    module = import_script(folder, script, {name: {} for name in unused})

    def make(name: str, **kwargs: Any) -> tuple[Any, Any]:
        env, params = gymnax.make(name, **kwargs)
        return FiveValueStep(env), params

    setattr(module, "gymnax", types.SimpleNamespace(make=make))  # the name the script reaches gymnax.make by
    setattr(module, "orthogonal", orthogonal)  # flax's, drawn one matrix at a time under vmap (networks.orthogonal)
    return module


def purejaxrl_config(config: PPOConfig, env_name: str = PUREJAXRL_ENV) -> dict[str, Any]:
    """PureJaxRL's config dict with the same settings as `config`, for its env `env_name`."""
    return {
        "LR": config.learning_rate,
        "NUM_ENVS": config.num_envs,
        "NUM_STEPS": config.num_steps,
        "TOTAL_TIMESTEPS": config.total_timesteps,
        "UPDATE_EPOCHS": config.update_epochs,
        "NUM_MINIBATCHES": config.num_minibatches,
        "GAMMA": config.gamma,
        "GAE_LAMBDA": config.gae_lambda,
        "CLIP_EPS": config.clip_eps,
        "ENT_COEF": config.ent_coef,
        "VF_COEF": config.vf_coef,
        "MAX_GRAD_NORM": config.max_grad_norm,
        "ACTIVATION": config.activation,
        "ENV_NAME": env_name,
        "ANNEAL_LR": config.anneal_lr,
        "DEBUG": False,
    }


def theirs(ppo: types.ModuleType, config: PPOConfig, seeds: int) -> Callable[[jax.Array], Any]:
    """PureJaxRL's training as a function of a raw key: trained params and final return."""
    train = ppo.make_train(purejaxrl_config(config))

    def run(raw_key: jax.Array) -> Any:
        train_state, env_state, *_ = train(raw_key)["runner_state"]
        return train_state.params, env_state.returned_episode_returns.mean()

    return run if seeds == 1 else jax.vmap(run)


def check_settings(config: PPOConfig, script: str = "ppo.py", **fixed: Any) -> None:
    """The settings PureJaxRL's `script` has no switch for must be at its values: `fixed` (default: `ppo.py`'s
    network) and the loss options every PureJaxRL PPO script hard-codes."""
    fixed = (fixed or {"hidden_sizes": (64, 64)}) | {
        "clip_value": True,
        "vf_clip": config.clip_eps,
        "normalize_advantages": True,
    }
    wrong = [f"{name}={getattr(config, name)!r}" for name, value in fixed.items() if getattr(config, name) != value]
    if wrong or config.normalize_obs or config.vtrace:
        sys.exit(f"--purejaxrl: PureJaxRL's {script} cannot match {', '.join(wrong) or 'these settings'}.")


def run_keys(seeds: int) -> Callable[[int], jax.Array]:
    """Raw keys of run `i`: one key, or `seeds` keys for the vmapped program."""

    def keys(i: int) -> jax.Array:
        key = jax.random.PRNGKey(i)
        return key if seeds == 1 else jax.random.split(key, seeds)

    return keys


def final_returns(timing: Timing) -> list[float]:
    """Each run's final return (mean over seeds for a vmapped run)."""
    return [float(np.mean(out[1])) for out in timing.outputs]


def worst_seed(timing: Timing) -> float:
    return float(min(np.min(out[1]) for out in timing.outputs))


def report(name: str, config: PPOConfig, seeds: int, timings: dict[str, Timing]) -> None:
    steps = seeds * config.num_updates * config.num_envs * config.num_steps
    print(f"\n{name}: {steps:.3g} env steps per run")
    print(
        f"{'':<10}{'compile s':>10}{'(cpu s)':>9}{'train s':>9}{'(min-max)':>16}{'(cpu s)':>9}{'steps/s':>12}"
        "  final return per run (worst seed)"
    )
    for who, t in timings.items():
        fastest, slowest = t.range_s
        returns = " ".join(f"{r:.0f}" for r in final_returns(t))
        print(
            f"{who:<10}{t.compile_s:>10.2f}{f'({t.compile_cpu_s:.2f})':>9}{t.median_s:>9.2f}"
            f"{f'({fastest:.2f}-{slowest:.2f})':>16}{f'({t.median_cpu_s:.2f})':>9}{steps / t.median_s:>12,.0f}"
            f"  {returns} ({worst_seed(t):.0f})"
        )
    if "PureJaxRL" in timings:
        ours_t, theirs_t = timings["ours"], timings["PureJaxRL"]
        ratios = [b / a for a, b in zip(ours_t.runs_s, theirs_t.runs_s)]
        cpu_ratios = [b / a for a, b in zip(ours_t.runs_cpu_s, theirs_t.runs_cpu_s)]
        print(
            f"speed ratio (PureJaxRL time / ours): {theirs_t.median_s / ours_t.median_s:.2f}x "
            f"(runs {min(ratios):.2f}-{max(ratios):.2f}); in cpu s {theirs_t.median_cpu_s / ours_t.median_cpu_s:.2f}x "
            f"(runs {min(cpu_ratios):.2f}-{max(cpu_ratios):.2f})\n"
            f"compile ratio {theirs_t.compile_s / ours_t.compile_s:.2f}x (cpu s "
            f"{theirs_t.compile_cpu_s / ours_t.compile_cpu_s:.2f}x)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description="PPO training-time benchmark on gymnax/CartPole-v1")
    parser.add_argument("--purejaxrl", type=Path, help="a checkout of luchris429/purejaxrl to run beside ours")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs of each program after compile")
    parser.add_argument("--seeds", type=int, default=16, help="seeds of the vmapped row (0: skip it)")
    parser.add_argument("--num-envs", type=int, default=CONFIG.num_envs)
    parser.add_argument("--num-steps", type=int, default=CONFIG.num_steps)
    parser.add_argument("--total-timesteps", type=int, default=CONFIG.total_timesteps)
    args = parser.parse_args()
    config = dataclasses.replace(
        CONFIG, num_envs=args.num_envs, num_steps=args.num_steps, total_timesteps=args.total_timesteps
    )
    peer = None
    if args.purejaxrl is not None:
        check_settings(config)
        peer = load_purejaxrl(args.purejaxrl)
    print(
        f"PPO on {ENV_ID}: {config.num_envs} envs x {config.num_steps} steps, {config.num_updates} updates "
        f"of {config.update_epochs} epochs x {config.num_minibatches} minibatches; devices: {jax.devices()}"
    )
    for seeds in [1] + ([args.seeds] if args.seeds > 1 else []):
        candidates = {"ours": ours(config, seeds)}
        if peer is not None:
            candidates["PureJaxRL"] = theirs(peer, config, seeds)
        timings = compare_compiled(candidates, run_keys(seeds), args.repeats)
        report("1 seed" if seeds == 1 else f"{seeds} seeds (vmap)", config, seeds, timings)


if __name__ == "__main__":
    main()
