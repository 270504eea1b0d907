"""Elo ratings of zero-sum games: the games behind them, and a Bradley-Terry fit with fixed anchors and confidence
intervals.

A rating is `400 * log10(strength)` shifted so the anchors hold their fixed
ratings: the uniformly random player 1000 and, in games with an opponent
ladder, each ladder player the rating its anchoring fit gave it
(`judging.anchors`), so a rating means the same on every board and over time
(docs/evaluation.md). Every other player is fitted by maximum likelihood, draws
counting half a win each way and every pair given one virtual draw (so a clean
sweep still has a finite rating). Its 95% confidence interval comes from the
Fisher information of that fit, the anchors held fixed.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np

from parallax.core import AnyEnv
from parallax_zoo.agents.player import Player
from parallax_zoo.agents.player_factories import as_player
from parallax_zoo.catalogue.player_names import BASELINE, RANDOM
from parallax_zoo.catalogue.registry import EnvSpec
from parallax_zoo.judging import programs, progress
from parallax_zoo.judging.evaluation import EvalResult, protocol

RANDOM_ELO = 1000.0
"""The uniformly random player's rating on every board."""
ELO_PER_NAT = 400.0 / math.log(10.0)
"""Elo points per unit of log-strength."""
Z95 = 1.959964
"""The normal quantile of a two-sided 95% interval."""


@dataclass(frozen=True)
class MatchRecord:
    """Games between two players, counted from the first one's side."""

    wins: int
    draws: int
    losses: int

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses


@dataclass(frozen=True)
class Rating:
    """One player's Elo rating with its 95% confidence interval and the games behind it.

    `anchor` marks a rating held fixed in the fit (its interval is the one its own anchoring fit measured).
    """

    elo: float
    low: float
    high: float
    games: int
    anchor: bool = False

    def __str__(self) -> str:
        return f"{self.elo:.0f} [{self.low:.0f}, {self.high:.0f}]"

    def to_json(self) -> dict[str, float | int]:
        """The rating as eval.json and the anchors file keep it."""
        return {"elo": self.elo, "low": self.low, "high": self.high, "games": self.games}

    @classmethod
    def from_json(cls, data: Mapping[str, Any], anchor: bool = False) -> Rating:
        """A rating kept by `to_json`; `anchor` holds it fixed in a fit."""
        return cls(float(data["elo"]), float(data["low"]), float(data["high"]), int(data["games"]), anchor=anchor)


class UnanchoredPlayersError(ValueError):
    """Some players have no chain of games to an anchor, so the scale gives them no rating."""


def fit_ratings(
    records: Mapping[tuple[str, str], MatchRecord], anchors: Mapping[str, Rating | float]
) -> dict[str, Rating]:
    """Every player's rating: `anchors` (name -> fixed rating) as given, the others by maximum likelihood.

    Players of `anchors` that played no game in `records` are left out. A
    player with no chain of games to an anchor is an `UnanchoredPlayersError`.
    The fit is Newton's method on the concave log-likelihood; the intervals
    are `elo +/- 1.96 / sqrt(information)`, from the inverse of the Fisher
    information matrix of the free players.
    """
    names = sorted({name for pair in records for name in pair})
    index = {name: i for i, name in enumerate(names)}
    wins = np.zeros((len(names), len(names)))
    for (a, b), record in records.items():
        i, j = index[a], index[b]
        wins[i, j] += record.wins + 0.5 * record.draws + 0.5
        wins[j, i] += record.losses + 0.5 * record.draws + 0.5
    played = wins + wins.T
    fixed = {
        name: (value.elo if isinstance(value, Rating) else float(value))
        for name, value in anchors.items()
        if name in index
    }
    _check_connected(names, played, fixed, sorted(anchors))
    theta = np.zeros(len(names))
    for name, elo in fixed.items():
        theta[index[name]] = elo / ELO_PER_NAT
    free = np.array([name not in fixed for name in names])
    start = np.mean(theta[~free]) if (~free).any() else 0.0
    theta[free] = start
    information = np.zeros((0, 0))
    for _ in range(200):
        expected = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))  # P(i beats j)
        gradient = (wins - played * expected).sum(axis=1)[free]
        weight = played * expected * (1.0 - expected)
        hessian = np.diag(weight.sum(axis=1)) - weight
        information = hessian[np.ix_(free, free)]
        if not free.any():
            break
        step = np.clip(np.linalg.solve(information, gradient), -1.0, 1.0)
        theta[free] += step
        if np.max(np.abs(step)) < 1e-10:
            break
    spread = np.zeros(len(names))
    if free.any():
        spread[free] = np.sqrt(np.diag(np.linalg.inv(information))) * Z95 * ELO_PER_NAT
    games = dict.fromkeys(names, 0)
    for (a, b), record in records.items():
        games[a] += record.games
        games[b] += record.games
    ratings = {}
    for name in names:
        if name in fixed:
            given = anchors[name]
            low, high = (given.low, given.high) if isinstance(given, Rating) else (fixed[name], fixed[name])
            ratings[name] = Rating(fixed[name], low, high, games[name], anchor=True)
        else:
            elo, half = float(theta[index[name]] * ELO_PER_NAT), float(spread[index[name]])
            ratings[name] = Rating(elo, elo - half, elo + half, games[name])
    return ratings


