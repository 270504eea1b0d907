"""The `parallax-zoo` command: list, info, render, train, eval, leaderboard, download, push, demo."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import jax

import parallax_zoo
from parallax_zoo import hub
from parallax_zoo.envs.rendering import save_gif
from parallax_zoo.recording import random_act, record_episode


def _list(args: argparse.Namespace) -> int:
    print(parallax_zoo.registry_table())
    return 0


def _info(args: argparse.Namespace) -> int:
    env_spec = parallax_zoo.spec(args.env_id)
    env = parallax_zoo.make(args.env_id)
    rows = [
        ("id", env_spec.id),
        ("kind", env_spec.kind),
        ("built from", env_spec.entry_point or f"{env_spec.adapter}: {env_spec.foreign_id}"),
        ("agents", str(env_spec.num_agents)),
        ("max_steps", str(env_spec.max_steps or "-")),
        ("action space", repr(env.action_space)),
        ("observation space", repr(env.observation_space)),
        ("tags", ", ".join(env_spec.tags) or "-"),
        ("baseline", "-" if env_spec.baseline is None else f"{env_spec.baseline.repo_id}@{env_spec.baseline.revision}"),
        ("reference score", "-" if env_spec.reference_score is None else f"{env_spec.reference_score:.3f}"),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name.ljust(width)}  {value}")
    return 0


def _render(args: argparse.Namespace) -> int:
    env = parallax_zoo.make(args.env_id)
    steps = args.steps or parallax_zoo.spec(args.env_id).max_steps or 100
    frames = record_episode(env, random_act(env), jax.random.key(args.seed), steps)
    out = save_gif(frames, args.out or f"{args.env_id.replace('/', '_')}.gif", fps=args.fps)
    print(f"wrote {out} ({len(frames)} frames of {frames.shape[2]}x{frames.shape[1]})")
    return 0


def _download(args: argparse.Namespace) -> int:
    pin = _pin(args.env_id)
    folder = hub.fetch_baseline(pin, hub.mirror_root() / hub.baseline_dirname(args.env_id))
    print(f"{args.env_id}: {pin.repo_id}@{pin.revision}, every file's sha256 verified, in {folder}")
    return 0


def _push(args: argparse.Namespace) -> int:
    env_spec = parallax_zoo.spec(args.env_id)
    repo_id = args.repo_id or (env_spec.baseline.repo_id if env_spec.baseline else hub.baseline_repo_id(args.env_id))
    pin = hub.push_baseline(hub.mirror_root() / hub.baseline_dirname(args.env_id), repo_id, private=args.private)
    print(f"pushed {args.env_id} to {repo_id} at revision {pin.revision}; pin it in registry.yaml:\n")
    print(hub.format_pin(pin))
    return 0


def _train(args: argparse.Namespace) -> int:
    from parallax_zoo.baselines import train_baseline
    from parallax_zoo.registry_pins import pin_baseline

    folder = train_baseline(args.env_id, seed=args.seed, config=args.config, out_dir=args.out, seeds=args.seeds)
    score = json.loads((folder / "eval.json").read_text())["mean"]
    print(f"{args.env_id}: baseline written to {folder}, evaluated mean return {score:.3f}")
    if args.pin:
        pin_baseline(args.env_id, folder)
        print(f"pinned {folder} in registry.yaml (revision main; `parallax-zoo push {args.env_id}` gives the commit)")
    return 0


def _pin(env_id: str) -> hub.BaselinePin:
    pin = parallax_zoo.spec(env_id).baseline
    if pin is None:
        raise SystemExit(f"{env_id} has no baseline pinned in registry.yaml yet; train one with `parallax-zoo train {env_id}`")
    return pin


def _demo(args: argparse.Namespace) -> int:
    print(parallax_zoo.registry_table())
    out = Path(args.out)
    for env_id in ("GridWorld-v0", "Race-v0"):
        env = parallax_zoo.make(env_id)
        frames = record_episode(env, random_act(env), jax.random.key(0), parallax_zoo.spec(env_id).max_steps or 50)
        path = save_gif(frames, out / f"{env_id}.gif")
        print(f"\n{env_id}: a random policy's episode rendered to {path}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="parallax-zoo", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    commands.add_parser("list", help="every registered env").set_defaults(run=_list)

    info = commands.add_parser("info", help="one env's spec, spaces and baseline")
    info.add_argument("env_id")
    info.set_defaults(run=_info)

    render = commands.add_parser("render", help="a GIF of a policy playing one episode")
    render.add_argument("env_id")
    render.add_argument("--out", help="GIF path (default: ENV_ID.gif)")
    render.add_argument("--steps", type=int, default=None, help="frames to record (default: the env's max_steps)")
    render.add_argument("--seed", type=int, default=0)
    render.add_argument("--fps", type=int, default=8)
    render.set_defaults(run=_render)

    train = commands.add_parser("train", help="train a baseline and write its folder (weights, config, eval, curve, card)")
    train.add_argument("env_id")
    train.add_argument("--seed", type=int, default=0, help="the seed whose weights are saved (default 0)")
    train.add_argument("--config", default=None, help="config.yaml to train with (default: the shipped baseline's)")
    train.add_argument("--out", default=None, help="folder to write (default: baselines/ENV_ID with '/' as '-')")
    train.add_argument("--seeds", type=int, default=3, help="seeds trained at once, SEED upwards (default 3)")
    train.add_argument("--pin", action="store_true", help="pin the folder's hashes and score in registry.yaml")
    train.set_defaults(run=_train)

    download = commands.add_parser("download", help="fetch a baseline at its pinned revision and verify it")
    download.add_argument("env_id")
    download.set_defaults(run=_download)

    push = commands.add_parser("push", help="upload baselines/ENV_ID to the Hub and print the pin")
    push.add_argument("env_id")
    push.add_argument("--repo-id", default=None, help="Hub repo (default: the registry's, else parallax-zoo/ENV_ID)")
    push.add_argument("--private", action="store_true")
    push.set_defaults(run=_push)

    demo = commands.add_parser("demo", help="the registry, and an episode of two envs rendered")
    demo.add_argument("--out", default="demo", help="folder for the GIFs")
    demo.set_defaults(run=_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `parallax-zoo` console script."""
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except (parallax_zoo.registry.RegistryError, hub.HubError, hub.BaselinePinError, ValueError) as error:
        print(f"parallax-zoo {args.command}: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
