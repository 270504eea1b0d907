"""Per-suite scorecards of the shipped baselines (docs/evaluation.md, "Scorecards"): every training seed's protocol
score normalised between the random player's (0) and the best score known for its id (1), and per namespace the
interquartile mean over ids and seeds with its stratified-bootstrap 95% interval and a performance profile, computed
with `rliable` from the baselines' eval.json files."""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from parallax_zoo.judging.seed_statistics import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED

MIN_SEEDS = 3
"""An id enters a scorecard with at least this many training seeds' scores (docs/baselines.md, "Training")."""

PROFILE_THRESHOLDS = np.linspace(0.0, 1.0, 41)[:-1]
"""The normalised scores tau at which a performance profile gives the fraction of runs scoring above tau; 1, the
best known, is left out, since no run scores above it."""


@dataclass(frozen=True)
class BaselineScores:
    """What a scorecard needs of one baseline: its training seeds' protocol scores (seed order), the random
    player's score, and the number a peer project publishes for the id, where there is one."""

    env_id: str
    seed_scores: tuple[float, ...]
    random: float
    published: float | None = None

    @property
    def best_known(self) -> float:
        """The best score known for the id: the published number or the best of its seeds, whichever is higher."""
        return max((*self.seed_scores, *(() if self.published is None else (self.published,))))

    def normalized(self) -> tuple[float, ...] | None:
        """Each seed's score with the random player's at 0 and `best_known` at 1; None where nothing known is above
        the random player, so no scale exists."""
        top = self.best_known
        if top <= self.random:
            return None
        return tuple((score - self.random) / (top - self.random) for score in self.seed_scores)


@dataclass(frozen=True)
class Scorecard:
    """A namespace's baselines summed up: the normalised scores [seeds, ids] of the ids in it, their IQM with its
    interval, the performance profile (the fraction of runs above each of `PROFILE_THRESHOLDS`) with its
    interval, and for each id left out, why."""

    namespace: str
    env_ids: tuple[str, ...]
    normalized: np.ndarray
    iqm: float | None
    iqm_ci95: tuple[float, float] | None
    profile: np.ndarray
    profile_ci95: np.ndarray
    left_out: Mapping[str, str] = field(default_factory=dict)


def read_baseline_scores(folder: Path, random: float, published: float | None = None) -> BaselineScores:
    """A shipped baseline folder's scores: its eval.json's per-seed scores (`over_seeds`), or the pinned seed's
    alone where it has none."""
    record = json.loads((folder / "eval.json").read_text(encoding="utf-8"))
    seeds = record.get("over_seeds", {}).get("scores") or {str(record.get("policy_seed", 0)): record["mean"]}
    scores = tuple(float(score) for _, score in sorted(seeds.items(), key=lambda item: int(item[0])))
    return BaselineScores(record["env_id"], scores, float(random), published)


@contextmanager
def _fixed_bootstrap() -> Iterator[None]:
    """rliable's profile bootstrap draws from NumPy's global generator: seeded here and given back as it was, so
    the same files always give the same intervals."""
    state = np.random.get_state()
    np.random.seed(BOOTSTRAP_SEED)
    try:
        with warnings.catch_warnings():  # rliable and its bootstrap warn about their own dependencies
            warnings.simplefilter("ignore")
            yield
    finally:
        np.random.set_state(state)


def scorecard(namespace: str, baselines: Sequence[BaselineScores]) -> Scorecard:
    """The scorecard of `baselines`: the ids with `MIN_SEEDS` seeds and a scale enter it, each with its first
    `runs` seeds, `runs` the fewest seeds among them (rliable's estimators take a [runs, tasks] matrix)."""
    left_out: dict[str, str] = {}
    kept: list[tuple[str, tuple[float, ...]]] = []
    for baseline in baselines:
        normalized = baseline.normalized()
        if normalized is None:
            left_out[baseline.env_id] = "no seed, and no published number, scores above the random player"
        elif len(normalized) < MIN_SEEDS:
            left_out[baseline.env_id] = (
                f"{len(normalized)} training seed's score recorded; a scorecard needs {MIN_SEEDS} (re-make it with "
                f"--seeds {MIN_SEEDS})"
            )
        else:
            kept.append((baseline.env_id, normalized))
    if not kept:
        empty = np.zeros((0, 0))
        return Scorecard(namespace, (), empty, None, None, np.zeros(0), np.zeros((2, 0)), left_out)
    runs = min(len(scores) for _, scores in kept)
    matrix = np.asarray([scores[:runs] for _, scores in kept]).T  # [runs, tasks]
    with _fixed_bootstrap():
        from rliable import library, metrics

        point, interval = library.get_interval_estimates(
            {namespace: matrix},
            lambda runs_by_tasks: np.asarray([metrics.aggregate_iqm(runs_by_tasks)]),
            reps=BOOTSTRAP_RESAMPLES,
            confidence_interval_size=0.95,
            random_state=np.random.RandomState(BOOTSTRAP_SEED),
        )
        profiles, profile_intervals = library.create_performance_profile(
            {namespace: matrix}, PROFILE_THRESHOLDS, reps=BOOTSTRAP_RESAMPLES
        )
    low, high = (float(bound) for bound in np.asarray(interval[namespace]).ravel())
    iqm = float(np.asarray(point[namespace]).ravel()[0])
    bounds = (max(low, float(matrix.min())), min(high, float(matrix.max())))  # never outside the runs' own range
    return Scorecard(
        namespace,
        tuple(env_id for env_id, _ in kept),
        matrix,
        iqm,
        bounds,
        np.asarray(profiles[namespace]),
        np.clip(np.asarray(profile_intervals[namespace]), 0.0, 1.0),
        left_out,
    )


__all__ = [
    "MIN_SEEDS",
    "PROFILE_THRESHOLDS",
    "BaselineScores",
    "Scorecard",
    "read_baseline_scores",
    "scorecard",
]
