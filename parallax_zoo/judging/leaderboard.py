"""The leaderboard: evaluation results ranked per env, normalized, and Elo for zero-sum games.

Scores are normalized per env so that 0 is the uniformly random player and 1
the pinned baseline (its reference score). For zero-sum games Elo ratings come
from every recorded game: each result's games against its protocol's opponents
(the opponent ladder, the random player, the baseline), and for entrants a
round robin among them, the random player and the baseline. The scale is
anchored: the random player rates 1000 and the ladder players hold the ratings
of their anchoring fit (`judging.anchors`); each other rating has a 95%
confidence interval (`judging.ratings`). A result whose scores are not all
finite (a diverged policy) is ranked last, with a note, never above a finite
one; a result of another protocol version is refused.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime
import io
import itertools
import json
import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from parallax.core import AnyEnv
from parallax_zoo.agents.player import Player
from parallax_zoo.atomic import write_texts_atomic
from parallax_zoo.catalogue import registry
from parallax_zoo.catalogue.player_names import BASELINE, RANDOM
from parallax_zoo.catalogue.registry import EnvSpec
from parallax_zoo.errors import UserError
from parallax_zoo.judging.anchors import load_anchors
from parallax_zoo.judging.board_rows import NON_FINITE_NOTE, Row, rank_key
from parallax_zoo.judging.evaluation import EvalProtocol, EvalResult, evaluate, protocol
from parallax_zoo.judging.leaderboard_page import leaderboard_page
from parallax_zoo.judging.random_scores import stored_random_score
from parallax_zoo.judging.ratings import (
    RANDOM_ELO,
    MatchRecord,
    Rating,
    elo_name,
    elo_ratings,
    fit_ratings,
    recorded_matches,
    round_robin,
)
from parallax_zoo.judging.result_checks import name_problem, result_problem

__all__ = [
    "RANDOM_ELO",
    "MatchRecord",
    "Rating",
    "elo_name",
    "elo_ratings",
    "recorded_matches",
    "round_robin",
    "Leaderboard",
    "LeaderboardInputError",
    "Row",
    "leaderboard",
    "load_results",
    "normalize",
]

RESULT_KEYS = {"env_id": str, "policy": str, "protocol": dict, "scores": list}
"""The keys a results file must hold, with their JSON types; the others `EvalResult.to_dict` holds are optional."""


class LeaderboardInputError(UserError, ValueError):
    """A results file is unreadable, malformed, or duplicates another's policy; the board is not made."""


