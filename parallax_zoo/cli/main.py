"""The `parallax-zoo` command: list, info, render, train, eval, leaderboard, download, push, demo, maintain.

A user error (a `parallax_zoo.errors.UserError`, or one of the error types in `USER_ERRORS`) is
printed as one line on stderr and exits 2; anything else is a bug and keeps its traceback (exit 1).
Ctrl-C is one line too, and exit 130.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import jax

import parallax_zoo
from parallax.adapters.frames import RenderUnavailableError
from parallax.version import __version__
from parallax_zoo.atomic import OutputNotWrittenError, check_writable
from parallax_zoo.catalogue.pins import BaselinePin, baseline_dirname, baseline_repo_id, format_pin
from parallax_zoo.catalogue.player_names import BASELINE, RANDOM
from parallax_zoo.catalogue.reference_scores import reference_score_cell
from parallax_zoo.catalogue.registry import EnvNotFoundError, EnvSpec, resolve
from parallax_zoo.catalogue.signatures import InvalidKwargError
from parallax_zoo.cli.maintain import add_maintain_command
from parallax_zoo.errors import UserError, one_line
from parallax_zoo.judging import progress
from parallax_zoo.judging.recording import Recording, random_act, record, render_unavailable, save_gif
from parallax_zoo.policies import hub


def _list(args: argparse.Namespace) -> int:
    print(parallax_zoo.registry_table(args.namespace))
    return 0


def _info(args: argparse.Namespace) -> int:
    env_spec, env = resolve(args.env_id)
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
        ("reference score", reference_score_cell(env_spec)),
        ("random score", _random_score_cell(env_spec)),
        ("trains with", _training_config_cell(env_spec)),
        ("on a GPU", _gpu_tier_cell(env_spec)),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name.ljust(width)}  {' '.join(value.split())}")  # one line a row: a Box's array bounds print on many
    return 0


def _random_score_cell(env_spec: EnvSpec) -> str:
    """The random player's shipped protocol score and interval, or how to measure it."""
    from parallax_zoo.judging.random_scores import stored_random_score

    stored = stored_random_score(env_spec)
    if stored is None:
        return f"- (not measured under its protocol: parallax-zoo maintain random-scores {env_spec.id})"
    low, high = stored["ci95"]
    return f"{stored['mean']:.3f} (95% CI [{low:.3f}, {high:.3f}])"


def _training_config_cell(env_spec: EnvSpec) -> str:
    """The config `parallax-zoo train ID` uses: the baseline's, the id's own, or its family's default."""
    from parallax_zoo.baselines.families import family_config_path, family_of
    from parallax_zoo.baselines.training import config_path

    path = config_path(env_spec.id)
    if path == family_config_path(env_spec):
        return f"the {family_of(env_spec)} family default ({path.name})"
    return str(path)


def _gpu_tier_cell(env_spec: EnvSpec) -> str:
    """The GPU tier's config of the id, its budget and the estimated GPU time, or '-' where it has none."""
    from parallax_zoo.baselines.gpu_tier import gpu_tier

    entry = gpu_tier().get(env_spec.id)
    if entry is None:
        return "-"
    minutes = entry.estimated_minutes()
    estimate = (
        "" if minutes is None or entry.anchor is None else f", about {minutes:.1f} min on {entry.anchor.hardware}"
    )
    steps = entry.config().total_timesteps
    return f"--tier gpu: {entry.family}.yaml, {steps:,} env steps{estimate} (docs/baselines.md, 'The GPU tier')"


class RenderFlagError(UserError, ValueError):
    """A `render` flag that cannot work: the message names the flag, what it must be and what was given."""


def _check_render_flags(args: argparse.Namespace) -> None:
    """Refuse, before anything is built, an fps, step count or scale below 1 and an --out that is not a GIF in an
    existing folder."""
    for flag, value in (("--fps", args.fps), ("--steps", args.steps), ("--scale", args.scale)):
        if value is not None and value < 1:
            raise RenderFlagError(f"{flag} must be a whole number >= 1, got {value}")
    if args.out is None:
        return
    out = Path(args.out)
    if out.suffix.lower() != ".gif":
        raise RenderFlagError(
            f"--out {args.out}: render writes a GIF; give a path ending in .gif, e.g. {out.with_suffix('.gif')}"
        )
    if not out.parent.is_dir():
        raise RenderFlagError(
            f"--out {args.out}: the folder {out.parent} does not exist; create it first or write elsewhere"
        )


