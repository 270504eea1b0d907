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
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from parallax.core import AnyEnv
from parallax_zoo.agents.player import Player
from parallax_zoo.agents.player_factories import opponent_player
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


def anchors_document(envs_to_fit: Sequence[tuple[EnvSpec, Any]], games: int = ANCHOR_GAMES) -> dict[str, Any]:
    """The anchors file's content for the (spec, env) pairs: the protocol version, the games per pair, and per env
    the fit."""
    envs = {}
    for env_spec, env in envs_to_fit:
        ratings, records = anchoring_fit(env_spec, env, games)
        envs[env_spec.id] = {
            "ratings": {
                name: {"elo": r.elo, "low": r.low, "high": r.high, "games": r.games} for name, r in ratings.items()
            },
            "records": [
                {"players": list(pair), "wins": r.wins, "draws": r.draws, "losses": r.losses}
                for pair, r in records.items()
            ],
        }
    return {"protocol_version": PROTOCOL_VERSION, "games_per_pair": games, "envs": envs}


def load_anchors(env_id: str, path: str | Path = ANCHORS_FILE) -> dict[str, Rating]:
    """The fixed ratings of `env_id`: the random player at 1000 and its ladder players as the anchoring fit rated them.

    An env without a ladder has the random player alone. A file fitted under
    another protocol version is a `StaleAnchorsError`.
    """
    path = Path(path)
    document = (
        json.loads(path.read_text(encoding="utf-8"))
        if path.is_file()
        else {"protocol_version": PROTOCOL_VERSION, "envs": {}}
    )
    if document["protocol_version"] != PROTOCOL_VERSION:
        raise StaleAnchorsError(
            f"{path} holds the anchoring fit of evaluation protocol version {document['protocol_version']}, not "
            f"{PROTOCOL_VERSION}; fit it again with `parallax-zoo maintain anchors --write`"
        )
    anchors = {RANDOM: Rating(RANDOM_ELO, RANDOM_ELO, RANDOM_ELO, 0, anchor=True)}
    for name, rating in document["envs"].get(env_id, {}).get("ratings", {}).items():
        anchors[name] = Rating(rating["elo"], rating["low"], rating["high"], rating["games"], anchor=True)
    return anchors


def anchored_rating(result: EvalResult) -> Rating | None:
    """A zero-sum result's policy rated on the anchored scale from its games against the ladder and the random
    player (its games against the baseline, a player this result alone would rate, cannot move it); None for
    other games. Model cards show this rating."""
    if not result.protocol.zero_sum:
        return None
    player = f"{result.policy} (rated)"
    fixed = {opponent: record for opponent, record in result.opponents.items() if opponent != BASELINE}
    games = recorded_matches([dataclasses.replace(result, policy=player, opponents=fixed)])
    return fit_ratings(games, load_anchors(result.env_id))[player]


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
