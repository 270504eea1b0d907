"""The leaderboard: evaluation results ranked per env, normalized, and Elo for zero-sum games.

Scores are normalized per env so that 0 is the uniformly random player and 1
the pinned baseline (its reference score). For zero-sum games Elo ratings come
from every recorded game: each result's games against its protocol's opponents
(the opponent ladder, the random player, the baseline), and for entrants a
round robin among them, the random player and the baseline. The scale is
anchored: the random player rates 1000 and the ladder players hold the ratings
of their anchoring fit (`scoring.anchors`); each other rating has a 95%
confidence interval (`scoring.ratings`). A result whose scores are not all
finite (a diverged policy) is ranked last, with a note, never above a finite
one; a result of another protocol version is refused.
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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from parallax_zoo.catalogue import registry
from parallax_zoo.catalogue.env_table import markdown_table
from parallax_zoo.catalogue.player_names import BASELINE, RANDOM
from parallax_zoo.agents.policy import Policy
from parallax_zoo.agents.rollout import RolloutPolicy
from parallax_zoo.agents.search import SearchPlayer
from parallax_zoo.scoring.anchors import load_anchors
from parallax_zoo.scoring.evaluation import GAMES_PER_OPPONENT, PROTOCOL_VERSION, EvalProtocol, EvalResult, evaluate, protocol
from parallax_zoo.scoring.ratings import (
    RANDOM_ELO,
    MatchRecord,
    Rating,
    elo_name,
    elo_ratings,
    fit_ratings,
    recorded_matches,
    round_robin,
)
from parallax_zoo.atomic import write_text_atomic
from parallax_zoo.errors import UserError

__all__ = [
    "RANDOM_ELO", "MatchRecord", "Rating", "elo_name", "elo_ratings", "recorded_matches", "round_robin",
    "Leaderboard", "LeaderboardInputError", "Row", "leaderboard", "load_results", "normalize",
]

NON_FINITE_NOTE = "non-finite scores (NaN or inf): ranked last"
RESULT_KEYS = {"env_id": str, "policy": str, "protocol": dict, "scores": list}
"""The keys a results file must hold, with their JSON types; the others `EvalResult.to_dict` holds are optional."""


class LeaderboardInputError(UserError, ValueError):
    """A results file is unreadable, malformed, or duplicates another's policy; the board is not made."""