def _render(args: argparse.Namespace) -> int:
    _check_render_flags(args)
    env_spec, env = resolve(args.env_id)
    source = args.policy or (BASELINE if env_spec.baseline is not None else RANDOM)
    if source == RANDOM:
        act = random_act(env)
    else:
        from parallax_zoo.judging.recording import policy_act
        from parallax_zoo.policies.loading import resolve_policy

        policy = resolve_policy(source, env_spec, env).policy
        act = random_act(env) if isinstance(policy, str) else policy_act(policy)
    steps = args.steps if args.steps is not None else env_spec.max_steps or 100
    if (reason := render_unavailable(env)) is not None:  # before the announcement and the minutes of compiling
        raise RenderUnavailableError(reason)
    print(
        f"{args.env_id}: playing up to {steps} steps of {source} and drawing them (compiling first: seconds, "
        "minutes for a physics env)...",
        file=sys.stderr,
        flush=True,
    )
    recording = record(env, act, jax.random.key(args.seed), steps)
    out = _save_recording(recording, args.out or f"{baseline_dirname(args.env_id)}.gif", args.fps, args.scale)
    played = _played_line(recording, args.fps)
    print(f"wrote {out}: {source} playing {args.env_id}, {played}; {_result_line(recording)}")
    return 0


def _save_recording(recording: Recording, path: str | Path, fps: int, scale: int | None) -> Path:
    """The recording as a captioned GIF (step, rewards; the result once the episode is over)."""
    return save_gif(recording.frames, path, fps=fps, scale=scale, captions=recording.captions())


def _played_line(recording: Recording, fps: int) -> str:
    """What the GIF shows: the steps played, the frames from the reset, and how long the final frame is held."""
    if recording.length is None:
        steps = len(recording.frames) - 1
        return f"{steps} steps played ({steps + 1} frames from the reset), the episode still running at the end"
    held = len(recording.frames) - recording.length
    plural = "s" if recording.length != 1 else ""
    shown = f"{recording.length} step{plural} played ({recording.length + 1} frames from the reset)"
    return shown + (f", the final frame held {held / fps:.1f} s" if held > 1 else "")


def _result_line(recording: Recording) -> str:
    return (
        recording.captions()[-1]
        if recording.length is not None
        else f"not over after {len(recording.frames) - 1} steps"
    )


def _eval(args: argparse.Namespace) -> int:
    from parallax_zoo.judging.evaluation import evaluate
    from parallax_zoo.policies.loading import resolve_policy

    if args.out and Path(args.out).is_dir():
        raise UserError(
            f"--out {args.out} is a folder; give the path of the JSON file to write, e.g. "
            f"{Path(args.out) / 'result.json'}"
        )
    if args.out:
        check_writable(args.out)
    env_spec, env = resolve(args.env_id)
    policy, name, provenance = resolve_policy(args.policy, env_spec, env)
    result = evaluate(env_spec, env, policy, name=name, provenance=provenance, held_out=args.held_out)
    print(f"{args.env_id}  {name}: {result.summary()}")
    if not result.finite:
        print("  some scores are NaN or infinite: the result is marked finite: false and ranks last on the leaderboard")
    if result.finished < 1:
        print(
            f"  {1 - result.finished:.0%} of the episodes had not ended after the protocol's "
            f"{result.protocol.max_steps} steps and score 0: the env needs a max_steps (time limit) in registry.yaml"
        )
    for label, records in (("vs", result.opponents), ("vs held-out", result.held_out)):
        for opponent, rates in records.items():
            seats = "  ".join(
                f"side {side}: {rates[f'win_side_{side}']:.0%}/{rates[f'draw_side_{side}']:.0%}/"
                f"{rates[f'loss_side_{side}']:.0%}"
                for side in (0, 1)
                if f"win_side_{side}" in rates
            )
            print(
                f"  {label} {opponent}: win {rates['win']:.1%}  draw {rates['draw']:.1%}  loss {rates['loss']:.1%}"
                f"  ({rates.get('games', result.episodes):.0f} games; win/draw/loss {seats})"
            )
    if env_spec.reference_score is not None:
        print(f"  reference score of the baseline: {reference_score_cell(env_spec)}")
    if args.out:
        print(f"  written to {result.save(args.out)}")
    return 0


