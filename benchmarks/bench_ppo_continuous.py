"""Continuous-action PPO (the `DiagGaussian` head) side by side with PureJaxRL's `ppo_continuous_action.py`.

Both train at that script's own settings (2048 envs x 10 steps, 4 epochs of 32
minibatches, 256x256 tanh networks, lr 3e-4 not annealed, no entropy bonus,
observations normalised), for fewer steps than its 5e7 (`--total-timesteps`),
on its default env, Brax `hopper` on the `positional` pipeline, and on gymnax
`Pendulum-v1` (`--env`). Timing, interleaving and the table are
`bench_ppo`'s (`timing.compare_compiled`: compile apart, wall and CPU seconds).

PureJaxRL is imported at run time from a checkout (`--purejaxrl DIR`, it needs
`distrax`), unchanged. Its script builds every env as `BraxGymnaxWrapper(name)`;
for Pendulum that name is bound to `GymnaxAsBrax`, which gives it gymnax's
Pendulum-v1 through the same interface. The two differ in known ways:
PureJaxRL also scales rewards by a running return std (`NormalizeVecReward`),
which our PPO does not have, and clips actions to [-1, 1] whatever the env's
bounds, where ours clips to the action space (Pendulum's torque is [-2, 2]);
episode ends it treats as terminal, ours bootstraps truncations.

    python benchmarks/bench_ppo_continuous.py --purejaxrl PATH [--env hopper|pendulum] [--repeats 3]
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
from bench_ppo import FiveValueStep, purejaxrl_config, report, run_keys
from peers import import_script, require
from timing import compare_compiled

from parallax_zoo.agents.ppo import PPOConfig, make_train

ENVS = {
    "hopper": ("brax/hopper", {"backend": "positional"}, "hopper"),
    "pendulum": ("gymnax/Pendulum-v1", {}, "Pendulum-v1"),
}
"""`--env` -> (our env id, its kwargs, the name PureJaxRL's script is given)."""

CONFIG = PPOConfig(
    num_envs=2048,
    num_steps=10,
    total_timesteps=2048 * 10 * 4,
    learning_rate=3e-4,
    anneal_lr=False,
    num_minibatches=32,
    ent_coef=0.0,
    hidden_sizes=(256, 256),
    normalize_obs=True,
    normalize_rewards=True,
)
"""PureJaxRL's `ppo_continuous_action.py` settings (NORMALIZE_ENV: observations and rewards), but 4 updates (its 5e7
steps take hours on a CPU)."""


class GymnaxAsBrax:
    """A gymnax env behind `BraxGymnaxWrapper`'s interface: default params, five-value `step`."""

    def __init__(self, name: str):
        import gymnax

        env, self._params = gymnax.make(name)
        self._env = FiveValueStep(env)

    def reset(self, key: Any, params: Any = None) -> Any:
        return self._env.reset(key, self._params)

    def step(self, key: Any, state: Any, action: Any, params: Any = None) -> Any:
        return self._env.step(key, state, action, self._params)

    def observation_space(self, params: Any) -> Any:
        return self._env.observation_space(self._params)

    def action_space(self, params: Any) -> Any:
        return self._env.action_space(self._params)


def load_purejaxrl(checkout: Path, gymnax_env: bool) -> types.ModuleType:
    """PureJaxRL's `ppo_continuous_action` module from a checkout (gymnax envs behind `GymnaxAsBrax`)."""
    folder = checkout / "purejaxrl"
    if not (folder / "ppo_continuous_action.py").is_file():
        sys.exit(
            f"--purejaxrl: no purejaxrl/ppo_continuous_action.py under {checkout}; "
            "pass a checkout of luchris429/purejaxrl."
        )
    require("distrax", "PureJaxRL's ppo_continuous_action.py")
    module = import_script(folder, "ppo_continuous_action", {"navix": {}})
    if gymnax_env:
        setattr(module, "BraxGymnaxWrapper", GymnaxAsBrax)
    return module


def ours(config: PPOConfig, env: Any) -> Callable[[jax.Array], Any]:
    """Our training as a function of a raw key: trained params and final return."""
    train = make_train(config, env)

    def run(raw_key: jax.Array) -> Any:
        policy, metrics = train(jax.random.wrap_key_data(raw_key))
        return policy.params, metrics["episode_return"][-1]

    return run


def logged(env_state: Any) -> Any:
    """The `LogEnvState` inside PureJaxRL's normalising wrappers' states."""
    while not hasattr(env_state, "returned_episode_returns"):
        env_state = env_state.env_state
    return env_state


def theirs(module: types.ModuleType, config: PPOConfig, name: str) -> Callable[[jax.Array], Any]:
    """PureJaxRL's training as a function of a raw key: trained params and final return."""
    train = module.make_train(purejaxrl_config(config, name) | {"NORMALIZE_ENV": config.normalize_obs})

    def run(raw_key: jax.Array) -> Any:
        train_state, env_state, *_ = train(raw_key)["runner_state"]
        return train_state.params, logged(env_state).returned_episode_returns.mean()

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description="Continuous-action PPO training-time benchmark")
    parser.add_argument("--purejaxrl", type=Path, help="a checkout of luchris429/purejaxrl to run beside ours")
    parser.add_argument("--env", choices=sorted(ENVS), default="hopper")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of each program after compile")
    parser.add_argument("--num-envs", type=int, default=CONFIG.num_envs)
    parser.add_argument("--total-timesteps", type=int, default=CONFIG.total_timesteps)
    args = parser.parse_args()
    import parallax_zoo

    env_id, kwargs, peer_name = ENVS[args.env]
    config = dataclasses.replace(CONFIG, env_id=env_id, num_envs=args.num_envs, total_timesteps=args.total_timesteps)
    print(
        f"PPO on {env_id} {kwargs or ''}: {config.num_envs} envs x {config.num_steps} steps, {config.num_updates} "
        f"updates of {config.update_epochs} epochs x {config.num_minibatches} minibatches; devices: {jax.devices()}"
    )
    env = parallax_zoo.make(env_id, **kwargs)  # pyright: ignore[reportAttributeAccessIssue]
    candidates = {"ours": ours(config, env)}
    if args.purejaxrl is not None:
        candidates["PureJaxRL"] = theirs(load_purejaxrl(args.purejaxrl, args.env != "hopper"), config, peer_name)
    timings = compare_compiled(candidates, run_keys(1), args.repeats)
    report("1 seed", config, 1, timings)


if __name__ == "__main__":
    main()
