"""The Elo scale's fixed anchors: the opponent ladder's ratings, from one anchoring fit shipped in
`ladder_anchors.json`.

For every zero-sum game with scripted opponents (registry.yaml `opponents`:
the board games' ladder, TeamRace's naive team), those opponents and the
uniformly random player play a round robin of `ANCHOR_GAMES` games per pair
(both seats equally, seeds from the protocol's root key), and
`ratings.fit_ratings` with the random player alone fixed at 1000 rates them.
The leaderboard and the model cards hold the ratings found here fixed, so a
rating means the same on every board and over time (docs/evaluation.md). The
fit is re-run only when a ladder player or the protocol changes (naming envs
refits those alone and keeps the others' fit):

    parallax-zoo maintain anchors --write [ENV_ID ...]

The held-out players (registry.yaml `held_out`) are rated on the same scale
by a fit of their own: each plays the random player and every ladder player
`HELD_OUT_GAMES` games, those ratings held fixed, so a policy's games against
the held-out ladder give it a rating that reads beside its ladder rating
(`held_out_rating`). Refitting the ladder drops that fit; make it again with

    parallax-zoo maintain anchors --held-out --write [ENV_ID ...]
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from parallax.core import AnyEnv
from parallax_zoo.agents.player import Player
from parallax_zoo.agents.player_factories import held_out_player, opponent_player
from parallax_zoo.atomic import write_text_atomic
from parallax_zoo.catalogue import registry
from parallax_zoo.catalogue.player_names import BASELINE, RANDOM
from parallax_zoo.catalogue.registry import EnvSpec
from parallax_zoo.judging.evaluation import PROTOCOL_VERSION, EvalResult
from parallax_zoo.judging.ratings import RANDOM_ELO, MatchRecord, Rating, fit_ratings, recorded_matches, round_robin

ANCHORS_FILE = Path(__file__).resolve().with_name("ladder_anchors.json")
"""The shipped anchoring fit: per env, each ladder player's rating and the games it came from."""
ANCHOR_GAMES = 1024
"""Games per pair of the anchoring round robin (half from each seat)."""
ANCHOR_SEED_OFFSET = 5000
"""The anchoring round robin's pair `k` plays from the protocol's root key folded with this plus `k`."""
HELD_OUT_GAMES = 256
"""Games per pair of the held-out players' fit (half from each seat), as many as the protocol plays each of them."""
HELD_OUT_SEED_OFFSET = 7000
"""The held-out fit's pair `k` plays from the protocol's root key folded with this plus `k`."""


class StaleAnchorsError(ValueError):
    """The anchors file was fitted under another evaluation protocol; it must be fitted again."""


def anchored_envs() -> list[str]:
    """The registered zero-sum games that name scripted opponents: the envs with a ladder to anchor."""
    return [
        env_id
        for env_id in registry.list_envs()
        if "zero-sum" in registry.spec(env_id).tags and registry.spec(env_id).opponents
    ]


def anchoring_fit(
    env_spec: EnvSpec, env: AnyEnv, games: int = ANCHOR_GAMES
) -> tuple[dict[str, Rating], dict[tuple[str, str], MatchRecord]]:
    """The ladder's ratings in `env` (random fixed at 1000) and the round robin's games they come from."""
    players: dict[str, Player | str] = {RANDOM: RANDOM}
    players |= {name: opponent_player(env_spec, env, name) for name in env_spec.opponents}
    records = round_robin(env_spec, env, players, games, seed_offset=ANCHOR_SEED_OFFSET)
    return fit_ratings(records, {RANDOM: RANDOM_ELO}), records


def held_out_fit(
    env_spec: EnvSpec, env: AnyEnv, ladder: Mapping[str, Rating], games: int = HELD_OUT_GAMES
) -> tuple[dict[str, Rating], dict[tuple[str, str], MatchRecord]]:
    """The held-out players' ratings in `env`, each from its games against the random player and every ladder player
    of `ladder` (their fixed ratings, `load_anchors`), and those games. They never meet each other: each rating reads
    on the ladder's scale alone."""
    fixed = [name for name in ladder if name == RANDOM or name in env_spec.opponents]
    players: dict[str, Player | str] = {RANDOM: RANDOM}
    players |= {name: opponent_player(env_spec, env, name) for name in fixed if name != RANDOM}
    players |= {name: held_out_player(env_spec, env, name) for name in env_spec.held_out}
    pairs = [(held, anchor) for held in env_spec.held_out for anchor in sorted(fixed)]
    records = round_robin(env_spec, env, players, games, seed_offset=HELD_OUT_SEED_OFFSET, pairs=pairs)
    ratings = fit_ratings(records, {name: ladder[name] for name in fixed})
    return {name: ratings[name] for name in env_spec.held_out}, records


def _fit_section(ratings: Mapping[str, Rating], records: Mapping[tuple[str, str], MatchRecord]) -> dict[str, Any]:
    """A fit as the anchors file keeps it: each player's rating and the games it came from."""
    return {
        "ratings": {name: rating.to_json() for name, rating in ratings.items()},
        "records": [
            {"players": list(pair), "wins": r.wins, "draws": r.draws, "losses": r.losses} for pair, r in records.items()
        ],
    }


