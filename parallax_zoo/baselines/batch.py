"""Many baselines from one command: train, evaluate, card, curve, eval.json and (with `pin`) the pin, id after id,
skipping the ids already done, so an interrupted batch resumes where it stopped (docs/baselines.md, "Batches").

Each id's folders are swapped in whole (`staging`), so an id is either done, with every seed's folder complete,
or not started; a failure of one id (assets missing, a bad config) is reported and the batch goes on. Each id's
compiled programs are let go before the next (`judging.programs.release_programs`).
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from parallax_zoo.baselines.training import (
    EVAL_FILE,
    is_pinned_folder,
    resolve_config,
    resolve_search,
    run_env_id,
    seed_folders,
    train_baseline,
)
from parallax_zoo.catalogue import registry
from parallax_zoo.catalogue.pins import baseline_dirname
from parallax_zoo.errors import UserError
from parallax_zoo.judging.programs import release_programs
from parallax_zoo.policies import hub

DONE, TRAINED, FAILED = "done before", "trained", "failed"


@dataclass(frozen=True)
class BatchRow:
    """One id of a batch: what happened to it, its seed-`seed` protocol score and how long its training took."""

    env_id: str
    status: str
    seeds: int = 0
    env_steps: int = 0
    seconds: float = 0.0
    score: float | None = None
    problem: str = ""

    @property
    def steps_per_second(self) -> float:
        return self.env_steps * self.seeds / self.seconds if self.seconds > 0 else 0.0


def batch_folder(env_id: str, out_root: Path | None, seed: int) -> Path:
    """Seed `seed`'s folder of `env_id`: the baseline mirror's (pinning), else `<out_root>/<Id>/seed<seed>`."""
    if out_root is None:
        return hub.mirror_folder(env_id)
    return out_root / baseline_dirname(env_id) / f"seed{seed}"


def is_done(env_id: str, folders: Sequence[Path], pin: bool) -> bool:
    """Whether an earlier batch finished `env_id`: every seed's folder holds its eval.json for this env, and when
    pinning the first one is exactly what registry.yaml pins."""
    if not all((folder / EVAL_FILE).is_file() and run_env_id(folder) == env_id for folder in folders):
        return False
    return not pin or is_pinned_folder(env_id)(folders[0])


def run_batch(
    env_ids: Sequence[str],
    seed: int = 0,
    seeds: int = 3,
    pin: bool = False,
    out_root: Path | None = None,
    total_timesteps: int | None = None,
    allow_random_level: bool = False,
    on_row: Callable[[list[BatchRow], int], None] = lambda rows, left: None,
) -> list[BatchRow]:
    """Make the baseline of every id in turn; `on_row(rows so far, ids left)` after each. Without `pin`, folders go
    under `out_root`; `total_timesteps` overrides every config's (a quick batch); `allow_random_level` as in
    `train_baseline`."""
    rows = []
    for index, env_id in enumerate(env_ids):
        first = batch_folder(env_id, None if pin else out_root, seed)
        folders = list(seed_folders(env_id, first, [seed + i for i in range(seeds)]).values())
        if is_done(env_id, folders, pin):
            row = BatchRow(env_id, DONE, seeds, score=_score(first))
        else:
            row = _train_one(env_id, first, seed, seeds, pin, total_timesteps, allow_random_level)
            release_programs()  # no later id runs this id's programs
        rows.append(row)
        on_row(rows, len(env_ids) - index - 1)
    return rows


def _train_one(
    env_id: str,
    folder: Path,
    seed: int,
    seeds: int,
    pin: bool,
    total_timesteps: int | None,
    allow_random_level: bool,
) -> BatchRow:
    start = time.perf_counter()
    try:
        env_spec, env = registry.resolve(env_id)
        config = resolve_config(env_id)
        if total_timesteps is not None:
            config = dataclasses.replace(config, total_timesteps=total_timesteps)
        train_baseline(
            env_spec,
            env,
            seed=seed,
            config=config,
            out_dir=folder,
            seeds=seeds,
            progress=False,
            pin=pin,
            allow_random_level=allow_random_level,
            search=resolve_search(env_id),
        )
    except Exception as error:  # one id's problem, said in one line; the batch goes on (Ctrl-C still stops it)
        message = str(error).splitlines()[0] if str(error) else ""
        problem = message if isinstance(error, UserError) else f"{type(error).__name__}: {message}"
        return BatchRow(env_id, FAILED, seeds, problem=problem)
    seconds = time.perf_counter() - start
    return BatchRow(env_id, TRAINED, seeds, config.total_timesteps, seconds, _score(folder))


def _score(folder: Path) -> float | None:
    try:
        return float(json.loads((folder / EVAL_FILE).read_text(encoding="utf-8"))["mean"])
    except (OSError, ValueError, KeyError):
        return None


TABLE_HEADER = f"{'id':40} {'status':12} {'seeds':>5} {'env steps':>10} {'steps/s':>9} {'time':>7} {'score':>10}  left"


def table_line(rows: Sequence[BatchRow], left: int) -> str:
    """The progress table's row of the last of `rows`; `left` ids to go, the time left estimated from the ids
    trained so far."""
    row = rows[-1]
    trained = [r.seconds for r in rows if r.status == TRAINED]
    estimate = f"{left} ids, ~{sum(trained) / len(trained) * left / 60:.0f} min" if trained and left else f"{left} ids"
    score = "" if row.score is None else f"{row.score:.3f}"
    text = (
        f"{row.env_id:40} {row.status:12} {row.seeds:5d} {row.env_steps:10d} {row.steps_per_second:9.0f} "
        f"{row.seconds / 60:6.1f}m {score:>10}  {estimate}"
    )
    return text + (f"\n    {row.problem}" if row.problem else "")


__all__ = ["BatchRow", "TABLE_HEADER", "batch_folder", "is_done", "run_batch", "table_line"]