def _leaderboard(args: argparse.Namespace) -> int:
    from parallax_zoo.judging.leaderboard import leaderboard, load_results, output_paths
    from parallax_zoo.policies.loading import resolve_policy

    if not args.results and not args.entrant:
        raise UserError("nothing to rank: give --results FOLDER (from `eval --out`) and/or --entrant ENV_ID=POLICY")
    for path in output_paths(args.out).values() if args.out else ():
        check_writable(path)
    results = load_results(args.results) if args.results else []
    entrants: dict[str, dict[str, object]] = {}
    provenance: dict[str, dict[str, dict[str, object]]] = {}
    for entry in args.entrant or []:
        env_id, _, source = entry.partition("=")
        if not source:
            raise UserError(
                f"--entrant takes ENV_ID=POLICY (POLICY: baseline, random, hub:REPO@COMMIT or a folder), got {entry!r}"
            )
        policy, name, recorded = resolve_policy(source, *resolve(env_id))
        if name in entrants.get(env_id, {}):
            raise UserError(f"--entrant {entry}: {name!r} is entered twice on {env_id}; enter each policy once")
        entrants.setdefault(env_id, {})[name] = policy
        provenance.setdefault(env_id, {})[name] = recorded
    board = leaderboard(results, entrants, provenance)  # type: ignore[arg-type]
    print(board.to_markdown())
    if args.out:
        for path in board.write(args.out).values():
            print(f"wrote {path}")
    return 0


def _download(args: argparse.Namespace) -> int:
    pin = _pin(parallax_zoo.spec(args.env_id))
    folder = hub.fetch_baseline(pin, hub.mirror_folder(args.env_id))
    print(f"{args.env_id}: {pin.repo_id}@{pin.revision}, every file's sha256 verified, in {folder}")
    return 0


def _push(args: argparse.Namespace) -> int:
    env_spec = parallax_zoo.spec(args.env_id)
    repo_id = args.repo_id or (env_spec.baseline.repo_id if env_spec.baseline else baseline_repo_id(args.env_id))
    pin = hub.push_baseline(hub.mirror_folder(args.env_id), repo_id, private=args.private)
    print(f"pushed {args.env_id} to {repo_id} at revision {pin.revision}; pin it in registry.yaml:\n")
    print(format_pin(pin))
    return 0


def _train(args: argparse.Namespace) -> int:
    from parallax_zoo.baselines.gpu_tier import GPU_CONFIGS, TIER_FILE, gpu_config, gpu_tier
    from parallax_zoo.baselines.training import (
        config_path,
        resolve_config,
        resolve_search,
        seed_folders,
        train_baseline,
    )

    if args.tier == "gpu" and args.config is not None:
        raise UserError("--tier gpu and --config both choose the hyperparameters: give one of them")

    mesh = _join_processes(args)  # before anything else touches a device
    if args.tier == "gpu":
        config = _config_with_overrides(gpu_config(args.env_id), args)
        source = f"{GPU_CONFIGS / gpu_tier()[args.env_id].family}.yaml with its changes in {TIER_FILE.name}"
    else:
        config = _config_with_overrides(resolve_config(args.env_id, args.config), args)
        source = str(config_path(args.env_id, args.config))
    env_spec, env = resolve(args.env_id)
    writer = mesh is None or jax.process_index() == 0
    if writer:
        print(f"{args.env_id}: hyperparameters from {source}", flush=True)
    if args.seeds < 1:
        raise UserError(f"--seeds {args.seeds}: give the number of seeds to train, 1 or more")
    if mesh is not None:
        _check_splits(config, mesh)
    folder = _train_folder(args, env_spec.baseline is not None)
    folders = seed_folders(args.env_id, folder, [args.seed + i for i in range(args.seeds)])
    folder = train_baseline(
        env_spec,
        env,
        seed=args.seed,
        config=config,
        out_dir=folder,
        seeds=args.seeds,
        pin=args.pin,
        force=args.force,
        mesh=mesh,
        allow_random_level=args.allow_random_level,
        search=None if args.tier == "gpu" else resolve_search(args.env_id, args.config),
        init=args.init,
    )
    if not writer:
        print(f"{args.env_id}: process {jax.process_index()} trained its share; process 0 writes the folders")
        return 0
    for seed, seed_folder in folders.items():
        score = json.loads((seed_folder / "eval.json").read_text())["mean"]
        print(f"{args.env_id}: seed {seed} written to {seed_folder}, evaluated mean return {score:.3f}")
    if args.pin:
        print(
            f"pinned {folder} (seed {args.seed}) in registry.yaml "
            f"(revision main; `parallax-zoo push {args.env_id}` gives the commit)"
        )
    else:
        print(
            f"  evaluate it with `parallax-zoo eval {args.env_id} --policy {folder}`; "
            f"`--pin` makes a run the official baseline"
        )
    return 0


