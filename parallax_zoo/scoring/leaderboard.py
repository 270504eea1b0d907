"""The leaderboard: evaluation results ranked per env, normalized, and Elo for zero-sum games.

Scores are normalized per env so that 0 is the uniformly random player and 1
the pinned baseline (its reference score). For zero-sum games the entrants
with policies also meet in a round robin (with the random player and the
baseline); Elo ratings come from a Bradley-Terry fit to those games, draws
counting half, anchored so that the random player rates 1000. A result whose
scores are not all finite (a diverged policy) is ranked last, with a note,
never above a finite one. Every result records its games against its named
opponents, so results files alone carry what Elo needs; entrants add a round
robin among themselves.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime
import html
import io
import itertools
import json
import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import jax
import numpy as np

from parallax_zoo.catalogue import registry
from parallax_zoo.catalogue.env_table import markdown_table
from parallax_zoo.catalogue.player_names import BASELINE, RANDOM
from parallax_zoo.agents.policy import Policy
from parallax_zoo.agents.rollout import RolloutPolicy
from parallax_zoo.scoring.evaluation import PROTOCOL_VERSION, EvalProtocol, EvalResult, as_player, evaluate, protocol
from parallax_zoo.atomic import write_text_atomic
from parallax_zoo.scoring import compiled
from parallax_zoo.errors import UserError

RANDOM_ELO = 1000.0
NON_FINITE_NOTE = "non-finite scores (NaN or inf): ranked last"
RESULT_KEYS = {"env_id": str, "policy": str, "protocol": dict, "scores": list}
"""The keys a results file must hold, with their JSON types; the others `EvalResult.to_dict` holds are optional."""


class LeaderboardInputError(UserError, ValueError):
    """A results file is unreadable, malformed, or duplicates another's policy; the board is not made."""

COLUMN_NOTES = (
    ("rank", "Position within the env by mean score; equal scores share a rank."),
    ("score", "The mean over the env's fixed evaluation protocol: the return, or in zero-sum games the "
              "result against the first opponent (+1 win, 0 draw, -1 loss)."),
    ("95% CI", "The normal-approximation 95% confidence interval of the mean."),
    ("normalized", "(score - random) / (baseline - random): 0 is the uniformly random player, 1 the pinned "
                   "baseline's reference score; '-' where the env has no baseline."),
    ("Elo", f"Zero-sum games only: a Bradley-Terry fit to every recorded game (draws count half), anchored so "
            f"that the random player rates {RANDOM_ELO:.0f}."),
    ("episodes", "Episodes behind the score."),
)
"""What each column means, printed under the HTML table."""


@dataclass(frozen=True)
class MatchRecord:
    """Games between two entrants, counted from the first one's side."""

    wins: int
    draws: int
    losses: int


def elo_ratings(records: Mapping[tuple[str, str], MatchRecord], anchor: str = RANDOM, iterations: int = 2000) -> dict[str, float]:
    """Elo ratings that best explain `records` (Bradley-Terry maximum likelihood; draws count half a win each way).

    Every pair also gets one virtual draw, which keeps ratings finite when an
    entrant wins every game. `anchor` is rated `RANDOM_ELO`.
    """
    names = sorted({name for pair in records for name in pair})
    index = {name: i for i, name in enumerate(names)}
    wins = np.zeros((len(names), len(names)))
    for (a, b), record in records.items():
        i, j = index[a], index[b]
        wins[i, j] += record.wins + 0.5 * record.draws + 0.5
        wins[j, i] += record.losses + 0.5 * record.draws + 0.5
    games = wins + wins.T
    strength = np.ones(len(names))
    for _ in range(iterations):
        denominator = (games / (strength[:, None] + strength[None, :])).sum(axis=1)
        strength = wins.sum(axis=1) / denominator
        strength /= np.exp(np.mean(np.log(strength)))
    ratings = 400.0 * np.log10(strength)
    offset = RANDOM_ELO - ratings[index[anchor]] if anchor in index else RANDOM_ELO - ratings.mean()
    return {name: float(ratings[index[name]] + offset) for name in names}


