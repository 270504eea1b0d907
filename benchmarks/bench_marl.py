"""IPPO on MPE simple_spread, ours and JaxMARL's own feed-forward IPPO baseline side by side.

JaxMARL's `baselines/IPPO/ippo_ff_mpe.py` is imported at run time from a
checkout of its public repository (`FLAIROx/JaxMARL`; it needs `distrax`),
and its `make_train` gets the config dict its hydra file
`baselines/IPPO/config/ippo_ff_mpe.yaml` holds, with `--total-timesteps` and
`--num-envs` put in. Its hydra, wandb and omegaconf imports get stand-ins
(its wandb mode is "disabled": logging does nothing). Nothing of JaxMARL is
copied here. Ours is PPO on `jaxmarl/MPE_simple_spread_v3` with the same
settings: one actor shared by the three agents, each agent's critic on its
own observation, no agent ids, as in JaxMARL's IPPO.

Both programs are compiled ahead of time (compile time printed apart), then
run in turns, `--repeats` times with fresh seeds. Printed: env steps per
second after compile (an env step moves all three agents), compile time, and
the return reached at the end of training, which is the same number of env
steps for both: the mean over envs of the latest finished episode's return
per agent (JaxMARL logs returns times the number of agents, to match the
on-policy codebase; they are divided back here). The two differ in one known
way: MPE episodes end by their time limit only, which JaxMARL treats as
terminal, where ours bootstraps from the last observation's value.

    python benchmarks/bench_marl.py --jaxmarl PATH [--total-timesteps 2000000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import numpy as np
from peers import import_script, require
from timing import Timing, compare_compiled

from parallax_zoo.agents.ppo import PPOConfig, make_train

ENV_ID = "jaxmarl/MPE_simple_spread_v3"
IPPO_SCRIPT = Path("baselines/IPPO/ippo_ff_mpe.py")
IPPO_CONFIG = Path("baselines/IPPO/config/ippo_ff_mpe.yaml")


def mpe_env() -> Any:
    """The registered simple_spread (adapter and time limit as `make` applies them)."""
    import parallax_zoo

    return parallax_zoo.make(ENV_ID)  # pyright: ignore[reportAttributeAccessIssue]


def load_ippo(checkout: Path) -> types.ModuleType:
    """JaxMARL's feed-forward IPPO module for MPE, from a checkout."""
    script = checkout / IPPO_SCRIPT
    if not script.is_file():
        sys.exit(f"--jaxmarl: no {IPPO_SCRIPT} under {checkout}; pass a checkout of FLAIROx/JaxMARL.")
    require("distrax", f"JaxMARL's {IPPO_SCRIPT.name}")
    plumbing = {
        "hydra": {"main": lambda *_, **__: (lambda main: main)},
        "wandb": {"init": lambda *_, **__: None, "log": lambda *_, **__: None},
        "omegaconf": {},
    }
    return import_script(script.parent, script.stem, plumbing)


def ippo_config(checkout: Path, num_envs: int, total_timesteps: int) -> dict[str, Any]:
    """JaxMARL's IPPO config for MPE from its hydra yaml, with our env count and budget."""
    from ruamel.yaml import YAML

    config = dict(YAML(typ="safe").load((checkout / IPPO_CONFIG).read_text()))
    config.update(NUM_ENVS=num_envs, TOTAL_TIMESTEPS=total_timesteps)
    return config


