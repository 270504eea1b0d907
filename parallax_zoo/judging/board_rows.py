"""The rows of a leaderboard: what each shows, what each column means, and how rows rank (docs/evaluation.md).

The board (`leaderboard.py`) makes them and its page (`leaderboard_page.py`) draws them; both read them from here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from parallax_zoo.judging.ratings import RANDOM_ELO

NON_FINITE_NOTE = "non-finite scores (NaN or inf): ranked last"

COLUMN_NOTES = (
    ("rank", "Position within the env by mean score; equal scores share a rank."),
    (
        "score",
        "The mean over the env's fixed evaluation protocol: the return, or in zero-sum games the "
        "result against the first opponent (+1 win, 0 draw, -1 loss).",
    ),
    (
        "95% CI",
        "The 95% confidence interval of the mean, inside what a score can be: Wilson for zero-sum games, "
        "a percentile bootstrap otherwise.",
    ),
    (
        "normalized",
        "(score - random) / (baseline - random): 0 is the uniformly random player, 1 the pinned "
        "baseline's reference score; '-' where the env has no baseline.",
    ),
    (
        "Elo",
        f"Zero-sum games only: a Bradley-Terry fit to every recorded game (draws count half, one virtual draw "
        f"per pair), on a scale anchored so that the random player rates {RANDOM_ELO:.0f} and each ladder "
        "player holds the rating of its anchoring fit; in brackets the 95% confidence interval from the "
        "Fisher information of the fit, the anchors held fixed.",
    ),
    ("episodes", "Episodes behind the score."),
)
"""What each column means, printed under the HTML table."""


@dataclass(frozen=True)
class Row:
    env_id: str
    entrant: str
    mean: float
    ci95: tuple[float, float]
    episodes: int
    normalized: float | None
    elo: float | None = None
    note: str = ""
    elo_ci: tuple[float, float] | None = None
    """The Elo rating's 95% confidence interval (`ratings.fit_ratings`)."""
    opponents: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    """Zero-sum games: the result's win/draw/loss record against each protocol opponent (`EvalResult.opponents`)."""
    provenance: Mapping[str, Any] = field(default_factory=dict)
    """Where the policy's files came from: repo, commit and each file's sha256 (`EvalResult.provenance`)."""


def rank_key(row: Row) -> float:
    """What a row is ranked by: its mean, a non-finite one below every finite score."""
    return row.mean if math.isfinite(row.mean) else -math.inf