def elo_name(policy: str) -> str:
    """The player a result's policy is in the Elo fit: the pinned baseline ("baseline:REPO@REV") is "baseline",
    the name its opponents know it by."""
    return BASELINE if policy.startswith(f"{BASELINE}:") else policy


def recorded_matches(results: Iterable[EvalResult]) -> dict[tuple[str, str], MatchRecord]:
    """The games every result records against its named opponents (`opponents`: win, draw and loss rates over
    the protocol's episodes), as match records for `elo_ratings`; so results files alone give Elo ratings."""
    records: dict[tuple[str, str], MatchRecord] = {}
    for result in results:
        player, games = elo_name(result.policy), result.protocol.episodes
        for opponent, record in result.opponents.items():
            if opponent == player or not all(math.isfinite(record.get(k, math.nan)) for k in ("win", "draw", "loss")):
                continue
            records[(player, opponent)] = MatchRecord(
                wins=round(record["win"] * games), draws=round(record["draw"] * games), losses=round(record["loss"] * games)
            )
    return records


def round_robin(
    env_id: str, entrants: Mapping[str, Policy | RolloutPolicy | str], episodes: int | None = None
) -> dict[tuple[str, str], MatchRecord]:
    """Every pair of entrants plays `episodes` games (both seats equally) under `env_id`'s protocol."""
    env_spec = registry.spec(env_id)
    fixed = protocol(env_spec)
    count = episodes or fixed.episodes
    env = compiled.protocol_env(env_spec)
    players = {name: as_player(env, policy, fixed.greedy) for name, policy in entrants.items()}
    records = {}
    for index, (a, b) in enumerate(itertools.combinations(sorted(players), 2)):
        key = jax.random.fold_in(jax.random.key(fixed.root_seed), 1000 + index)
        result = compiled.match(env_spec, players[a], players[b], key, count, fixed.max_steps)
        records[(a, b)] = MatchRecord(
            wins=round(float(result["win"]) * count),
            draws=round(float(result["draw"]) * count),
            losses=round(float(result["loss"]) * count),
        )
    return records


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

    @property
    def normalised(self) -> float | None:
        """The previous spelling of `normalized`, kept with a DeprecationWarning for one release."""
        warnings.warn("Row.normalised is spelt Row.normalized now", DeprecationWarning, stacklevel=2)
        return self.normalized


@dataclass
class Leaderboard:
    """Ranked rows, best first within each env; renders as Markdown, CSV and a self-contained HTML page."""

    rows: list[Row] = field(default_factory=list)
    date: str = field(default_factory=lambda: datetime.date.today().isoformat())
    """The day the board was made, shown on the HTML page."""

    COLUMNS = ("env", "rank", "entrant", "score", "95% CI", "normalized", "Elo", "episodes", "note")

    def _cells(self) -> list[tuple[str, ...]]:
        cells = []
        for env_id, group in itertools.groupby(self.rows, key=lambda row: row.env_id):
            rows = list(group)
            for row in rows:
                rank = 1 + sum(_rank_key(other) > _rank_key(row) for other in rows)  # equal scores share a rank: 1, 1, 3
                cells.append((
                    env_id,
                    str(rank),
                    row.entrant,
                    f"{row.mean:.3f}",
                    f"[{row.ci95[0]:.3f}, {row.ci95[1]:.3f}]",
                    "-" if row.normalized is None or not math.isfinite(row.normalized) else f"{row.normalized:.3f}",
                    "-" if row.elo is None else f"{row.elo:.0f}",
                    str(row.episodes),
                    row.note,
                ))
        return cells

    def to_markdown(self) -> str:
        return markdown_table(self.COLUMNS, self._cells())

    def to_csv(self) -> str:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(self.COLUMNS)
        writer.writerows(self._cells())
        return buffer.getvalue()

    def to_html(self) -> str:
        head = "".join(f"<th>{html.escape(c)}</th>" for c in self.COLUMNS)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in self._cells())
        style = (
            "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
            "th,td{border:1px solid #ccc;padding:4px 10px;text-align:left}th{background:#f3f3f3}"
        )
        notes = "".join(f"<dt>{html.escape(name)}</dt><dd>{html.escape(text)}</dd>" for name, text in COLUMN_NOTES)
        return (
            "<!DOCTYPE html><html><head><meta charset='utf-8'><title>Parallax Zoo leaderboard</title>"
            f"<style>{style}</style></head><body><h1>Parallax Zoo leaderboard</h1>"
            f"<p>Evaluation protocol version {PROTOCOL_VERSION}; made on {html.escape(self.date)}.</p>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
            f"<h2>Columns</h2><dl>{notes}</dl></body></html>\n"
        )

    def write(self, folder: str | Path) -> dict[str, Path]:
        """Write `leaderboard.md`, `.csv` and `.html` into `folder`."""
        folder = Path(folder)
        outputs = {"md": self.to_markdown(), "csv": self.to_csv(), "html": self.to_html()}
        paths = {}
        for suffix, text in outputs.items():
            paths[suffix] = folder / f"leaderboard.{suffix}"
            write_text_atomic(paths[suffix], text)
        return paths