def _check_connected(names: list[str], played: np.ndarray, fixed: Mapping[str, float], anchors: list[str]) -> None:
    """Raise `UnanchoredPlayersError` naming the players no chain of games links to an anchor."""
    reached = {name for name in names if name in fixed}
    frontier = list(reached)
    while frontier:
        i = names.index(frontier.pop())
        for j in np.flatnonzero(played[i]):
            if names[j] not in reached:
                reached.add(names[j])
                frontier.append(names[j])
    unanchored = [name for name in names if name not in reached]
    if unanchored:
        raise UnanchoredPlayersError(
            f"no games link {unanchored} to an anchor (anchors: {anchors}); every player needs a chain of "
            "games to one, such as the protocol's games against the random player"
        )


def elo_ratings(records: Mapping[tuple[str, str], MatchRecord], anchor: str = RANDOM) -> dict[str, float]:
    """The ratings of `fit_ratings` with `anchor` alone fixed at `RANDOM_ELO` (absent: the mean is `RANDOM_ELO`)."""
    names = sorted({name for pair in records for name in pair})
    if anchor in names:
        return {name: rating.elo for name, rating in fit_ratings(records, {anchor: RANDOM_ELO}).items()}
    ratings = {name: rating.elo for name, rating in fit_ratings(records, {names[0]: 0.0}).items()}
    offset = RANDOM_ELO - float(np.mean(list(ratings.values())))
    return {name: elo + offset for name, elo in ratings.items()}


def elo_name(policy: str) -> str:
    """The player a result's policy is in the Elo fit: the pinned baseline ("baseline:REPO@REV") is "baseline",
    the name its opponents know it by."""
    return BASELINE if policy.startswith(f"{BASELINE}:") else policy


def recorded_matches(results: Iterable[EvalResult]) -> dict[tuple[str, str], MatchRecord]:
    """The games every result records against its named opponents (`opponents`: the games and their win, draw and
    loss rates), as match records for `fit_ratings`; so results files alone give Elo ratings."""
    records: dict[tuple[str, str], MatchRecord] = {}
    for result in results:
        player = elo_name(result.policy)
        for opponent, record in result.opponents.items():
            if opponent == player or not all(math.isfinite(record.get(k, math.nan)) for k in ("win", "draw", "loss")):
                continue
            games = record.get("games", result.protocol.episodes)
            records[(player, opponent)] = MatchRecord(
                wins=round(record["win"] * games),
                draws=round(record["draw"] * games),
                losses=round(record["loss"] * games),
            )
    return records


def round_robin(
    env_spec: EnvSpec,
    env: AnyEnv,
    entrants: Mapping[str, Player | str],
    episodes: int | None = None,
    seed_offset: int = 1000,
    pairs: Sequence[tuple[str, str]] | None = None,
) -> dict[tuple[str, str], MatchRecord]:
    """Every pair of entrants plays `episodes` games (both seats equally) in `env` under its spec's protocol; with
    `pairs`, those pairs of entrants alone.

    Pair `k` (in sorted order, or in the order of `pairs`) plays from the key the protocol's root seed folds with
    `seed_offset + k`.
    """
    fixed = protocol(env_spec)
    count = episodes or fixed.episodes
    players = {name: as_player(env, policy, fixed.greedy) for name, policy in entrants.items()}
    records = {}
    pairs = list(itertools.combinations(sorted(players), 2)) if pairs is None else list(pairs)
    with progress.bar(f"{env_spec.id}: round robin of {len(players)} players", count * len(pairs), "games") as shown:
        for index, (a, b) in enumerate(pairs):
            shown.set_postfix_str(f"{a} vs {b} ({index + 1} of {len(pairs)} pairs)")
            key = jax.random.fold_in(jax.random.key(fixed.root_seed), seed_offset + index)
            result = programs.match(env, players[a], players[b], key, count, fixed.max_steps)
            records[(a, b)] = MatchRecord(
                wins=round(float(result["win"]) * count),
                draws=round(float(result["draw"]) * count),
                losses=round(float(result["loss"]) * count),
            )
            shown.update(count)
    return records