COLUMN_NOTES = (
    ("rank", "Position within the env by mean score; equal scores share a rank."),
    ("score", "The mean over the env's fixed evaluation protocol: the return, or in zero-sum games the "
              "result against the first opponent (+1 win, 0 draw, -1 loss)."),
    ("95% CI", "The 95% confidence interval of the mean, inside what a score can be: Wilson for zero-sum games, "
               "a percentile bootstrap otherwise."),
    ("normalized", "(score - random) / (baseline - random): 0 is the uniformly random player, 1 the pinned "
                   "baseline's reference score; '-' where the env has no baseline."),
    ("Elo", f"Zero-sum games only: a Bradley-Terry fit to every recorded game (draws count half, one virtual draw "
            f"per pair), on a scale anchored so that the random player rates {RANDOM_ELO:.0f} and each ladder "
            "player holds the rating of its anchoring fit; in brackets the 95% confidence interval from the "
            "Fisher information of the fit, the anchors held fixed."),
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
    ratings: dict[str, dict[str, Rating]] = field(default_factory=dict)
    """Per zero-sum env, every rated player: entrants, the baseline, the random player and the ladder anchors."""

    COLUMNS = ("env", "rank", "entrant", "score", "95% CI", "normalized", "Elo", "episodes", "note")
    RATING_COLUMNS = ("env", "player", "Elo", "95% CI", "games", "role")

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
                    "-" if row.elo is None else f"{row.elo:.0f}" + (f" [{row.elo_ci[0]:.0f}, {row.elo_ci[1]:.0f}]" if row.elo_ci else ""),
                    str(row.episodes),
                    row.note,
                ))
        return cells

    def _rating_cells(self) -> list[tuple[str, ...]]:
        """Every rated player of each zero-sum env, best first; anchors show the interval of their anchoring fit."""
        cells = []
        for env_id, players in sorted(self.ratings.items()):
            for name, rating in sorted(players.items(), key=lambda item: -item[1].elo):
                role = "anchor (random player)" if name == RANDOM else "ladder anchor (fixed)" if rating.anchor else (
                    "baseline" if name == BASELINE else "entrant")
                cells.append((env_id, name, f"{rating.elo:.0f}", f"[{rating.low:.0f}, {rating.high:.0f}]", str(rating.games), role))
        return cells

    def to_markdown(self) -> str:
        """The ranked table, then (for zero-sum envs) every rated player's Elo with its 95% CI."""
        text = markdown_table(self.COLUMNS, self._cells())
        if self.ratings:
            text += "\n\n**Elo ratings** (anchored scale, 95% CI from the Fisher information):\n\n"
            text += markdown_table(self.RATING_COLUMNS, self._rating_cells())
        return text

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
        ratings = ""
        if self.ratings:
            rating_head = "".join(f"<th>{html.escape(c)}</th>" for c in self.RATING_COLUMNS)
            rating_body = "".join(
                "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in self._rating_cells())
            ratings = (
                "<h2>Elo ratings</h2><p>Every rated player of each zero-sum game on the anchored scale: the random "
                f"player rates {RANDOM_ELO:.0f} and the ladder players hold their anchoring fit's ratings (its 95% CI "
                "shown); the others' 95% CI comes from the Fisher information of the fit.</p>"
                f"<table><thead><tr>{rating_head}</tr></thead><tbody>{rating_body}</tbody></table>"
            )
        return (
            "<!DOCTYPE html><html><head><meta charset='utf-8'><title>Parallax Zoo leaderboard</title>"
            f"<style>{style}</style></head><body><h1>Parallax Zoo leaderboard</h1>"
            f"<p>Evaluation protocol version {PROTOCOL_VERSION}; made on {html.escape(self.date)}.</p>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{ratings}"
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
    if given["version"] != PROTOCOL_VERSION:
        raise refuse("protocol.version", version_problem(given["version"], data["env_id"]))
    try:
        return EvalResult.from_json(data)
    except (TypeError, ValueError, AttributeError) as error:
        raise refuse("(a field)", str(error)) from error


def leaderboard(
    results: Sequence[EvalResult] = (),
    entrants: Mapping[str, Mapping[str, Policy | RolloutPolicy | str]] | None = None,
) -> Leaderboard:
    """Rank `results` plus the `entrants` (per env id: name -> policy), evaluated here.

    Only results under the current protocol of their env are ranked; a result
    of another protocol version is a `LeaderboardInputError`. Zero-sum envs get
    Elo ratings on the anchored scale (`ratings.fit_ratings` with
    `anchors.load_anchors`) from every result's games against its opponents,
    and with entrants from a round robin among them, the random player and the
    baseline (where pinned; its own games against the ladder are played too).
    """
    by_env: dict[str, dict[str, EvalResult]] = {}
    for result in results:
        if result.protocol.version != PROTOCOL_VERSION:
            raise LeaderboardInputError(f"the result of {result.policy!r} on {result.env_id}: "
                                        f"{version_problem(result.protocol.version, result.env_id)}")
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
            if name in registry.spec(env_id).opponents:
                raise LeaderboardInputError(
                    f"the entrant {name!r} on {env_id} has the name of a scripted opponent of its protocol (registry.yaml "
                    "`opponents`); the board was not made. Rename the entrant"
                )
            by_env.setdefault(env_id, {})[name] = evaluate(env_id, policy, name=name)
    rows: list[Row] = []
    board_ratings: dict[str, dict[str, Rating]] = {}
    for env_id in sorted(by_env):
        env_spec = registry.spec(env_id)
        random_score = evaluate(env_id, RANDOM).mean
        ratings: dict[str, Rating] = {}
        if "zero-sum" in env_spec.tags:
            records = recorded_matches(by_env[env_id].values())
            if env_id in entrants:
                players: dict[str, Policy | RolloutPolicy | str] = {RANDOM: RANDOM, **entrants[env_id]}
                if env_spec.baseline is not None:
                    players[BASELINE], measured = pinned_baseline(env_id)
                    if BASELINE not in map(elo_name, by_env[env_id]):  # its own games against the ladder
                        records.update(recorded_matches([measured]))
                records.update(round_robin(env_id, players))
            if records:
                ratings = fit_ratings(records, load_anchors(env_id))
                board_ratings[env_id] = ratings
        ranked = sorted(by_env[env_id].values(), key=lambda r: (r.finite, r.mean if r.finite else 0.0), reverse=True)
        for result in ranked:
            rows.append(Row(
                env_id=env_id,
                entrant=result.policy,
                mean=result.mean,
                ci95=result.ci95,
                episodes=result.episodes,
                normalized=normalize(result.mean, random_score, env_spec.reference_score),
                elo=rating.elo if (rating := ratings.get(elo_name(result.policy))) else None,
                elo_ci=(rating.low, rating.high) if rating else None,
                note="" if result.finite else NON_FINITE_NOTE,
            ))
    return Leaderboard(rows, ratings=board_ratings)


def pinned_baseline(env_id: str) -> tuple[Policy | SearchPlayer, EvalResult]:
    """The pinned baseline and its protocol games: those its hash-checked `eval.json` records where they were
    measured under the current protocol, else played here."""
    from parallax_zoo.scoring.loading import baseline_files, load_files

    files = baseline_files(env_id)
    baseline = load_files(files, registry.make(env_id))
    if "eval.json" in files.contents:
        measured = EvalResult.from_json(json.loads(files.contents["eval.json"]))
        if measured.protocol == protocol(env_id):
            return baseline, dataclasses.replace(measured, policy=BASELINE)
    return baseline, evaluate(env_id, baseline, name=BASELINE, baseline=baseline)


def version_problem(version: int, env_id: str) -> str:
    """Why a result of another protocol version is refused, and how to get one of this version."""
    return (
        f"evaluation protocol version {version}, not {PROTOCOL_VERSION}; results of another version are refused, as "
        f"their scores do not compare (version 2 plays zero-sum games against the opponent ladder, "
        f"{GAMES_PER_OPPONENT} games per opponent, half from each seat). "
        f"Evaluate the policy again: `parallax-zoo eval {env_id} --policy P --out FILE`"
    )