def _join_processes(args: argparse.Namespace) -> Any:
    """With --distributed or the three process flags, this process joins the others (`processes.join_processes`)
    and training runs on one mesh over every process's devices; otherwise None, one process as usual."""
    explicit = (args.coordinator, args.num_processes, args.process_id)
    if not args.distributed and all(value is None for value in explicit):
        return None
    from parallax_zoo.agents.sharding import default_mesh
    from parallax_zoo.baselines.processes import join_processes

    count = join_processes(*explicit)
    mesh = default_mesh()
    if jax.process_index() == 0:
        print(f"{args.env_id}: {count} processes joined, one mesh over {mesh.size} devices; process 0 writes")
    return mesh


def _check_splits(config: Any, mesh: Any) -> None:
    """Every seed's envs, and the rows of each minibatch, must split evenly across the mesh's devices (the trainers'
    own check, `sharding.check_divisible`), said in one line before anything trains."""
    from parallax_zoo.agents.sharding import check_divisible

    rows = config.num_envs * config.num_steps // config.num_minibatches
    try:
        check_divisible(config.num_envs, mesh, "train --num-envs")
        check_divisible(rows, mesh, "train", "rows per minibatch (num_envs * num_steps / num_minibatches)")
    except ValueError as error:
        raise UserError(f"{error} The devices are those of every process.") from error


def _train_folder(args: argparse.Namespace, pinned: bool) -> Path:
    """Where `train` writes seed SEED: --out, else the baseline mirror with --pin, else runs/<EnvId>/seed<S>/ here.

    A baseline pinned in registry.yaml is never overwritten without --force:
    its files would no longer match their pinned sha256s.
    """
    mirror = hub.mirror_folder(args.env_id)
    if args.out is not None:
        folder = Path(args.out)
    elif args.pin:
        folder = mirror
    else:
        return Path("runs") / baseline_dirname(args.env_id) / f"seed{args.seed}"
    if pinned and folder.resolve() == mirror.resolve() and folder.is_dir() and any(folder.iterdir()) and not args.force:
        raise UserError(
            f"{folder} holds the baseline pinned in registry.yaml for {args.env_id}; retraining would overwrite it "
            "and break its pinned hashes. Add --force to replace it, or leave out --pin/--out to train into runs/"
        )
    return folder


def _config_with_overrides(config: Any, args: argparse.Namespace) -> Any:
    """The config with --total-timesteps, --num-envs and every --set FIELD=VALUE applied, each checked first."""
    import dataclasses

    types = {f.name: f.type for f in dataclasses.fields(config)}
    changes: dict[str, Any] = {}
    for flag, name in (("total_timesteps", "total_timesteps"), ("num_envs", "num_envs")):
        if getattr(args, flag) is not None:
            changes[name] = getattr(args, flag)
    for item in args.set or []:
        name, equals, text = item.partition("=")
        name = name.strip().replace("-", "_")
        if not equals or not name:
            raise UserError(f"--set takes FIELD=VALUE, e.g. --set learning_rate=3e-4; got {item!r}")
        if name not in types or name == "env_id":
            raise UserError(
                f"--set {item}: {type(config).__name__} has no field {name!r}. "
                + _close_fields(name, [n for n in types if n != "env_id"])
            )
        changes[name] = _parse_field(name, text, getattr(config, name), item)
    if not changes:
        return config
    try:
        return dataclasses.replace(config, **changes)
    except ValueError as error:
        raise UserError(f"{error} Nothing was trained.") from None


