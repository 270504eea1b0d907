"""`parallax-zoo maintain`: the jobs that keep the shipped baselines and the Elo anchors current (docs/evaluation.md).

    parallax-zoo maintain remeasure [ENV_ID ...]          # re-evaluate shipped baselines, rewrite eval.json, re-pin
    parallax-zoo maintain anchors [--write] [ENV_ID ...]  # fit the opponent ladder's Elo anchors again
    parallax-zoo maintain anchors --held-out [--write] [ENV_ID ...]  # rate the held-out players on that scale
    parallax-zoo maintain fine-tune ENV_ID START OUT      # fine-tune a board baseline against the ladder
    parallax-zoo maintain batch [ENV_ID ...] [--namespace NS] [--pin]  # make many baselines, resumable
    parallax-zoo maintain random-scores [ENV_ID ...] [--namespace NS] [--write]  # the random player's scores

Each id is resolved here, once, into its spec and env; the jobs below take those.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from parallax_zoo.catalogue.registry import resolve
from parallax_zoo.errors import UserError


def _remeasure(args: argparse.Namespace) -> int:
    from parallax_zoo.baselines.remeasure import remeasure, shipped_baselines
    from parallax_zoo.baselines.training import EVAL_FILE
    from parallax_zoo.judging.programs import release_programs
    from parallax_zoo.policies import hub

    for env_id in args.env_ids or shipped_baselines():
        spec = remeasure(
            *resolve(env_id), args.registry, held_out=args.held_out, pinned_seed_only=args.pinned_seed_only
        )
        record = json.loads((hub.mirror_folder(env_id) / EVAL_FILE).read_text(encoding="utf-8"))
        print(
            f"{env_id}: reference score {spec.reference_score}"
            + (
                f", Elo {record['elo']['elo']:.0f} [{record['elo']['low']:.0f}, {record['elo']['high']:.0f}]"
                if "elo" in record
                else ""
            )
        )
        for label, records in (("vs", record.get("opponents", {})), ("held-out", record.get("held_out", {}))):
            for opponent, games in records.items():
                print(
                    f"  {label} {opponent:10} "
                    + "  ".join(
                        f"side {side}: win {games[f'win_side_{side}']:.1%} draw {games[f'draw_side_{side}']:.1%} "
                        f"loss {games[f'loss_side_{side}']:.1%}"
                        for side in (0, 1)
                    )
                )
        release_programs()
    return 0


def _anchors(args: argparse.Namespace) -> int:
    from parallax_zoo.catalogue import registry
    from parallax_zoo.judging.anchors import (
        ANCHOR_GAMES,
        ANCHORS_FILE,
        HELD_OUT_GAMES,
        anchored_envs,
        anchors_document,
        held_out_document,
        write_anchors,
    )

    if args.held_out:
        env_ids = args.env_ids or [env_id for env_id in anchored_envs() if registry.spec(env_id).held_out]
        try:
            document = held_out_document(
                [resolve(env_id) for env_id in env_ids], HELD_OUT_GAMES if args.games is None else args.games
            )
        except ValueError as error:
            raise UserError(str(error)) from None
        fits = {env_id: document["envs"][env_id]["held_out"] for env_id in env_ids}
    else:
        games = ANCHOR_GAMES if args.games is None else args.games
        document = anchors_document([resolve(env_id) for env_id in args.env_ids or anchored_envs()], games)
        fits = document["envs"]
    for env_id, fit in fits.items():
        for name, rating in sorted(fit["ratings"].items(), key=lambda item: item[1]["elo"]):
            print(f"{env_id:16} {name:12} {rating['elo']:7.1f}  95% CI [{rating['low']:.1f}, {rating['high']:.1f}]")
    if args.write:
        print(f"wrote {write_anchors(document, ANCHORS_FILE)}")
    return 0


def _fine_tune(args: argparse.Namespace) -> int:
    from parallax_zoo.baselines.fine_tune import RECIPES, fine_tune_baseline

    if args.env_id not in RECIPES:
        raise UserError(f"no fine-tuning recipe for {args.env_id!r}; recipes exist for {', '.join(sorted(RECIPES))}")
    print(fine_tune_baseline(*resolve(args.env_id), args.start, args.out, seed=args.seed, force=args.force))
    return 0


def _batch(args: argparse.Namespace) -> int:
    from parallax_zoo.baselines.batch import FAILED, TABLE_HEADER, run_batch, table_line
    from parallax_zoo.catalogue import registry

    if args.namespace is None and not args.env_ids:
        raise UserError("give the ids to make baselines of, or --namespace NS (e.g. --namespace gymnax)")
    env_ids = list(args.env_ids) + ([] if args.namespace is None else registry.list_envs(namespace=args.namespace))
    for env_id in env_ids:
        registry.spec(env_id)  # an unknown id stops the batch before anything trains
    if args.seeds < 1:
        raise UserError(f"--seeds {args.seeds}: give the number of seeds per id, 1 or more")
    print(TABLE_HEADER, flush=True)
    rows = run_batch(
        list(dict.fromkeys(env_ids)),
        seed=args.seed,
        seeds=args.seeds,
        pin=args.pin,
        out_root=args.out,
        total_timesteps=args.total_timesteps,
        allow_random_level=args.allow_random_level,
        on_row=lambda rows, left: print(table_line(rows, left), flush=True),
    )
    failed = [row.env_id for row in rows if row.status == FAILED]
    if failed:
        print(f"{len(failed)} of {len(rows)} ids failed: {', '.join(failed)}; run the batch again to retry them")
    return 1 if failed else 0


def _random_scores(args: argparse.Namespace) -> int:
    from parallax_zoo.catalogue import registry
    from parallax_zoo.judging.programs import release_programs
    from parallax_zoo.judging.random_scores import RANDOM_SCORES_FILE, measure_random_score, write_random_scores

    env_ids = list(args.env_ids) + ([] if args.namespace is None else registry.list_envs(namespace=args.namespace))
    for env_id in env_ids:
        registry.spec(env_id)  # an unknown id stops the job before anything is measured
    records = []
    for env_id in dict.fromkeys(env_ids or registry.list_envs()):
        record = measure_random_score(*resolve(env_id))
        low, high = record["ci95"]
        print(f"{env_id:40} random {record['mean']:.3f}  95% CI [{low:.3f}, {high:.3f}]", flush=True)
        records.append((env_id, record))
        release_programs()
    if args.write:
        print(f"wrote {write_random_scores(records, args.file or RANDOM_SCORES_FILE)}")
    return 0


def add_maintain_command(commands: Any) -> None:
    """The `maintain` command and its subcommands, on the command line's subparsers `commands` (the jobs' modules
    are imported when a job runs, so building the parser stays quick)."""
    maintain = commands.add_parser(
        "maintain", help="re-measure baselines, fit the Elo anchors, fine-tune a baseline, make many"
    )
    jobs = maintain.add_subparsers(
        dest="job", required=True, metavar="JOB", help="the job; `parallax-zoo maintain JOB --help` lists its flags"
    )

    remeasure = jobs.add_parser(
        "remeasure", help="re-measure shipped baselines under the current protocol and pin them"
    )
    remeasure.add_argument("env_ids", nargs="*", help="baselines to re-measure (default: every shipped one)")
    remeasure.add_argument(
        "--registry", type=Path, default=None, help="registry.yaml to pin in (default: the package's)"
    )
    remeasure.add_argument(
        "--held-out",
        action="store_true",
        help="also play the held-out players of each board game and put the record in eval.json and the card "
        "(else a record there is kept)",
    )
    remeasure.add_argument(
        "--pinned-seed-only",
        action="store_true",
        help="re-measure only the pinned seed and drop the statistics over seeds (when the other seeds' runs under "
        "runs/ are not here)",
    )
    remeasure.set_defaults(run=_remeasure)

    anchors = jobs.add_parser("anchors", help="fit the Elo anchors of the opponent ladder")
    anchors.add_argument("env_ids", nargs="*", help="envs to fit (default: every zero-sum env with scripted opponents)")
    anchors.add_argument(
        "--games",
        type=int,
        default=None,
        help="games per pair (default: the shipped fit's, `judging.anchors.ANCHOR_GAMES`, or with --held-out "
        "`HELD_OUT_GAMES`)",
    )
    anchors.add_argument(
        "--held-out",
        action="store_true",
        help="rate the held-out players against the ladder's fixed ratings, the ladder's fit kept (default: every "
        "game with held-out players)",
    )
    anchors.add_argument(
        "--write", action="store_true", help="write the fit to parallax_zoo/judging/ladder_anchors.json (else print it)"
    )
    anchors.set_defaults(run=_anchors)

    fine_tune = jobs.add_parser("fine-tune", help="fine-tune a board baseline against the opponent ladder")
    fine_tune.add_argument(
        "env_id",
        help="a board game with a fine-tuning recipe (`baselines.fine_tune.RECIPES`): ConnectFour-v0 or Othello-v0",
    )
    fine_tune.add_argument("start", help="the policy folder to start from (config.yaml and model.safetensors)")
    fine_tune.add_argument("out", help="the baseline folder to write")
    fine_tune.add_argument("--seed", type=int, default=0, help="seed of the fine-tune (default 0)")
    fine_tune.add_argument(
        "--force", action="store_true", help="replace the run files in an output folder that holds something else"
    )
    fine_tune.set_defaults(run=_fine_tune)

    batch = jobs.add_parser(
        "batch", help="make the baselines of many ids (train, evaluate, card, pin), skipping the ids already done"
    )
    batch.add_argument("env_ids", nargs="*", help="ids to make baselines of (with --namespace: as well)")
    batch.add_argument("--namespace", default=None, help="every id of this namespace (gymnax, pgx, ...)")
    batch.add_argument("--seed", type=int, default=0, help="the first seed of each id, the one pinned (default 0)")
    batch.add_argument("--seeds", type=int, default=3, help="seeds trained per id, SEED upwards (default 3)")
    batch.add_argument(
        "--pin", action="store_true", help="write each as the official baseline (baselines/ID) and pin it"
    )
    batch.add_argument(
        "--allow-random-level",
        action="store_true",
        help="pin even where the seed does not beat the random player's 95%% interval (only for an env where random "
        "play is already optimal, e.g. gymnax/SimpleBandit-bsuite)",
    )
    batch.add_argument(
        "--out", type=Path, default=Path("runs"), help="folder of the runs without --pin (default runs/)"
    )
    batch.add_argument(
        "--total-timesteps", type=int, default=None, help="env steps per seed for every id (overrides the configs)"
    )
    batch.set_defaults(run=_batch)

    random_scores = jobs.add_parser(
        "random-scores", help="measure the random player's protocol score of ids (default every id)"
    )
    random_scores.add_argument("env_ids", nargs="*", help="ids to measure (default: every registered id)")
    random_scores.add_argument("--namespace", default=None, help="every id of this namespace (gymnax, pgx, ...)")
    random_scores.add_argument(
        "--write", action="store_true", help="keep them in parallax_zoo/judging/random_scores.json (else print them)"
    )
    random_scores.add_argument("--file", type=Path, default=None, help="write to this file instead of the shipped one")
    random_scores.set_defaults(run=_random_scores)
