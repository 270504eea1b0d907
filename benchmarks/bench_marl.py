"""IPPO and MAPPO on MPE simple_spread, ours and JaxMARL's own baseline scripts side by side.

JaxMARL's `baselines/IPPO/ippo_ff_mpe.py` (feed-forward IPPO) and
`baselines/MAPPO/mappo_rnn_mpe.py` (MAPPO with GRU actor and critic; JaxMARL
has no feed-forward MAPPO for MPE) are imported at run time from a checkout of
its public repository (`FLAIROx/JaxMARL`; they need `distrax`), and each
script's `make_train` gets the config dict its hydra file holds, with
`--total-timesteps` and `--num-envs` put in. Their hydra, wandb and omegaconf
imports get stand-ins (their wandb mode is "disabled"; the stand-in `wandb.log`
keeps what MAPPO's per-update callback logs, which is where its curve comes
from). Nothing of JaxMARL is copied here.

Ours runs on `jaxmarl/MPE_simple_spread_v3` with the same settings:
- IPPO: PPO with one actor shared by the three agents, each agent's critic on
  its own observation, no agent ids, 64x64 tanh, as in JaxMARL's IPPO.
- MAPPO: `mappo.make_train`, one actor shared by the agents and a centralised
  critic on the global observation (all agents' observations, JaxMARL's world
  state), no agent ids, 128x128 relu (JaxMARL's MAPPO is relu whatever its
  `ACTIVATION` says: Dense 128, GRU 128, Dense 128 in both networks), learning
  rate 2e-3. Ours is feed-forward, theirs recurrent: a GRU step costs more than a
  dense layer, and their minibatches are whole 128-step sequences of 12 of the
  48 agent-env pairs, ours shuffled single steps; the speed ratio compares the
  two scripts as shipped, not two implementations of one network. IPPO is the
  like-for-like comparison.

Both programs are compiled ahead of time (compile time printed apart), then
run in turns, `--repeats` times with fresh seeds. Printed: env steps per
second after compile (an env step moves all three agents), compile time, the
return at the end of training, which is the same number of env steps for
both, and the return at each quarter of training with the wall time (after
compile) at which it was reached. Every return is per agent (the mean over
the three agents of each agent's episode return, which is also what the
evaluation protocol scores; the sum over agents is 3 times it), averaged over
envs, of each env's latest finished episode. JaxMARL logs returns times the
number of agents, to match the on-policy codebase; they are divided back here.
At the quarter points JaxMARL's IPPO reports its rollout's mean of that
number, its MAPPO and ours the value at the rollout's end. The two differ in
one more known way: MPE episodes end by their time limit only, which JaxMARL
treats as terminal, where ours bootstraps from the last observation's value.

    python benchmarks/bench_marl.py --jaxmarl PATH [--algorithms ippo mappo] [--total-timesteps 2000000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jax
import numpy as np
from peers import import_script, require
from timing import Timing, compare_compiled

from parallax_zoo.agents import mappo, ppo
from parallax_zoo.agents.mappo import MAPPOConfig
from parallax_zoo.agents.ppo import PPOConfig

ENV_ID = "jaxmarl/MPE_simple_spread_v3"
NUM_AGENTS = 3
CURVE_POINTS = 4


@dataclass(frozen=True)
class Peer:
    """One of JaxMARL's baseline scripts: where it and its hydra config live in a checkout."""

    algorithm: str
    script: Path
    config: Path
    hidden_sizes: tuple[int, ...]
    activation: str | None
    """The activation the script's networks use where they ignore the config's `ACTIVATION`."""


PEERS = {
    "ippo": Peer(
        "IPPO", Path("baselines/IPPO/ippo_ff_mpe.py"), Path("baselines/IPPO/config/ippo_ff_mpe.yaml"), (64, 64), None
    ),
    "mappo": Peer(
        "MAPPO",
        Path("baselines/MAPPO/mappo_rnn_mpe.py"),
        Path("baselines/MAPPO/config/mappo_homogenous_rnn_mpe.yaml"),
        (128, 128),
        "relu",
    ),
}


def mpe_env() -> Any:
    """The registered simple_spread (adapter and time limit as `make` applies them)."""
    import parallax_zoo

    return parallax_zoo.make(ENV_ID)  # pyright: ignore[reportAttributeAccessIssue]


