"""A spec's reference score as tables and `parallax-zoo info` show it: the number, and for a zero-sum game the
opponent it is the mean result against."""

from __future__ import annotations

from parallax_zoo.catalogue.player_names import RANDOM
from parallax_zoo.catalogue.registry import EnvSpec

UNBEATEN_OPPONENTS = ("perfect",)
"""Scripted opponents that play a solved game and never lose: a mean of 0 against one is a draw in every game."""


def reference_score_cell(env_spec: EnvSpec) -> str:
    """The reference score as a table shows it: a zero-sum game's names the opponent it is the mean result against
    (+1 win, 0 draw, -1 loss), and a 0 against an opponent that never loses reads as what it is, all draws."""
    score = env_spec.reference_score
    if score is None:
        return "-"
    if "zero-sum" not in env_spec.tags:
        return f"{score:.3f}"
    opponent = next(iter(env_spec.opponents), RANDOM)  # the protocol's first opponent
    if score == 0.0 and opponent in UNBEATEN_OPPONENTS:
        return f"{score:.3f} vs {opponent}: every game drawn, the best possible"
    return f"{score:.3f} vs {opponent}"
