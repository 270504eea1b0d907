"""Recurrent PPO training time on gymnax/CartPole-v1: ours (`policy=recurrent`) beside PureJaxRL's `ppo_rnn.py`.

The settings default to `ppo_rnn.py`'s own (4 envs x 128 steps, 5e5 steps, 4 epochs of 4 minibatches
of whole env sequences, lr 2.5e-4 annealed) and its network: a 128-wide ReLU embedding, a GRU of 128
units, then 128-wide ReLU actor and critic heads. Timing is `bench_ppo.py`'s: each program compiled
ahead of time from cold caches (compile apart), then run in turns `--repeats` times with fresh seeds;
the median run with the fastest and slowest beside it, wall and CPU seconds, and each run's final
return (mean over envs of each env's latest finished episode).

`--purejaxrl DIR` adds PureJaxRL, imported at run time from a checkout of its public repository
(`luchris429/purejaxrl`; it needs `distrax`), with `bench_ppo.py`'s two adjustments: gymnax 1.x's
six-value step seen as the five values it unpacks, and empty stand-ins for the navix and brax imports
of its `wrappers.py`; and a third for flax: `ppo_rnn.py` was written for flax < 0.8, whose `GRUCell`
took its width from the carry and had a static `initialize_carry(key, batch_dims, size)`, so its
`nn.GRUCell` is flax's with `features=128` (its width) and that static method (`LegacyGRUCell`): the
same cell, parameters and zero carry. Nothing of it is copied here. The known differences: PureJaxRL treats every
episode end as terminal, ours bootstraps truncated episodes from one more step of the hidden state;
its learning rate falls once per update, ours once per minibatch, along the same line.

    python benchmarks/bench_ppo_rnn.py [--repeats 5]
    python benchmarks/bench_ppo_rnn.py --purejaxrl PATH [--total-timesteps 100000]
"""

from __future__ import annotations

import argparse
import dataclasses
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import flax.linen as nn
import jax
import jax.numpy as jnp
from bench_ppo import (
    ENV_ID,
    cartpole,
    check_settings,
    load_purejaxrl,
    purejaxrl_config,
    report,
    run_keys,
)
from timing import compare_compiled

from parallax_zoo.agents.ppo import PPOConfig, make_train

CONFIG = PPOConfig(
    env_id=ENV_ID,
    num_envs=4,
    num_steps=128,
    total_timesteps=500_000,
    policy="recurrent",
    hidden_sizes=(128, 128),
    activation="relu",
    rnn_hidden=128,
)
"""`ppo_rnn.py`'s settings and network (the rest are `PPOConfig`'s defaults, which are its values too)."""


def ours(config: PPOConfig, seeds: int) -> Callable[[jax.Array], Any]:
    """Our recurrent training as a function of a raw key (one per seed): trained params and final return."""
    train = make_train(config, cartpole())

    def run(raw_key: jax.Array) -> Any:
        policy, metrics = train(jax.random.wrap_key_data(raw_key))
        return policy.params, metrics["episode_return"][-1]

    return run if seeds == 1 else jax.vmap(run)


class LegacyGRUCell(nn.GRUCell):
    """flax's `GRUCell` as flax < 0.8 spelt it: the width `ppo_rnn.py` uses by default, a static zero carry."""

    features: int = 128

    @staticmethod
    def initialize_carry(  # pyright: ignore[reportIncompatibleMethodOverride]
        rng: Any, batch_dims: Any, size: int
    ) -> Any:
        return jnp.zeros(tuple(batch_dims) + (size,))


def load_ppo_rnn(checkout: Path) -> types.ModuleType:
    """PureJaxRL's `ppo_rnn` module from a checkout (`bench_ppo.load_purejaxrl`), its `nn.GRUCell` the legacy one."""
    ppo_rnn = load_purejaxrl(checkout, "ppo_rnn")
    linen = types.SimpleNamespace(**{name: getattr(nn, name) for name in dir(nn) if not name.startswith("__")})
    linen.GRUCell = LegacyGRUCell
    setattr(ppo_rnn, "nn", linen)  # read when its modules run, not when they were defined
    return ppo_rnn


def theirs(ppo_rnn: types.ModuleType, config: PPOConfig, seeds: int) -> Callable[[jax.Array], Any]:
    """PureJaxRL's recurrent training as a function of a raw key: trained params and final return."""
    train = ppo_rnn.make_train(purejaxrl_config(config))

    def run(raw_key: jax.Array) -> Any:
        train_state, env_state, *_ = train(raw_key)["runner_state"]
        return train_state.params, env_state.returned_episode_returns.mean()

    return run if seeds == 1 else jax.vmap(run)


def main() -> None:
    parser = argparse.ArgumentParser(description="Recurrent PPO training-time benchmark on gymnax/CartPole-v1")
    parser.add_argument("--purejaxrl", type=Path, help="a checkout of luchris429/purejaxrl to run beside ours")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs of each program after compile")
    parser.add_argument("--seeds", type=int, default=0, help="seeds of a vmapped row (0: skip it)")
    parser.add_argument("--num-envs", type=int, default=CONFIG.num_envs)
    parser.add_argument("--num-steps", type=int, default=CONFIG.num_steps)
    parser.add_argument("--total-timesteps", type=int, default=CONFIG.total_timesteps)
    args = parser.parse_args()
    config = dataclasses.replace(
        CONFIG, num_envs=args.num_envs, num_steps=args.num_steps, total_timesteps=args.total_timesteps
    )
    peer = None
    if args.purejaxrl is not None:
        check_settings(config, "ppo_rnn.py", hidden_sizes=(128, 128), rnn_hidden=128, activation="relu")
        peer = load_ppo_rnn(args.purejaxrl)
    print(
        f"recurrent PPO on {ENV_ID}: {config.num_envs} envs x {config.num_steps} steps, {config.num_updates} updates "
        f"of {config.update_epochs} epochs x {config.num_minibatches} minibatches of whole sequences; "
        f"devices: {jax.devices()}"
    )
    for seeds in [1] + ([args.seeds] if args.seeds > 1 else []):
        candidates = {"ours": ours(config, seeds)}
        if peer is not None:
            candidates["PureJaxRL"] = theirs(peer, config, seeds)
        timings = compare_compiled(candidates, run_keys(seeds), args.repeats)
        report("1 seed" if seeds == 1 else f"{seeds} seeds (vmap)", config, seeds, timings)


if __name__ == "__main__":
    main()