def _rank_key(row: Row) -> float:
    """What a row is ranked by: its mean, a non-finite one below every finite score."""
    return row.mean if math.isfinite(row.mean) else -math.inf


def normalize(score: float, random_score: float, baseline_score: float | None) -> float | None:
    """0 for the random player's score, 1 for the baseline's; None without a baseline or when they coincide."""
    if baseline_score is None or math.isclose(baseline_score, random_score):
        return None
    return (score - random_score) / (baseline_score - random_score)


def normalise(score: float, random_score: float, baseline_score: float | None) -> float | None:
    """The previous spelling of `normalize`, kept with a DeprecationWarning for one release."""
    warnings.warn("leaderboard.normalise is spelt leaderboard.normalize now", DeprecationWarning, stacklevel=2)
    return normalize(score, random_score, baseline_score)


def _scored_alike(a: EvalProtocol, b: EvalProtocol) -> bool:
    """Whether two protocols score episodes alike: all but the list of extra opponents agrees."""
    return dataclasses.replace(a, opponents=()) == dataclasses.replace(b, opponents=())


def load_results(folder: str | Path) -> list[EvalResult]:
    """Every evaluation result (`*.json` written by `EvalResult.save`) in `folder` (or the one file `folder` names).

    Fatal, as a `LeaderboardInputError` naming the file and the field: a path that does not exist, a folder
    without results, a file that is not UTF-8 JSON or not a result, and two files with the same policy on one env.
    """
    path = Path(folder)
    if not path.exists():
        raise LeaderboardInputError(f"--results {path}: no such file or folder; give the folder `eval --out` wrote results into")
    paths = [path] if path.is_file() else sorted(path.glob("*.json"))
    if not paths:
        raise LeaderboardInputError(f"--results {path}: the folder holds no *.json results; write some with "
                                    "`parallax-zoo eval ID --policy P --out FOLDER/NAME.json`")
    results, seen = [], {}
    for file in paths:
        result = _read_result(file)
        key = (result.env_id, result.policy)
        if key in seen:
            raise LeaderboardInputError(
                f"{seen[key]} and {file} both hold results of policy {result.policy!r} on {result.env_id}; the board "
                "was not made (fatal). Keep one file, or give the other run its own name (its 'policy' field)"
            )
        seen[key] = file
        results.append(result)
    return results