def _close_fields(name: str, fields: list[str]) -> str:
    """ "Did you mean ...?" with the fields close to `name` (by difflib, or whose words' initials spell it, as lr for
    learning_rate), else the list of fields."""
    import difflib

    initials = [field for field in fields if "".join(word[0] for word in field.split("_")) == name]
    close = initials + [field for field in difflib.get_close_matches(name, fields, n=3) if field not in initials]
    if close:
        return f"Did you mean {' or '.join(close)}?"
    return f"Its fields: {', '.join(fields)}"


def _parse_field(name: str, text: str, current: Any, item: str) -> Any:
    """VALUE read as YAML and checked against the type of the field's current value (ints may be 1e6 or 1_000_000)."""
    import yaml

    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        value = text
    expected = type(current)
    if expected is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if expected is int and isinstance(value, (str, float)) and not isinstance(value, bool):
        try:
            number = float(str(value).replace("_", ""))
        except ValueError:
            number = float("nan")
        if number.is_integer():
            value = int(number)
    if expected is float and isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            pass
    if expected is tuple and isinstance(value, (list, int)) and not isinstance(value, bool):
        value = tuple(value) if isinstance(value, list) else (value,)
    if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
        shown = {
            bool: "true or false",
            int: "a whole number",
            float: "a number",
            str: "a string",
            tuple: "a list like [64,64]",
        }.get(expected, expected.__name__)
        raise UserError(f"--set {item}: {name} takes {shown} (now {current!r}), got {text!r}")
    return value


def _pin(env_spec: EnvSpec) -> BaselinePin:
    pin = env_spec.baseline
    if pin is None:
        env_id = env_spec.id
        raise hub.BaselineNotPinnedError(
            f"{env_id} has no baseline pinned in registry.yaml yet; train one with `parallax-zoo train {env_id}`"
        )
    return pin


def _demo(args: argparse.Namespace) -> int:
    """Download (or find in the mirror) a baseline, check it, evaluate it against its reference, render it."""
    from parallax_zoo.judging.evaluation import evaluate
    from parallax_zoo.judging.recording import policy_act
    from parallax_zoo.policies.loading import baseline_files, load_files

    env_id = args.env_id
    env_spec, env = resolve(env_id)
    pin = _pin(env_spec)
    print(f"{env_id}: baseline {pin.repo_id}@{pin.revision}")
    files = baseline_files(env_spec)
    folder = files.folder
    source = "the local mirror" if folder == hub.mirror_folder(env_id) else "the Hub (cached)"
    print(f"  {len(pin.files)} files from {source}, {folder}, each sha256-verified against the pin")
    policy = load_files(files, env)
    result = evaluate(env_spec, env, policy, name=BASELINE)
    print(f"  evaluated: {result.summary()}; reference score {reference_score_cell(env_spec)}")
    random_result = evaluate(env_spec, env, RANDOM)
    print(f"  the uniformly random policy scores {random_result.mean:.3f}")
    try:
        print(f"{env_id}: recording an episode of the baseline...", file=sys.stderr, flush=True)
        recording = record(env, policy_act(policy), jax.random.key(0), env_spec.max_steps or 100)
    except RenderUnavailableError as error:
        print(f"  not rendered: {one_line(error)}")
        return 0
    Path(args.out).mkdir(parents=True, exist_ok=True)
    path = _save_recording(recording, Path(args.out) / f"{baseline_dirname(env_id)}.gif", fps=8, scale=None)
    print(f"  an episode of the baseline rendered to {path} ({_result_line(recording)})")
    return 0


USER_ERRORS: tuple[type[BaseException], ...] = (
    UserError,
    InvalidKwargError,
    ValueError,
    LookupError,
    FileNotFoundError,
    RenderUnavailableError,
    OutputNotWrittenError,
)
"""What `main` reports as a user error (one line, exit 2). New code raises a `UserError` subclass."""


