"""What a result must be to be ranked: what its env's protocol produces, so a crafted file cannot pass for one.

A result is checked against the protocol it claims (docs/evaluation.md): the
same protocol as its env's today, one score per protocol episode, against each
of the protocol's opponents exactly the protocol's games with win, draw and
loss rates that are whole numbers of games summing to all of them, the scores
agreeing with the record against the first opponent, and a name that is not
a player the board rates itself (a ladder player, the pinned baseline under
another name); a result named `random` must score what the random player's shipped
score says, where one is shipped. Each problem comes back as the field and what is wrong with it.
"""

from __future__ import annotations

import dataclasses
import math
import re
import unicodedata

from parallax_zoo.catalogue import registry
from parallax_zoo.catalogue.player_names import BASELINE, RANDOM
from parallax_zoo.catalogue.registry import EnvSpec
from parallax_zoo.judging.evaluation import GAMES_PER_OPPONENT, PROTOCOL_VERSION, EvalResult, protocol
from parallax_zoo.judging.random_scores import stored_random_score

MAX_NAME_LENGTH = 256
"""The longest policy name a board shows (a Hub id at a 40-digit commit is about 150 characters)."""
RECORD_RATES = ("win", "draw", "loss")
RECORD_KEYS = re.compile(r"(games|win|draw|loss)(_side_\d+)?|return")
"""The keys of a record against one opponent, as `evaluation.evaluate` writes it."""
TOLERANCE = 1e-6
"""How far a rate times the games may be from a whole number of games (float rounding of a JSON round trip)."""


def name_problem(name: str) -> str | None:
    """What makes `name` unfit to show on a board (empty, too long, a control or line-break character, a
    character UTF-8 cannot encode), or None."""
    if not name.strip():
        return "empty; a result names its policy"
    if len(name) > MAX_NAME_LENGTH:
        return f"{len(name)} characters long; a policy name has at most {MAX_NAME_LENGTH}"
    for position, character in enumerate(name):
        if unicodedata.category(character) in ("Cc", "Cs", "Zl", "Zp"):
            return (
                f"holds the character {character!r} at position {position} (a control character, line break or "
                "lone surrogate); a policy name is one line of text"
            )
    return None


def result_problem(result: EvalResult) -> tuple[str, str] | None:
    """The first way `result` differs from what its env's protocol produces, as (field, problem); None if none."""
    problem = name_problem(result.policy)
    if problem:
        return "policy", problem
    if result.env_id not in registry.list_envs():
        return "env_id", f"{result.env_id!r} is not a registered env id"
    if result.protocol.version != PROTOCOL_VERSION:
        return "protocol.version", version_problem(result.protocol.version, result.env_id)
    env_spec = registry.spec(result.env_id)
    expected, given = protocol(env_spec), result.protocol
    if given.env_id != result.env_id:
        return "protocol.env_id", f"{given.env_id!r}, but the result's env_id is {result.env_id!r}"
    for field in dataclasses.fields(expected):
        mine, theirs = getattr(given, field.name), getattr(expected, field.name)
        if field.name != "version" and mine != theirs:
            return f"protocol.{field.name}", (
                f"{_shown(mine)}, but the protocol of {result.env_id} has {_shown(theirs)}; only results of the env's "
                "protocol compare. Evaluate the policy again: "
                f"`parallax-zoo eval {result.env_id} --policy P --out FILE`"
            )
    reserved = reserved_problem(result.policy, env_spec)
    if reserved:
        return "policy", reserved
    if result.episodes != expected.episodes:
        return "scores", (
            f"{result.episodes} scores, but the protocol plays {expected.episodes} episodes; a result "
            "holds one score per episode"
        )
    if not 0.0 <= result.finished <= 1.0:
        return "finished", f"{result.finished!r}; the share of finished episodes lies in [0, 1]"
    if set(result.opponents) != set(expected.opponents):
        return "opponents", (
            f"records against {sorted(result.opponents)}, but the protocol of {result.env_id} plays "
            f"{list(expected.opponents)}"
        )
    for opponent in expected.opponents:
        problem = _record_problem(result.opponents[opponent], expected.episodes)
        if problem:
            return f"opponents.{opponent}{problem[0]}", problem[1]
    if expected.opponents:
        problem = _scores_against_record(result, expected.opponents[0])
        if problem:
            return "scores", problem
    low, high = result.ci95
    if result.finite and not all(math.isfinite(x) for x in (result.mean, result.std, low, high)):
        return "scores", "too large to average in 64-bit floats (the mean or its interval overflows)"
    if result.policy == RANDOM:
        return _random_problem(result, env_spec)
    return None


def _random_problem(result: EvalResult, env_spec: EnvSpec) -> tuple[str, str] | None:
    """A result named `random` is the random player's, reused as its row and as the zero of the normalized score;
    where the project ships the random player's score under this protocol (`random_scores.json`), it must be that
    score, so a crafted one cannot move every other row's normalized score."""
    stored = stored_random_score(env_spec)
    if stored is None or math.isclose(result.mean, stored["mean"], rel_tol=TOLERANCE, abs_tol=TOLERANCE):
        return None
    return "scores", (
        f"their mean is {result.mean:.6g}, but the random player scores {stored['mean']:.6g} under the protocol of "
        f"{env_spec.id} (measured and shipped with parallax-zoo); a result named {RANDOM!r} stands for the random "
        "player. Remove the file (the board uses the shipped score), or give the result another name (its 'policy' "
        "field)"
    )


