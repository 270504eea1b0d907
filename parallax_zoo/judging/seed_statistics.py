"""A baseline's protocol score over its training seeds: each seed's score, their interquartile mean (IQM) and its
stratified-bootstrap 95% interval, computed with `rliable`, the field's library for it (docs/evaluation.md,
"Over seeds"). The IQM and its interval stay inside the seeds' own range of scores."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

BOOTSTRAP_RESAMPLES = 2_000
BOOTSTRAP_SEED = 0
"""The resamples come from a fixed seed, so the same seed scores always give the same interval."""
METHOD = f"rliable stratified bootstrap over seeds, {BOOTSTRAP_RESAMPLES} resamples, seed {BOOTSTRAP_SEED}"


@dataclass(frozen=True)
class SeedStatistics:
    """Each training seed's protocol score, their IQM and its 95% interval."""

    scores: Mapping[int, float]
    iqm: float
    low: float
    high: float

    def to_dict(self) -> dict[str, object]:
        """As eval.json keeps it under `over_seeds`."""
        scores = {str(seed): score for seed, score in self.scores.items()}
        return {"scores": scores, "iqm": self.iqm, "iqm_ci95": [self.low, self.high], "method": METHOD}

    def sentence(self) -> str:
        """The model card's sentence on the seeds."""
        each = ", ".join(f"seed {seed} {score:.3f}" for seed, score in self.scores.items())
        return (
            f" Over the {len(self.scores)} training seeds the protocol scores are {each}: interquartile mean "
            f"{self.iqm:.3f} (95% CI [{self.low:.3f}, {self.high:.3f}], stratified bootstrap over seeds, rliable)."
        )


def over_seeds(scores: Mapping[int, float]) -> SeedStatistics:
    """The statistics of per-seed protocol `scores` (seed -> score)."""
    if not scores:
        raise ValueError("over_seeds: no seed scores given")
    values = np.asarray([float(score) for score in scores.values()])[:, None]  # [runs, tasks=1]
    with warnings.catch_warnings():  # rliable and its bootstrap warn about their own dependencies
        warnings.simplefilter("ignore")
        from rliable import library, metrics

        point, interval = library.get_interval_estimates(
            {"seeds": values},
            lambda runs: np.asarray([metrics.aggregate_iqm(runs)]),
            reps=BOOTSTRAP_RESAMPLES,
            confidence_interval_size=0.95,
            random_state=np.random.RandomState(BOOTSTRAP_SEED),
        )
    low, high = (float(bound) for bound in np.asarray(interval["seeds"]).ravel())
    return SeedStatistics(
        scores={int(seed): float(score) for seed, score in scores.items()},
        iqm=float(np.asarray(point["seeds"]).ravel()[0]),
        low=max(low, float(values.min())),
        high=min(high, float(values.max())),
    )


__all__ = ["METHOD", "SeedStatistics", "over_seeds"]