class _Parser(argparse.ArgumentParser):
    """argparse, with a bad command line reported as one line (what was wrong, where the help is), exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see `{self.prog} --help`)\n")


ENV_ID_HELP = "a registered env id, e.g. Race-v0 or gymnax/CartPole-v1 (`parallax-zoo list` shows them all)"


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="parallax-zoo", description=__doc__)
    parser.add_argument(
        "--version", action="version", version=f"parallax-zoo {__version__}", help="print the version and exit"
    )
    commands = parser.add_subparsers(
        dest="command",
        required=True,
        metavar="COMMAND",
        help="what to do; `parallax-zoo COMMAND --help` lists its flags",
    )

    listing = commands.add_parser("list", help="every registered env, grouped by namespace")
    listing.add_argument("namespace", nargs="?", help="only this namespace's envs: native, gymnax, pgx, jumanji, ...")
    listing.set_defaults(run=_list)

    info = commands.add_parser("info", help="one env's spec, spaces and baseline")
    info.add_argument("env_id", help=ENV_ID_HELP)
    info.set_defaults(run=_info)

    render = commands.add_parser("render", help="a GIF of a policy playing one episode")
    render.add_argument("env_id", help=ENV_ID_HELP)
    render.add_argument("--policy", help="baseline | random | hub:REPO@COMMIT | PATH (default: the baseline if pinned)")
    render.add_argument("--out", help="GIF path (default: ENV_ID.gif)")
    render.add_argument("--steps", type=int, default=None, help="frames to record (default: the env's max_steps)")
    render.add_argument("--seed", type=int, default=0, help="seed of the episode's reset and actions (default 0)")
    render.add_argument("--fps", type=int, default=8, help="frames per second of the GIF (default 8)")
    render.add_argument(
        "--scale",
        type=int,
        default=None,
        help="enlarge each frame this many times (default: to at least 256 px on the short side)",
    )
    render.set_defaults(run=_render)

    train = commands.add_parser(
        "train", help="train a policy and write its folder (weights, config, eval, curve, card)"
    )
    train.add_argument("env_id", help=ENV_ID_HELP)
    train.add_argument(
        "--seed",
        type=int,
        default=0,
        help="the first seed trained: the one in the output folder, pinned by --pin (default 0)",
    )
    train.add_argument(
        "--config",
        default=None,
        help="config.yaml to train with (default: the shipped baseline's, else the id's family default)",
    )
    train.add_argument("--out", default=None, help="folder to write (default: runs/ENV_ID/seedSEED, '/' in ids as '-')")
    train.add_argument(
        "--seeds",
        type=int,
        default=1,
        help="seeds trained at once, SEED upwards, each saved: seed N beside the output folder as "
        "runs/ENV_ID/seedN (or OUT-seedN with --out) (default 1)",
    )
    train.add_argument(
        "--tier",
        choices=("cpu", "gpu"),
        default="cpu",
        help="gpu: the GPU tier's hyperparameters for the ids that do not train on a CPU in budget "
        "(docs/baselines.md, 'The GPU tier'); default cpu, the shipped or family config",
    )
    train.add_argument(
        "--init",
        default=None,
        metavar="FOLDER",
        help="start every seed from the weights of the policy folder FOLDER (the same network), to train an earlier "
        "run on; the card records FOLDER and the weights' sha256 (default: fresh weights)",
    )
    train.add_argument("--total-timesteps", type=int, default=None, help="env steps per seed (overrides the config)")
    train.add_argument("--num-envs", type=int, default=None, help="parallel envs per seed (overrides the config)")
    train.add_argument(
        "--set",
        action="append",
        metavar="FIELD=VALUE",
        help="set any config field, e.g. --set learning_rate=1e-3 --set hidden_sizes=[32,32]; repeatable",
    )
    train.add_argument(
        "--pin",
        action="store_true",
        help="write the official baseline (baselines/ENV_ID) and pin its hashes and score in registry.yaml",
    )
    train.add_argument(
        "--allow-random-level",
        action="store_true",
        help="pin even where the seed does not beat the random player's 95%% interval (only for an env where random "
        "play is already optimal, e.g. gymnax/SimpleBandit-bsuite)",
    )
    train.add_argument(
        "--distributed",
        action="store_true",
        help="join the other processes a cluster launcher (SLURM, Open MPI) started: one run over all their devices, "
        "process 0 writes (docs/scaling.md)",
    )
    train.add_argument(
        "--coordinator", default=None, metavar="HOST:PORT", help="process 0's address, with the next two"
    )
    train.add_argument("--num-processes", type=int, default=None, metavar="N", help="how many processes join the run")
    train.add_argument("--process-id", type=int, default=None, metavar="I", help="this process's index, 0 to N-1")
    train.add_argument(
        "--force",
        action="store_true",
        help="replace a pinned baseline, or write into a folder holding no earlier run of ENV_ID",
    )
    train.set_defaults(run=_train)

    evaluate = commands.add_parser("eval", help="evaluate a policy under the env's fixed protocol")
    evaluate.add_argument("env_id", help=ENV_ID_HELP)
    evaluate.add_argument(
        "--policy", default=BASELINE, help="baseline | random | hub:REPO@COMMIT | PATH (default: baseline)"
    )
    evaluate.add_argument("--out", help="write the result as JSON here")
    evaluate.add_argument(
        "--held-out",
        action="store_true",
        help="a board game also meets its held-out players (registry.yaml held_out:), reported apart; never in the "
        "score (docs/evaluation.md)",
    )
    evaluate.set_defaults(run=_eval)

    board = commands.add_parser("leaderboard", help="rank results and entrants as Markdown, CSV and HTML")
    board.add_argument("--results", help="a folder of eval JSON files (from `eval --out`)")
    board.add_argument("--entrant", action="append", help="ENV_ID=POLICY, evaluated here; repeatable")
    board.add_argument("--out", help="folder for leaderboard.md, .csv and .html")
    board.set_defaults(run=_leaderboard)

    download = commands.add_parser("download", help="fetch a baseline at its pinned revision and verify it")
    download.add_argument("env_id", help="the env id whose pinned baseline to fetch, e.g. Race-v0")
    download.set_defaults(run=_download)

    push = commands.add_parser("push", help="upload baselines/ENV_ID to the Hub and print the pin")
    push.add_argument("env_id", help="the env id whose baselines/ENV_ID folder to upload, e.g. Race-v0")
    push.add_argument("--repo-id", default=None, help="Hub repo (default: the registry's, else parallax-zoo/ENV_ID)")
    push.add_argument("--private", action="store_true", help="create the Hub repo as private")
    push.set_defaults(run=_push)

    demo = commands.add_parser(
        "demo", help="a baseline fetched and verified, evaluated against its reference, rendered"
    )
    demo.add_argument("env_id", nargs="?", default="Race-v0", help="an env id with a pinned baseline (default Race-v0)")
    demo.add_argument("--out", default="demo", help="folder for the GIF")
    demo.set_defaults(run=_demo)

    add_maintain_command(commands)
    return parser


def _hide_foreign_warnings() -> None:
    """Show the project's own warnings only: other libraries' (Brax's maintenance notice, deprecations inside
    JAXopt or JaxMARL) say nothing a user of the command can act on."""
    warnings.filterwarnings("ignore")
    warnings.filterwarnings("default", module=r"(parallax|parallax_zoo)(\.|$)")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `parallax-zoo` console script."""
    args = build_parser().parse_args(argv)
    try:
        with progress.shown(), warnings.catch_warnings():
            _hide_foreign_warnings()
            return args.run(args)
    except EnvNotFoundError as error:
        print(f"parallax-zoo {args.command}: {error.message('parallax-zoo list')}", file=sys.stderr)
        return 2
    except USER_ERRORS as error:
        print(f"parallax-zoo {args.command}: {one_line(error)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return _interrupted(args.command, argv is None)
    except Exception as error:
        if not caused_by_interrupt(error):
            raise
        return _interrupted(args.command, argv is None)


def caused_by_interrupt(error: BaseException) -> bool:
    """Whether Ctrl-C is behind `error`: a KeyboardInterrupt raised inside an import or a class body comes back
    wrapped (Python 3.11 turns one in `__set_name__` into a RuntimeError), and is still the user's Ctrl-C."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def _interrupted(command: str, whole_process: bool) -> int:
    print(f"parallax-zoo {command}: interrupted; {INTERRUPTED.get(command, 'stopped')}", file=sys.stderr)
    if whole_process:
        # The process's own command line: end it here. A normal interpreter exit can crash in
        # XLA's threads after an interrupt; everything to clean up has been cleaned up by now.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(INTERRUPTED_EXIT)
    return INTERRUPTED_EXIT


INTERRUPTED_EXIT = 130
"""The exit status after Ctrl-C (128 + SIGINT), as shells report it."""
INTERRUPTED = {"train": "nothing is half-written: a run stopped before its end leaves its folders and pin as they were"}
"""What an interrupted command leaves behind, by command."""


if __name__ == "__main__":
    sys.exit(main())