def our_config(theirs: dict[str, Any]) -> PPOConfig:
    """Our PPO with JaxMARL's IPPO settings."""
    if theirs["ENV_NAME"] != "MPE_simple_spread_v3" or theirs["ENV_KWARGS"]:
        sys.exit(f"bench_marl: expected JaxMARL's IPPO config for MPE_simple_spread_v3, got {theirs['ENV_NAME']}")
    return PPOConfig(
        env_id=ENV_ID,
        num_envs=int(theirs["NUM_ENVS"]),
        num_steps=int(theirs["NUM_STEPS"]),
        total_timesteps=int(theirs["TOTAL_TIMESTEPS"]),
        learning_rate=float(theirs["LR"]),
        anneal_lr=bool(theirs["ANNEAL_LR"]),
        gamma=float(theirs["GAMMA"]),
        gae_lambda=float(theirs["GAE_LAMBDA"]),
        clip_eps=float(theirs["CLIP_EPS"]),
        vf_clip=float(theirs["CLIP_EPS"]),
        ent_coef=float(theirs["ENT_COEF"]),
        vf_coef=float(theirs["VF_COEF"]),
        max_grad_norm=float(theirs["MAX_GRAD_NORM"]),
        update_epochs=int(theirs["UPDATE_EPOCHS"]),
        num_minibatches=int(theirs["NUM_MINIBATCHES"]),
        activation=str(theirs["ACTIVATION"]),
    )


def ours(config: PPOConfig) -> Callable[[jax.Array], Any]:
    """Our IPPO as a function of a raw key: trained params and final per-agent return."""
    train = make_train(config, mpe_env())

    def run(raw_key: jax.Array) -> Any:
        policy, metrics = train(jax.random.wrap_key_data(raw_key))
        return policy.params, metrics["episode_return"][-1]

    return run


def theirs(ippo: types.ModuleType, config: dict[str, Any]) -> Callable[[jax.Array], Any]:
    """JaxMARL's IPPO as a function of a raw key: trained params and final per-agent return."""
    train = ippo.make_train(dict(config))
    num_agents = 3

    def run(raw_key: jax.Array) -> Any:
        train_state, env_state, *_ = train(raw_key)["runner_state"]
        return train_state.params, env_state.returned_episode_returns.mean() / num_agents

    return run


def report(title: str, env_steps: int, timings: dict[str, Timing]) -> None:
    print(f"\n{title}: {env_steps:.3g} env steps per run")
    print(f"{'':<9}{'compile s':>10}{'train s':>9}{'(min-max)':>14}{'env steps/s':>13}  final return per agent, per run")
    for who, t in timings.items():
        fastest, slowest = t.range_s
        returns = " ".join(f"{float(np.mean(out[1])):.1f}" for out in t.outputs)
        print(
            f"{who:<9}{t.compile_s:>10.2f}{t.median_s:>9.2f}{f'({fastest:.2f}-{slowest:.2f})':>14}"
            f"{env_steps / t.median_s:>13,.0f}  {returns}"
        )
    ours_t, theirs_t = timings["ours"], timings["JaxMARL"]
    ratios = [b / a for a, b in zip(ours_t.runs_s, theirs_t.runs_s)]
    print(
        f"speed ratio (JaxMARL time / ours): {theirs_t.median_s / ours_t.median_s:.2f}x "
        f"(runs {min(ratios):.2f}-{max(ratios):.2f}); compile ratio {theirs_t.compile_s / ours_t.compile_s:.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description="IPPO on MPE simple_spread: ours beside JaxMARL's baseline")
    parser.add_argument("--jaxmarl", type=Path, required=True, help="a checkout of FLAIROx/JaxMARL")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of each program after compile")
    parser.add_argument("--num-envs", type=int, default=16, help="JaxMARL's default: 16")
    parser.add_argument(
        "--total-timesteps", type=int, default=2_000_000, help="env steps per run (JaxMARL's default: 1e7)"
    )
    args = parser.parse_args()
    ippo = load_ippo(args.jaxmarl)
    their_config = ippo_config(args.jaxmarl, args.num_envs, args.total_timesteps)
    config = our_config(their_config)
    print(
        f"IPPO on {ENV_ID}: {config.num_envs} envs x {config.num_steps} steps, {config.num_updates} updates "
        f"of {config.update_epochs} epochs x {config.num_minibatches} minibatches; devices: {jax.devices()}"
    )
    candidates = {"ours": ours(config), "JaxMARL": theirs(ippo, their_config)}
    timings = compare_compiled(candidates, jax.random.PRNGKey, args.repeats)
    report("IPPO, 1 seed", config.num_updates * config.num_envs * config.num_steps, timings)


if __name__ == "__main__":
    main()
