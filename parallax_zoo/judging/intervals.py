"""95% confidence intervals of a mean score that stay inside what the score can be (docs/evaluation.md).

A score with known bounds (a zero-sum game's +1/0/-1) gets the Wilson score interval of its mean rescaled to
[0, 1], which never leaves the bounds and stays honest at them (every game lost is not a certain -1); a score
without known bounds gets a percentile bootstrap interval, which never leaves the scores' own range.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

Z95 = 1.959963984540054
"""The normal quantile of a two-sided 95% interval."""
BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 0
"""The bootstrap's resamples come from a fixed seed, so a result's interval is the same every time it is computed."""


def wilson_interval(mean: float, count: int, bounds: tuple[float, float]) -> tuple[float, float]:
    """The Wilson interval of a mean of `count` scores in `bounds`, the mean read as a rate between them.

    For a score in [low, high], a Bernoulli score at the bounds has the largest variance for its mean, so the
    interval is conservative for scores in between (a draw's 0).
    """
    low, high = bounds
    rate = (mean - low) / (high - low)
    z2 = Z95 * Z95
    centre = (rate + z2 / (2 * count)) / (1 + z2 / count)
    half = Z95 * math.sqrt(rate * (1 - rate) / count + z2 / (4 * count * count)) / (1 + z2 / count)
    return (low + (high - low) * max(centre - half, 0.0), low + (high - low) * min(centre + half, 1.0))


def bootstrap_interval(scores: Sequence[float] | np.ndarray) -> tuple[float, float]:
    """The percentile bootstrap interval of the mean: 2.5% and 97.5% quantiles of resampled means."""
    values = np.asarray(scores, dtype=float)
    if values.min() == values.max():  # every resample's mean is that one score (and summing huge ones could overflow)
        return (float(values[0]), float(values[0]))
    picks = np.random.default_rng(BOOTSTRAP_SEED).integers(0, values.size, size=(BOOTSTRAP_RESAMPLES, values.size))
    means = values[picks].mean(axis=1)
    low, high = np.quantile(means, [0.025, 0.975])
    return (max(float(low), float(values.min())), min(float(high), float(values.max())))


def mean_interval(scores: Sequence[float], bounds: tuple[float, float] | None) -> tuple[float, float]:
    """The 95% interval of the mean of `scores`: Wilson within known `bounds`, else the bootstrap; NaN if undefined."""
    values = np.asarray(scores, dtype=float)
    if values.size == 0 or not np.isfinite(values).all():
        return (math.nan, math.nan)
    if bounds is not None:
        return wilson_interval(float(values.mean()), values.size, bounds)
    return bootstrap_interval(values)