def reserved_problem(name: str, env_spec: EnvSpec) -> str | None:
    """Why `name` is not a result's to take on the env of `env_spec`: a ladder player's name, or the pinned
    baseline's under another repo or revision (or bare); None for any other name, the random player's included."""
    from parallax_zoo.policies.loading import baseline_label

    env_id = env_spec.id
    if name in env_spec.opponents:
        return (
            f"{name!r} is a ladder player of {env_id} (registry.yaml `opponents`), whose rating is fixed; "
            "give the result another name (its 'policy' field)"
        )
    pinned = baseline_label(env_spec)
    if (name == BASELINE or name.startswith(f"{BASELINE}:")) and name != pinned:
        where = f"the pinned baseline is {pinned!r}" if pinned != BASELINE else f"{env_id} has no pinned baseline"
        return (
            f"{name!r} names the baseline, but {where}; a name starting 'baseline' is kept for it. Give the "
            "result another name (its 'policy' field)"
        )
    return None


def version_problem(version: int, env_id: str) -> str:
    """Why a result of another protocol version is refused, and how to get one of this version."""
    return (
        f"evaluation protocol version {version}, not {PROTOCOL_VERSION}; results of another version are refused, as "
        f"their scores do not compare (version 2 plays zero-sum games against the opponent ladder, "
        f"{GAMES_PER_OPPONENT} games per opponent, half from each seat). "
        f"Evaluate the policy again: `parallax-zoo eval {env_id} --policy P --out FILE`"
    )


def _record_problem(record: dict[str, float], games: int) -> tuple[str, str] | None:
    """What is wrong with one opponent's record (as ('.key', problem) or ('', problem)), or None."""
    unknown = sorted(key for key in record if not RECORD_KEYS.fullmatch(key))
    if unknown:
        return "", f"unexpected keys {unknown}; a record holds games, win, draw, loss and return (overall and per side)"
    for key, value in record.items():
        if not math.isfinite(value):
            return f".{key}", "not a finite number"
    missing = [key for key in ("games", *RECORD_RATES, "return") if key not in record]
    if missing:
        return f".{missing[0]}", "missing; a record holds the games played, the win, draw and loss rates and the return"
    if record["games"] != games:
        return ".games", f"{record['games']:g}, but the protocol plays {games} games against each opponent"
    problem = _rates_problem(record, "", games)
    if problem:
        return problem
    sides = sorted({key.rpartition("_side_")[2] for key in record if "_side_" in key})
    for side in sides:
        keys = [f"{key}_side_{side}" for key in ("games", *RECORD_RATES)]
        if any(key not in record for key in keys):
            return f".{next(key for key in keys if key not in record)}", "missing beside the other keys of its side"
        problem = _rates_problem(record, f"_side_{side}", record[f"games_side_{side}"])
        if problem:
            return problem
    if sides:
        if sum(record[f"games_side_{side}"] for side in sides) != games:
            return ".games_side_0", "the games per side do not add up to the games"
        for rate in RECORD_RATES:
            side_total = sum(record[f"{rate}_side_{side}"] * record[f"games_side_{side}"] for side in sides)
            if abs(side_total - record[rate] * games) > TOLERANCE * games:
                return f".{rate}", f"the {rate}s per side do not add up to the {rate}s overall"
    return None


def _rates_problem(record: dict[str, float], suffix: str, games: float) -> tuple[str, str] | None:
    """What is wrong with the win, draw and loss rates of `games` games (keys ending in `suffix`), or None."""
    if games < 0 or games != round(games):
        return f".games{suffix}", f"{games:g}; games are a whole number, at least 0"
    for rate in RECORD_RATES:
        value = record[f"{rate}{suffix}"]
        if not 0.0 <= value <= 1.0:
            return f".{rate}{suffix}", f"{value:g}; a rate lies in [0, 1]"
        if abs(value * games - round(value * games)) > TOLERANCE * max(games, 1.0):
            return f".{rate}{suffix}", f"{value:g} of {games:g} games is not a whole number of games"
    total = sum(record[f"{rate}{suffix}"] for rate in RECORD_RATES)
    if games and abs(total - 1.0) > TOLERANCE:
        return f".win{suffix}", f"win, draw and loss rates sum to {total:g}, not 1"
    return None


def _scores_against_record(result: EvalResult, first: str) -> str | None:
    """Whether the scores (the games against the first opponent) agree with the record against it."""
    record = result.opponents[first]
    counted = (sum(s > 0 for s in result.scores), sum(s == 0 for s in result.scores), sum(s < 0 for s in result.scores))
    recorded = tuple(round(record[rate] * record["games"]) for rate in RECORD_RATES)
    if counted != recorded:
        return (
            f"{counted[0]} won, {counted[1]} drawn and {counted[2]} lost (by the scores' signs), but "
            f"opponents.{first} records {recorded[0]}, {recorded[1]} and {recorded[2]}: the scores are the games "
            "against the first opponent"
        )
    if abs(record["return"] - result.mean) > 1e-5 * max(1.0, abs(result.mean)):
        return f"their mean is {result.mean:g}, but opponents.{first}.return records {record['return']:g}"
    return None


def _shown(value: object) -> str:
    """A protocol field's value as a results file holds it (a list for the opponents)."""
    return repr(list(value)) if isinstance(value, tuple) else repr(value)