class LogStandIn:
    """`wandb.log` for the peer scripts: keeps each logged dict (host values) in `records`."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    def log(self, metrics: dict[str, Any], *_: Any, **__: Any) -> None:
        self.records.append(metrics)


def load_peer(checkout: Path, peer: Peer, log: LogStandIn) -> types.ModuleType:
    """A JaxMARL baseline script's module, from a checkout, its logging going to `log`."""
    script = checkout / peer.script
    if not script.is_file():
        sys.exit(f"--jaxmarl: no {peer.script} under {checkout}; pass a checkout of FLAIROx/JaxMARL.")
    require("distrax", f"JaxMARL's {peer.script.name}")
    plumbing = {
        "hydra": {"main": lambda *_, **__: lambda main: main},
        "wandb": {"init": lambda *_, **__: None, "log": log.log},
        "omegaconf": {},
    }
    return import_script(script.parent, script.stem, plumbing)


def peer_config(checkout: Path, peer: Peer, num_envs: int, total_timesteps: int) -> dict[str, Any]:
    """A JaxMARL script's config for MPE from its hydra yaml, with our env count and budget."""
    from ruamel.yaml import YAML

    config = dict(YAML(typ="safe").load((checkout / peer.config).read_text()))
    if config["ENV_NAME"] != "MPE_simple_spread_v3" or config["ENV_KWARGS"]:
        sys.exit(f"bench_marl: expected a JaxMARL config for MPE_simple_spread_v3, got {config['ENV_NAME']}")
    if config.get("SCALE_CLIP_EPS"):
        sys.exit(f"bench_marl: {peer.config} scales CLIP_EPS by the agent count; ours has no such setting")
    config.update(NUM_ENVS=num_envs, TOTAL_TIMESTEPS=total_timesteps)
    return config


def our_config(peer: Peer, theirs: dict[str, Any]) -> PPOConfig:
    """Our PPO (IPPO) or MAPPO with the settings of JaxMARL's script."""
    settings: dict[str, Any] = dict(
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
        hidden_sizes=peer.hidden_sizes,
        activation=peer.activation or str(theirs["ACTIVATION"]),
    )
    if peer.algorithm == "IPPO":
        return PPOConfig(**settings)
    return MAPPOConfig(**settings, agent_ids=False, centralized_critic=True)


def ours(config: PPOConfig) -> Callable[[jax.Array], Any]:
    """Our IPPO or MAPPO as a function of a raw key: trained params and the per-agent return of every update."""
    if isinstance(config, MAPPOConfig):
        train = mappo.make_train(config, mpe_env())
    else:
        train = ppo.make_train(config, mpe_env())

    def run(raw_key: jax.Array) -> Any:
        policy, metrics = train(jax.random.wrap_key_data(raw_key))
        return policy.params, metrics["episode_return"][-1], metrics["episode_return"]

    return run


def theirs_ippo(module: types.ModuleType, config: dict[str, Any]) -> Callable[[jax.Array], Any]:
    """JaxMARL's IPPO as a function of a raw key: params, final per-agent return, per-update rollout means."""
    train = module.make_train(dict(config))

    def run(raw_key: jax.Array) -> Any:
        out = train(raw_key)
        train_state, env_state, *_ = out["runner_state"]
        curve = out["metrics"]["returned_episode_returns"] / NUM_AGENTS
        return train_state.params, env_state.returned_episode_returns.mean() / NUM_AGENTS, curve

    return run


def theirs_mappo(module: types.ModuleType, config: dict[str, Any]) -> Callable[[jax.Array], Any]:
    """JaxMARL's MAPPO as a function of a raw key: both networks' params and the final per-agent return
    (its per-update returns go to the wandb stand-in through the script's own callback)."""
    train = module.make_train(dict(config))

    def run(raw_key: jax.Array) -> Any:
        (train_states, env_state, *_), _ = train(raw_key)["runner_state"]
        params = (train_states[0].params, train_states[1].params)
        return params, env_state.returned_episode_returns.mean() / NUM_AGENTS, None

    return run


def logged_curves(log: LogStandIn, num_updates: int, runs: int) -> list[np.ndarray]:
    """The per-update per-agent returns JaxMARL's MAPPO logged, one array per timed run (the compile logs none)."""
    records = log.records[-num_updates * runs :]
    if len(records) != num_updates * runs:
        sys.exit(f"bench_marl: JaxMARL's MAPPO logged {len(log.records)} updates, expected {num_updates * runs}")
    curves = []
    for run in range(runs):
        chunk = sorted(records[run * num_updates : (run + 1) * num_updates], key=lambda r: int(r["env_step"]))
        curves.append(np.array([float(r["returns"]) for r in chunk]) / NUM_AGENTS)
    return curves