def markdown_table(columns: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A Markdown table: the header, the rule, one line per row; a `|` inside a cell is escaped."""

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

    return "\n".join([line(columns), "|" + "---|" * len(columns), *map(line, rows)]) + "\n"


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
                rank = 1 + sum(rank_key(other) > rank_key(row) for other in rows)  # equal scores share a rank: 1, 1, 3
                cells.append(
                    (
                        env_id,
                        str(rank),
                        row.entrant,
                        f"{row.mean:.3f}",
                        f"[{row.ci95[0]:.3f}, {row.ci95[1]:.3f}]",
                        "-" if row.normalized is None or not math.isfinite(row.normalized) else f"{row.normalized:.3f}",
                        "-"
                        if row.elo is None
                        else f"{row.elo:.0f}" + (f" [{row.elo_ci[0]:.0f}, {row.elo_ci[1]:.0f}]" if row.elo_ci else ""),
                        str(row.episodes),
                        row.note,
                    )
                )
        return cells

    def _rating_cells(self) -> list[tuple[str, ...]]:
        """Every rated player of each zero-sum env, best first; anchors show the interval of their anchoring fit."""
        cells = []
        for env_id, players in sorted(self.ratings.items()):
            for name, rating in sorted(players.items(), key=lambda item: (-item[1].elo, item[0])):
                role = (
                    "anchor (random player)"
                    if name == RANDOM
                    else "ladder anchor (fixed)"
                    if rating.anchor
                    else ("baseline" if name == BASELINE else "entrant")
                )
                cells.append(
                    (
                        env_id,
                        name,
                        f"{rating.elo:.0f}",
                        f"[{rating.low:.0f}, {rating.high:.0f}]",
                        str(rating.games),
                        role,
                    )
                )
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
        writer.writerows([_spreadsheet_safe(cell) for cell in row] for row in self._cells())
        return buffer.getvalue()

    def to_html(self) -> str:
        return leaderboard_page(self.rows, self.ratings, self.date)

    def write(self, folder: str | Path) -> dict[str, Path]:
        """Write `leaderboard.md`, `.csv` and `.html` into `folder`, as one set: all three new, or (on an
        `atomic.OutputNotWrittenError` naming the file) all three as they were."""
        paths = output_paths(folder)
        outputs = {"md": self.to_markdown(), "csv": self.to_csv(), "html": self.to_html()}
        write_texts_atomic({paths[suffix]: text for suffix, text in outputs.items()})
        return paths


def output_paths(folder: str | Path) -> dict[str, Path]:
    """The files `Leaderboard.write` writes into `folder`, by suffix."""
    return {suffix: Path(folder) / f"leaderboard.{suffix}" for suffix in ("md", "csv", "html")}


SPREADSHEET_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""How a CSV cell a spreadsheet would run as a formula begins."""


def _spreadsheet_safe(cell: str) -> str:
    """`cell`, with a leading `'` where a spreadsheet would read it as a formula (a number stays a number)."""
    if not cell.startswith(SPREADSHEET_FORMULA_STARTS):
        return cell
    try:
        float(cell)
    except ValueError:
        return "'" + cell
    return cell


def normalize(score: float, random_score: float, baseline_score: float | None) -> float | None:
    """0 for the random player's score, 1 for the baseline's; None without a baseline or when they coincide."""
    if baseline_score is None or math.isclose(baseline_score, random_score):
        return None
    return (score - random_score) / (baseline_score - random_score)


def load_results(folder: str | Path) -> list[EvalResult]:
    """Every evaluation result (`*.json` written by `EvalResult.save`) in `folder` (or the one file `folder` names).

    Fatal, as a `LeaderboardInputError` naming the file and the field: a path that does not exist, a folder
    without results, a file that is not UTF-8 JSON or not a result, and two files with the same policy on one env.
    """
    path = Path(folder)
    if not path.exists():
        raise LeaderboardInputError(
            f"--results {path}: no such file or folder; give the folder `eval --out` wrote results into"
        )
    paths = [path] if path.is_file() else sorted(path.glob("*.json"))
    if not paths:
        raise LeaderboardInputError(
            f"--results {path}: the folder holds no *.json results; write some with "
            "`parallax-zoo eval ID --policy P --out FOLDER/NAME.json`"
        )
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
        shown = field_name if field_name.isprintable() and len(field_name) <= 120 else ascii(field_name[:120])
        return LeaderboardInputError(
            f"{file}: {shown}: {problem}; the board was not made (fatal). "
            "Fix the file, or move it out of the results folder"
        )

    try:
        data = json.loads(file.read_bytes().decode("utf-8"), parse_constant=_refuse_constant)
    except UnicodeDecodeError as error:
        raise refuse("(whole file)", f"not UTF-8 text (byte {error.start})") from error
    except json.JSONDecodeError as error:
        raise refuse("(whole file)", f"not JSON ({error.msg} at line {error.lineno}, column {error.colno})") from error
    except ValueError as error:  # a bare NaN or Infinity, an integer past Python's digit limit
        raise refuse("(whole file)", f"not strict JSON ({error})") from error
    if not isinstance(data, dict):
        raise refuse(
            "(whole file)", f"expected a JSON object as `parallax-zoo eval --out` writes, got {type(data).__name__}"
        )
    for name, kind in RESULT_KEYS.items():
        if name not in data:
            raise refuse(name, "missing")
        if not isinstance(data[name], kind):
            raise refuse(name, f"expected a JSON {kind.__name__}, got {type(data[name]).__name__}")
    for name, kind in OPTIONAL_KEYS.items():
        if name in data and not isinstance(data[name], kind):
            raise refuse(name, f"expected a JSON {kind.__name__}, got {type(data[name]).__name__}")
    unencodable = _unencodable_string(data)
    if unencodable:
        raise refuse(unencodable, "holds a lone surrogate (\\ud800-\\udfff), which UTF-8 cannot encode")
    if not data["scores"]:
        raise refuse("scores", "empty; a result holds one score per episode")
    numbers = [("scores", x) for x in data["scores"]] + [("per_agent", x) for x in data.get("per_agent", [])]
    numbers += [("finished", data["finished"])] * ("finished" in data)
    for opponent, record in data.get("opponents", {}).items():
        if not isinstance(record, dict):
            raise refuse(f"opponents.{opponent}", f"expected a JSON object of its games and rates, got {record!r}")
        numbers += [(f"opponents.{opponent}.{key}", value) for key, value in record.items()]
    for name, value in numbers:
        problem = _number_problem(value)
        if problem:
            raise refuse(name, problem)
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
    if not all(isinstance(name, str) for name in given["opponents"]):
        raise refuse("protocol.opponents", f"expected a list of names, got {given['opponents']!r}")
    if "episodes" in data and data["episodes"] != len(data["scores"]):
        raise refuse("episodes", f"{data['episodes']!r}, but the file holds {len(data['scores'])} scores")
    try:
        result = EvalResult.from_json(data)
    except (TypeError, ValueError, AttributeError) as error:
        raise refuse("(a field)", str(error)) from error
    problem = result_problem(result)
    if problem:
        raise refuse(*problem)
    return result


OPTIONAL_KEYS = {"per_agent": list, "opponents": dict, "versions": dict, "provenance": dict, "episodes": int}
"""Keys `EvalResult.to_dict` writes that a results file may leave out, with their JSON types."""


def _refuse_constant(token: str) -> float:
    """json's hook for a bare NaN or Infinity: strict JSON has none (`eval --out` writes null)."""
    raise ValueError(f"a bare {token}; a non-finite number is written null")


def _number_problem(value: object) -> str | None:
    """What keeps a JSON value from being a score: not a number or null, or beyond a 64-bit float's range."""
    if value is None:
        return None
    if type(value) is int:
        if abs(value) > sys.float_info.max:
            return (
                f"an integer of about {int(value.bit_length() * math.log10(2)) + 1} digits, beyond a 64-bit "
                "float's range"
            )
        return None
    if type(value) is float:
        return None if math.isfinite(value) else f"{value!r} (a number beyond a 64-bit float's range)"
    return f"expected numbers (or null for a non-finite one), found {ascii(value)[:80]}"


def _unencodable_string(data: object, where: str = "") -> str | None:
    """The field (dotted path) of the first string or key in `data` that UTF-8 cannot encode, or None."""
    items: list[tuple[str, object]] = []
    if isinstance(data, str):
        try:
            data.encode("utf-8")
        except UnicodeEncodeError:
            return where or "(whole file)"
        return None
    if isinstance(data, dict):
        for key, value in data.items():
            name = f"{where}.{key}" if where else str(key)
            if _unencodable_string(key) is not None:
                return name.encode("utf-8", "backslashreplace").decode("utf-8")
            items.append((name, value))
    elif isinstance(data, list):
        items = [(f"{where}[{index}]", value) for index, value in enumerate(data)]
    for name, value in items:
        found = _unencodable_string(value, name)
        if found:
            return found
    return None


def leaderboard(
    results: Sequence[EvalResult] = (),
    entrants: Mapping[str, Mapping[str, Player | str]] | None = None,
    provenance: Mapping[str, Mapping[str, dict[str, Any]]] | None = None,
) -> Leaderboard:
    """Rank `results` plus the `entrants` (per env id: name -> policy), evaluated here.

    Every result must be what its env's protocol produces (`result_checks.result_problem`), else the board is
    not made (`LeaderboardInputError`). Zero-sum envs get Elo ratings on the anchored scale
    (`ratings.fit_ratings` with `anchors.load_anchors`) from every result's games against its opponents, and
    with entrants from a round robin among them, the random player and the baseline (where pinned). Every
    rated player is rated from all the games recorded for it: the pinned baseline, however it reaches the
    board, with its own games against the protocol's opponents (`pinned_baseline_games`). A result of the
    random player is its row and the random score of the normalization; without one the random player is
    evaluated here. `provenance` (per env id: entrant name -> `loading.resolve_policy`'s provenance) is
    recorded with the entrants.
    """
    by_env: dict[str, dict[str, EvalResult]] = {}
    for result in results:
        problem = result_problem(result)
        if problem:
            raise LeaderboardInputError(
                f"the result of {result.policy!r} on {result.env_id}: {problem[0]}: "
                f"{problem[1]}; the board was not made"
            )
        if result.policy in by_env.get(result.env_id, {}):
            raise LeaderboardInputError(
                f"two results of policy {result.policy!r} on {result.env_id}; give each run its own name"
            )
        by_env.setdefault(result.env_id, {})[result.policy] = result
    entrants = entrants or {}
    resolved = {env_id: registry.resolve(env_id) for env_id in sorted({*by_env, *entrants})}  # each id once
    for env_id, named in entrants.items():
        env_spec, env = resolved[env_id]
        for name, policy in named.items():
            problem = name_problem(name)
            if problem:
                raise LeaderboardInputError(f"the entrant {name[:80]!r} on {env_id}: its name is {problem}")
            if name in by_env.get(env_id, {}):
                raise LeaderboardInputError(
                    f"the entrant {name!r} on {env_id} has the name of a result in --results; the board was not made. "
                    "Rename one of them"
                )
            if name in env_spec.opponents:
                raise LeaderboardInputError(
                    f"the entrant {name!r} on {env_id} has the name of a scripted opponent of its protocol "
                    "(registry.yaml `opponents`); the board was not made. Rename the entrant"
                )
            by_env.setdefault(env_id, {})[name] = evaluate(
                env_spec, env, policy, name=name, provenance=(provenance or {}).get(env_id, {}).get(name)
            )
    rows: list[Row] = []
    board_ratings: dict[str, dict[str, Rating]] = {}
    for env_id in sorted(by_env):
        env_spec, env = resolved[env_id]
        given_random = by_env[env_id].get(RANDOM)
        stored = stored_random_score(env_spec)
        if given_random is not None:
            random_score = given_random.mean
        elif stored is not None:  # measured under this very protocol and shipped (random_scores.py)
            random_score = float(stored["mean"])
        else:
            random_score = evaluate(env_spec, env, RANDOM).mean
        ratings: dict[str, Rating] = {}
        if "zero-sum" in env_spec.tags:
            records = recorded_matches(by_env[env_id].values())
            if env_id in entrants:
                players: dict[str, Player | str] = {RANDOM: RANDOM, **entrants[env_id]}
                if env_spec.baseline is not None:
                    players[BASELINE] = pinned_baseline(env_spec, env)
                records.update(round_robin(env_spec, env, players))
            rated = {name for pair in records for name in pair}
            if BASELINE in rated and BASELINE not in map(elo_name, by_env[env_id]):  # its own games, however it came
                records.update(recorded_matches([pinned_baseline_games(env_spec, env)]))
            if records:
                ratings = fit_ratings(records, load_anchors(env_id))
                board_ratings[env_id] = ratings
        for result in by_env[env_id].values():
            rows.append(
                Row(
                    env_id=env_id,
                    entrant=result.policy,
                    mean=result.mean,
                    ci95=result.ci95,
                    episodes=result.episodes,
                    normalized=normalize(result.mean, random_score, env_spec.reference_score),
                    elo=rating.elo if (rating := ratings.get(elo_name(result.policy))) else None,
                    elo_ci=(rating.low, rating.high) if rating else None,
                    note="" if result.finite else NON_FINITE_NOTE,
                    opponents=result.opponents,
                    provenance=result.provenance,
                )
            )
    rows.sort(key=lambda row: (row.env_id, -rank_key(row), row.entrant))  # the order depends on the results alone
    return Leaderboard(rows, ratings=board_ratings)


def pinned_baseline(env_spec: EnvSpec, env: AnyEnv) -> Player:
    """The pinned baseline of the env, its files hash-checked, fitted to `env`."""
    from parallax_zoo.policies.loading import load_baseline

    return load_baseline(env_spec, env)


def pinned_baseline_games(env_spec: EnvSpec, env: AnyEnv) -> EvalResult:
    """The pinned baseline's protocol games: those its hash-checked `eval.json` records where they were measured
    under the current protocol, else played here."""
    from parallax_zoo.policies.loading import baseline_files

    files = baseline_files(env_spec)
    if "eval.json" in files.contents:
        measured = EvalResult.from_json(json.loads(files.contents["eval.json"]))
        if measured.protocol == protocol(env_spec):
            return dataclasses.replace(measured, policy=BASELINE)
    baseline = pinned_baseline(env_spec, env)
    return evaluate(env_spec, env, baseline, name=BASELINE, baseline=baseline)
