"""Elo on the anchored scale (parallax_zoo.judging.ratings, .anchors): fixed anchors, confidence intervals, the shipped
anchoring fit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import parallax_zoo
from parallax_zoo.catalogue.player_names import RANDOM
from parallax_zoo.catalogue.registry import resolve
from parallax_zoo.judging.anchors import (
    ANCHOR_GAMES,
    ANCHORS_FILE,
    HELD_OUT_GAMES,
    StaleAnchorsError,
    anchored_envs,
    anchored_rating,
    anchoring_fit,
    load_anchors,
    load_held_out_anchors,
)
from parallax_zoo.judging.evaluation import PROTOCOL_VERSION, EvalResult, protocol
from parallax_zoo.judging.ratings import MatchRecord, Rating, UnanchoredPlayersError, fit_ratings

ANCHORS = {RANDOM: 1000.0, "tactical": 1500.0, "depth4": 2100.0}


def test_a_player_that_always_beats_another_rates_above_it() -> None:
    records = {
        ("sweeper", "tactical"): MatchRecord(wins=256, draws=0, losses=0),
        ("sweeper", RANDOM): MatchRecord(wins=256, draws=0, losses=0),
        ("sweeper", "depth4"): MatchRecord(wins=0, draws=0, losses=256),
        ("chaser", "sweeper"): MatchRecord(wins=0, draws=0, losses=256),
        ("chaser", RANDOM): MatchRecord(wins=128, draws=0, losses=128),
    }
    ratings = fit_ratings(records, ANCHORS)
    assert ratings["tactical"].elo < ratings["sweeper"].elo < ratings["depth4"].elo
    assert ratings["chaser"].elo < ratings["sweeper"].elo
    assert ratings["chaser"].elo == pytest.approx(1000.0, abs=60)  # even against random, swept by the sweeper


def test_the_anchors_hold_their_ratings_whatever_the_entrants() -> None:
    alone = {("a", "tactical"): MatchRecord(200, 20, 36), ("a", RANDOM): MatchRecord(250, 0, 6)}
    crowded = alone | {
        ("b", "tactical"): MatchRecord(0, 0, 256),
        ("b", RANDOM): MatchRecord(10, 0, 246),
        ("b", "a"): MatchRecord(0, 0, 256),
        ("c", "depth4"): MatchRecord(256, 0, 0),
        ("c", "a"): MatchRecord(256, 0, 0),
    }
    first, second = fit_ratings(alone, ANCHORS), fit_ratings(crowded, ANCHORS)
    for name in (RANDOM, "tactical"):
        assert first[name].elo == second[name].elo == ANCHORS[name] and first[name].anchor and second[name].anchor
    assert second["depth4"].elo == ANCHORS["depth4"]
    assert not second["a"].anchor and second["a"].elo > ANCHORS["tactical"]


def test_the_interval_holds_the_estimate_and_shrinks_with_more_games() -> None:
    def fit(scale: int) -> Rating:
        records = {
            ("x", "tactical"): MatchRecord(30 * scale, 10 * scale, 24 * scale),
            ("x", RANDOM): MatchRecord(60 * scale, 0, 4 * scale),
        }
        return fit_ratings(records, ANCHORS)["x"]

    few, many = fit(1), fit(16)
    for rating in (few, many):
        assert rating.low < rating.elo < rating.high
    assert many.high - many.low < 0.3 * (few.high - few.low)  # 16 times the games: about a quarter of the width
    assert many.games == 16 * few.games == 16 * 128


def test_a_player_without_games_linking_it_to_an_anchor_is_refused() -> None:
    with pytest.raises(UnanchoredPlayersError, match=r"no games link \['a', 'b'\] to an anchor"):
        fit_ratings({("a", "b"): MatchRecord(3, 0, 1), ("c", RANDOM): MatchRecord(1, 0, 1)}, ANCHORS)


def test_the_shipped_anchors_cover_every_ladder_player_and_come_from_their_recorded_games() -> None:
    document = json.loads(ANCHORS_FILE.read_text())
    assert document["protocol_version"] == PROTOCOL_VERSION and document["games_per_pair"] == ANCHOR_GAMES
    assert set(document["envs"]) == set(anchored_envs()) >= {"TicTacToe-v0", "ConnectFour-v0", "Othello-v0"}
    for env_id, fit in document["envs"].items():
        assert set(fit["ratings"]) == {RANDOM, *parallax_zoo.spec(env_id).opponents}
        records = {tuple(r["players"]): MatchRecord(r["wins"], r["draws"], r["losses"]) for r in fit["records"]}
        assert all(record.games == ANCHOR_GAMES for record in records.values())
        refit = fit_ratings(records, {RANDOM: 1000.0})
        assert {name: rating["elo"] for name, rating in fit["ratings"].items()} == pytest.approx(
            {name: rating.elo for name, rating in refit.items()}
        )
        assert {name: r.elo for name, r in load_anchors(env_id).items()} == pytest.approx(
            {name: rating["elo"] for name, rating in fit["ratings"].items()}
        )
    ratings = {env: {name: r["elo"] for name, r in fit["ratings"].items()} for env, fit in document["envs"].items()}
    assert (
        ratings["ConnectFour-v0"]["depth4"]
        > ratings["ConnectFour-v0"]["depth2"]
        > ratings["ConnectFour-v0"]["tactical"]
        > 1000
    )
    assert min(ratings["Othello-v0"]["positional"], ratings["Othello-v0"]["mobility"]) > 1000
    assert ratings["TicTacToe-v0"]["perfect"] > 1000


def test_the_shipped_held_out_fit_rates_every_held_out_player_from_its_games_with_the_ladder_fixed() -> None:
    document = json.loads(ANCHORS_FILE.read_text())
    fitted = {env_id for env_id, fit in document["envs"].items() if "held_out" in fit}
    assert "ConnectFour-v0" in fitted
    for env_id in fitted:
        section, ladder = document["envs"][env_id]["held_out"], load_anchors(env_id)
        assert set(section["ratings"]) == set(parallax_zoo.spec(env_id).held_out)
        records = {tuple(r["players"]): MatchRecord(r["wins"], r["draws"], r["losses"]) for r in section["records"]}
        assert set(records) == {(held, fixed) for held in section["ratings"] for fixed in ladder}
        assert all(record.games == section["games_per_pair"] == HELD_OUT_GAMES for record in records.values())
        refit = fit_ratings(records, ladder)
        assert {name: rating["elo"] for name, rating in section["ratings"].items()} == pytest.approx(
            {name: refit[name].elo for name in section["ratings"]}
        )
        assert {name: r.elo for name, r in load_held_out_anchors(env_id).items()} == pytest.approx(
            {name: rating["elo"] for name, rating in section["ratings"].items()}
        )


@pytest.mark.parametrize(
    "env_id",
    [
        "TicTacToe-v0",
        pytest.param("ConnectFour-v0", marks=pytest.mark.slow),
        pytest.param("Othello-v0", marks=pytest.mark.slow),
        pytest.param("TeamRace-v0", marks=pytest.mark.slow),
    ],
)
def test_the_anchoring_fit_reproduces_the_shipped_anchors(env_id: str) -> None:
    ratings, records = anchoring_fit(*resolve(env_id))
    shipped = json.loads(ANCHORS_FILE.read_text())["envs"][env_id]
    assert [
        {"players": list(pair), "wins": r.wins, "draws": r.draws, "losses": r.losses} for pair, r in records.items()
    ] == shipped["records"]
    assert {name: r.elo for name, r in ratings.items()} == pytest.approx(
        {name: r["elo"] for name, r in shipped["ratings"].items()}
    )


def test_anchors_of_another_protocol_version_are_refused(tmp_path: Path) -> None:
    stale = tmp_path / "anchors.json"
    stale.write_text(json.dumps({"protocol_version": PROTOCOL_VERSION - 1, "games_per_pair": 8, "envs": {}}))
    with pytest.raises(
        StaleAnchorsError, match=f"protocol version {PROTOCOL_VERSION - 1}, not {PROTOCOL_VERSION}.*--write"
    ):
        load_anchors("TicTacToe-v0", stale)


def test_a_result_is_rated_from_its_ladder_games_and_its_games_against_the_baseline_do_not_move_it() -> None:
    record = {"games": 256.0, "win": 0.5, "draw": 0.25, "loss": 0.25, "return": 0.25}
    opponents = {
        "perfect": {**record, "win": 0.0, "draw": 0.75, "loss": 0.25},
        RANDOM: {**record, "win": 0.9, "draw": 0.1, "loss": 0.0},
    }
    result = EvalResult(
        "TicTacToe-v0", "mine", protocol(parallax_zoo.spec("TicTacToe-v0")), scores=(0.0,), opponents=opponents
    )
    against_baseline = EvalResult(
        "TicTacToe-v0",
        "mine",
        protocol(parallax_zoo.spec("TicTacToe-v0")),
        scores=(0.0,),
        opponents=opponents | {"baseline": {**record, "win": 1.0, "draw": 0.0, "loss": 0.0}},
    )
    rating, same = anchored_rating(result), anchored_rating(against_baseline)
    assert rating is not None and same is not None
    assert rating.elo == pytest.approx(same.elo) and rating.games == 512
    perfect = load_anchors("TicTacToe-v0")["perfect"].elo
    assert 1000 < rating.elo < perfect  # beats random, never beats perfect
    assert anchored_rating(EvalResult("Race-v0", "mine", protocol(parallax_zoo.spec("Race-v0")), scores=(0.0,))) is None