def held_out_document(
    envs_to_fit: Sequence[tuple[EnvSpec, Any]], games: int = HELD_OUT_GAMES, path: str | Path = ANCHORS_FILE
) -> dict[str, Any]:
    """The anchors file at `path` with the held-out players' fit of each (spec, env) pair made again, its ladder fit
    kept; an env with no held-out players, or no ladder fit in the file, is a `ValueError` saying what to run."""
    document = _read(Path(path))
    for env_spec, env in envs_to_fit:
        if not env_spec.held_out:
            raise ValueError(f"{env_spec.id} has no held-out players (registry.yaml `held_out:`) to rate")
        if env_spec.id not in document["envs"]:
            raise ValueError(
                f"{env_spec.id} has no ladder fit in {path} to rate its held-out players against; fit it first with "
                f"`parallax-zoo maintain anchors --write {env_spec.id}`"
            )
        ratings, records = held_out_fit(env_spec, env, load_anchors(env_spec.id, path), games)
        section = {"games_per_pair": games, **_fit_section(ratings, records)}
        document["envs"][env_spec.id] = {**document["envs"][env_spec.id], "held_out": section}
    return document


def anchors_document(envs_to_fit: Sequence[tuple[EnvSpec, Any]], games: int = ANCHOR_GAMES) -> dict[str, Any]:
    """The anchors file's content for the (spec, env) pairs: the protocol version, the games per pair, and per env
    the fit."""
    envs = {}
    for env_spec, env in envs_to_fit:
        envs[env_spec.id] = _fit_section(*anchoring_fit(env_spec, env, games))
    return {"protocol_version": PROTOCOL_VERSION, "games_per_pair": games, "envs": envs}


def load_anchors(env_id: str, path: str | Path = ANCHORS_FILE) -> dict[str, Rating]:
    """The fixed ratings of `env_id`: the random player at 1000 and its ladder players as the anchoring fit rated them.

    An env without a ladder has the random player alone. A file fitted under
    another protocol version is a `StaleAnchorsError`.
    """
    anchors = {RANDOM: Rating(RANDOM_ELO, RANDOM_ELO, RANDOM_ELO, 0, anchor=True)}
    return anchors | _fixed_ratings(_read(Path(path))["envs"].get(env_id, {}))


def load_held_out_anchors(env_id: str, path: str | Path = ANCHORS_FILE) -> dict[str, Rating]:
    """The fixed ratings of `env_id`'s held-out players as their fit (`held_out_fit`) rated them; empty where the
    file has none."""
    return _fixed_ratings(_read(Path(path))["envs"].get(env_id, {}).get("held_out", {}))


def _read(path: Path) -> dict[str, Any]:
    """The anchors file's content (no envs where there is no file); one fitted under another protocol is a
    `StaleAnchorsError`."""
    document = (
        json.loads(path.read_text(encoding="utf-8"))
        if path.is_file()
        else {"protocol_version": PROTOCOL_VERSION, "games_per_pair": ANCHOR_GAMES, "envs": {}}
    )
    if document["protocol_version"] != PROTOCOL_VERSION:
        raise StaleAnchorsError(
            f"{path} holds the anchoring fit of evaluation protocol version {document['protocol_version']}, not "
            f"{PROTOCOL_VERSION}; fit it again with `parallax-zoo maintain anchors --write`"
        )
    return document


def _fixed_ratings(section: Mapping[str, Any]) -> dict[str, Rating]:
    """A fit's ratings as anchors held fixed."""
    return {name: Rating.from_json(rating, anchor=True) for name, rating in section.get("ratings", {}).items()}


def anchored_rating(result: EvalResult) -> Rating | None:
    """A zero-sum result's policy rated on the anchored scale from its games against the ladder and the random
    player (its games against the baseline, a player this result alone would rate, cannot move it); None for
    other games. Model cards show this rating."""
    if not result.protocol.zero_sum:
        return None
    fixed = {opponent: record for opponent, record in result.opponents.items() if opponent != BASELINE}
    return _rated(result, fixed, load_anchors(result.env_id))


def held_out_rating(result: EvalResult, path: str | Path = ANCHORS_FILE) -> Rating | None:
    """A zero-sum result's policy rated on the anchored scale from its games against the held-out players alone,
    their ratings held fixed (`load_held_out_anchors`); None where it has no such games or they have no fit. Read
    beside `anchored_rating`, it shows how far the ladder's rating carries to players the policy never met."""
    if not result.protocol.zero_sum or not result.held_out:
        return None
    fixed = load_held_out_anchors(result.env_id, path)
    games = {name: record for name, record in result.held_out.items() if name in fixed}
    return _rated(result, games, {name: fixed[name] for name in games}) if games else None


def _rated(result: EvalResult, games: Mapping[str, Any], anchors: Mapping[str, Rating]) -> Rating:
    """`result`'s policy rated from its records in `games` (opponent -> record), those opponents' `anchors` fixed."""
    player = f"{result.policy} (rated)"
    matches = recorded_matches([dataclasses.replace(result, policy=player, opponents=dict(games))])
    return fit_ratings(matches, anchors)[player]


def write_anchors(document: dict[str, Any], path: str | Path = ANCHORS_FILE) -> Path:
    """Write an `anchors_document` to `path` whole; envs it did not fit keep the fit the file has, where that was
    made under the same protocol version and games per pair."""
    path = Path(path)
    previous = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    same = ("protocol_version", "games_per_pair")
    if {k: previous.get(k) for k in same} == {k: document[k] for k in same}:
        document = {**document, "envs": previous["envs"] | document["envs"]}
    write_text_atomic(path, json.dumps(document, indent=2) + "\n")
    return path