def _read_result(file: Path) -> EvalResult:
    """One results file, checked field by field; any problem is fatal and names the file and the field."""

    def refuse(field_name: str, problem: str) -> LeaderboardInputError:
        return LeaderboardInputError(f"{file}: {field_name}: {problem}; the board was not made (fatal). "
                                     "Fix the file, or move it out of the results folder")

    try:
        data = json.loads(file.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as error:
        raise refuse("(whole file)", f"not UTF-8 text (byte {error.start})") from error
    except json.JSONDecodeError as error:
        raise refuse("(whole file)", f"not JSON ({error.msg} at line {error.lineno}, column {error.colno})") from error
    if not isinstance(data, dict):
        raise refuse("(whole file)", f"expected a JSON object as `parallax-zoo eval --out` writes, got {type(data).__name__}")
    for name, kind in RESULT_KEYS.items():
        if name not in data:
            raise refuse(name, "missing")
        if not isinstance(data[name], kind):
            raise refuse(name, f"expected a JSON {kind.__name__}, got {type(data[name]).__name__}")
    if not data["scores"]:
        raise refuse("scores", "empty; a result holds one score per episode")
    bad = [x for x in data["scores"] if x is not None and (type(x) not in (int, float))]
    if bad:
        raise refuse("scores", f"expected numbers (or null for a non-finite one), found {bad[0]!r}")
    if data["env_id"] not in registry.list_envs():
        raise refuse("env_id", f"{data['env_id']!r} is not a registered env id")
    fields = {f.name: f for f in dataclasses.fields(EvalProtocol)}
    given = data["protocol"]
    missing, extra = sorted(set(fields) - set(given)), sorted(set(given) - set(fields))
    if missing or extra:
        problem = "; ".join([f"missing {missing}"] * bool(missing) + [f"unexpected {extra}"] * bool(extra))
        raise refuse("protocol", problem)
    for name, value in given.items():
        expected = {"env_id": str, "opponents": list, "greedy": bool, "zero_sum": bool}.get(name, int)
        if type(value) is not expected:
            raise refuse(f"protocol.{name}", f"expected a JSON {expected.__name__}, got {value!r}")
    try:
        return EvalResult.from_json(data)
    except (TypeError, ValueError, AttributeError) as error:
        raise refuse("(a field)", str(error)) from error


def leaderboard(
    results: Sequence[EvalResult] = (),
    entrants: Mapping[str, Mapping[str, Policy | RolloutPolicy | str]] | None = None,
) -> Leaderboard:
    """Rank `results` plus the `entrants` (per env id: name -> policy), evaluated here.

    Only results under the current protocol of their env are ranked. Zero-sum
    envs with entrants also get Elo ratings from a round robin among them, the
    random player and the baseline (where pinned).
    """
    by_env: dict[str, dict[str, EvalResult]] = {}
    for result in results:
        if _scored_alike(result.protocol, protocol(result.env_id)):
            if result.policy in by_env.get(result.env_id, {}):
                raise LeaderboardInputError(
                    f"two results of policy {result.policy!r} on {result.env_id}; give each run its own name"
                )
            by_env.setdefault(result.env_id, {})[result.policy] = result
    entrants = entrants or {}
    for env_id, named in entrants.items():
        for name, policy in named.items():
            if name in by_env.get(env_id, {}):
                raise LeaderboardInputError(
                    f"the entrant {name!r} on {env_id} has the name of a result in --results; the board was not made. "
                    "Rename one of them"
                )
            by_env.setdefault(env_id, {})[name] = evaluate(env_id, policy, name=name)
    rows: list[Row] = []
    for env_id in sorted(by_env):
        env_spec = registry.spec(env_id)
        random_score = evaluate(env_id, RANDOM).mean
        ratings: dict[str, float] = {}
        if "zero-sum" in env_spec.tags:
            records = recorded_matches(by_env[env_id].values())
            if env_id in entrants:
                players: dict[str, Policy | RolloutPolicy | str] = {RANDOM: RANDOM, **entrants[env_id]}
                if env_spec.baseline is not None:
                    from parallax_zoo.scoring.loading import load_baseline

                    players[BASELINE] = load_baseline(env_id)
                records.update(round_robin(env_id, players))
            if records:
                ratings = elo_ratings(records)
        ranked = sorted(by_env[env_id].values(), key=lambda r: (r.finite, r.mean if r.finite else 0.0), reverse=True)
        for result in ranked:
            rows.append(Row(
                env_id=env_id,
                entrant=result.policy,
                mean=result.mean,
                ci95=result.ci95,
                episodes=result.episodes,
                normalized=normalize(result.mean, random_score, env_spec.reference_score),
                elo=ratings.get(elo_name(result.policy)),
                note="" if result.finite else NON_FINITE_NOTE,
            ))
    return Leaderboard(rows)