def report(title: str, env_steps: int, timings: dict[str, Timing], curves: dict[str, list[np.ndarray]]) -> None:
    print(f"\n{title}: {env_steps:.3g} env steps per run; returns per agent")
    print(
        f"{'':<9}{'compile s':>10}{'(cpu s)':>9}{'train s':>9}{'(min-max)':>14}{'(cpu s)':>9}{'env steps/s':>13}"
        "  final return, per run"
    )
    for who, t in timings.items():
        fastest, slowest = t.range_s
        returns = " ".join(f"{float(np.mean(out[1])):.2f}" for out in t.outputs)
        print(
            f"{who:<9}{t.compile_s:>10.2f}{f'({t.compile_cpu_s:.2f})':>9}{t.median_s:>9.2f}"
            f"{f'({fastest:.2f}-{slowest:.2f})':>14}{f'({t.median_cpu_s:.2f})':>9}"
            f"{env_steps / t.median_s:>13,.0f}  {returns}"
        )
    print(f"{'':<9}{'env steps':>10}  return median (min-max) over runs, at wall s after compile (median run)")
    for who, t in timings.items():
        for point in range(1, CURVE_POINTS + 1):
            values = [curve[len(curve) * point // CURVE_POINTS - 1] for curve in curves[who]]
            fraction = point / CURVE_POINTS
            print(
                f"{who:<9}{env_steps * fraction:>10.3g}  {np.median(values):.2f} ({min(values):.2f} to "
                f"{max(values):.2f})"
                f" at {t.median_s * fraction:.1f} s"
            )
    ours_t, theirs_t = timings["ours"], timings["JaxMARL"]
    ratios = [b / a for a, b in zip(ours_t.runs_s, theirs_t.runs_s)]
    cpu_ratios = [b / a for a, b in zip(ours_t.runs_cpu_s, theirs_t.runs_cpu_s)]
    print(
        f"speed ratio (JaxMARL time / ours): {theirs_t.median_s / ours_t.median_s:.2f}x "
        f"(runs {min(ratios):.2f}-{max(ratios):.2f}); in cpu s {theirs_t.median_cpu_s / ours_t.median_cpu_s:.2f}x "
        f"(runs {min(cpu_ratios):.2f}-{max(cpu_ratios):.2f}); "
        f"compile ratio {theirs_t.compile_s / ours_t.compile_s:.2f}x"
    )


def bench(algorithm: str, checkout: Path, num_envs: int, total_timesteps: int, repeats: int) -> None:
    """Compile, time and report ours beside JaxMARL's script for one algorithm."""
    peer = PEERS[algorithm]
    log = LogStandIn()
    module = load_peer(checkout, peer, log)
    their_config = peer_config(checkout, peer, num_envs, total_timesteps)
    config = our_config(peer, their_config)
    print(
        f"\n{peer.algorithm} on {ENV_ID}: {config.num_envs} envs x {config.num_steps} steps, {config.num_updates} "
        f"updates of {config.update_epochs} epochs x {config.num_minibatches} minibatches, lr {config.learning_rate}, "
        f"{config.hidden_sizes} {config.activation}; JaxMARL's {peer.script}; devices: {jax.devices()}"
    )
    theirs = theirs_ippo if algorithm == "ippo" else theirs_mappo
    candidates = {"ours": ours(config), "JaxMARL": theirs(module, their_config)}
    timings = compare_compiled(candidates, jax.random.PRNGKey, repeats)
    curves = {who: [np.asarray(out[2]) for out in t.outputs] for who, t in timings.items()}
    if algorithm == "mappo":
        curves["JaxMARL"] = logged_curves(log, config.num_updates, repeats)
    report(f"{peer.algorithm}, 1 seed", config.num_updates * config.num_envs * config.num_steps, timings, curves)


def main() -> None:
    parser = argparse.ArgumentParser(description="IPPO and MAPPO on MPE simple_spread: ours beside JaxMARL's baselines")
    parser.add_argument("--jaxmarl", type=Path, required=True, help="a checkout of FLAIROx/JaxMARL")
    parser.add_argument("--algorithms", nargs="+", choices=sorted(PEERS), default=sorted(PEERS), help="which to run")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of each program after compile")
    parser.add_argument("--num-envs", type=int, default=16, help="JaxMARL's default: 16")
    parser.add_argument(
        "--total-timesteps", type=int, default=2_000_000, help="env steps per run (JaxMARL's default: 1e7)"
    )
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error("--repeats must be >= 1")
    for algorithm in args.algorithms:
        bench(algorithm, args.jaxmarl, args.num_envs, args.total_timesteps, args.repeats)


if __name__ == "__main__":
    main()
