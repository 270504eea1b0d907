"""The held-out players (registry.yaml `held_out:`): met only when an evaluation asks, reported apart from the
protocol's opponents, never counted in the score, never seated in training (docs/evaluation.md, "The held-out
ladder")."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

import parallax_zoo
from parallax_zoo.agents.player_factories import held_out_player, training_opponent
from parallax_zoo.baselines.model_card import model_card
from parallax_zoo.catalogue import registry
from parallax_zoo.catalogue.player_names import RANDOM
from parallax_zoo.catalogue.registry import RegistryError
from parallax_zoo.errors import UserError
from parallax_zoo.judging.anchors import (
    ANCHORS_FILE,
    held_out_document,
    held_out_rating,
    load_anchors,
    load_held_out_anchors,
    write_anchors,
)
from parallax_zoo.judging.evaluation import PROTOCOL_VERSION, EvalResult, evaluate, protocol
from parallax_zoo.judging.ratings import MatchRecord, Rating, fit_ratings

CHEAP_HELD_OUT = {
    "alphabeta1": "parallax_zoo.agents.held_out_ladder:alphabeta1_connect_four",
    "alphabeta2": "parallax_zoo.agents.held_out_ladder:alphabeta2_connect_four",
}
"""Two of ConnectFour's held-out players, the cheap ones: the test plays their games, not the costly search's."""


def test_the_shipped_board_games_name_their_held_out_ladders_apart_from_their_opponents() -> None:
    for env_id, names in {
        "ConnectFour-v0": ["alphabeta1", "alphabeta2", "alphabeta4", "alphabeta6", "mcts200", "mcts1000"],
        "Othello-v0": ["alphabeta1", "alphabeta2", "alphabeta4", "mcts200", "mcts1000"],
    }.items():
        spec = registry.spec(env_id)
        assert list(spec.held_out) == names
        assert not set(spec.held_out) & set(spec.opponents)
        for name in names:
            held_out_player(spec, parallax_zoo.make(env_id), name)  # every target imports and is a player


def test_training_never_seats_a_held_out_player() -> None:
    env = parallax_zoo.make("ConnectFour-v0")
    with pytest.raises(RegistryError, match="has no scripted opponent 'alphabeta1'"):
        training_opponent("ConnectFour-v0", env, "tactical+alphabeta1")


def test_held_out_games_are_reported_apart_and_never_enter_the_score() -> None:
    spec = dataclasses.replace(
        registry.spec("ConnectFour-v0"), opponents={}, baseline=None, reference_score=None, held_out=CHEAP_HELD_OUT
    )
    env = parallax_zoo.make("ConnectFour-v0")
    plain = evaluate(spec, env, "random", episodes=16)
    both = evaluate(spec, env, "random", episodes=16, held_out=True)
    assert plain.held_out == {} and "held_out" not in plain.to_dict()
    assert list(both.opponents) == ["random"] and both.scores == plain.scores, "the protocol's games are the same"
    assert list(both.held_out) == ["alphabeta1", "alphabeta2"]
    for record in both.held_out.values():
        assert record["games"] == 16 and record["games_side_0"] == record["games_side_1"] == 8
        assert record["win"] + record["draw"] + record["loss"] == pytest.approx(1.0)
        assert record["loss"] >= 0.75, "the random player loses to a one-ply alpha-beta that takes every win"
    assert both.held_out["alphabeta1"] != both.opponents["random"]
    again = EvalResult.from_json(json.loads(both.to_json()))
    assert again.held_out == both.held_out and again.mean == both.mean
    assert "held-out alphabeta2: win" in repr(both)


def test_asking_for_held_out_players_where_there_are_none_names_the_games_that_have_them() -> None:
    spec, env = registry.resolve("Race-v0")
    with pytest.raises(UserError, match=r"Race-v0 has no held-out players .*ConnectFour-v0, Othello-v0"):
        evaluate(spec, env, "random", episodes=4, held_out=True)


def test_the_card_shows_the_held_out_games_in_their_own_section() -> None:
    record = {"games": 256.0, "win": 0.5, "draw": 0.25, "loss": 0.25}
    seats = {f"{outcome}_side_{side}": 0.5 for outcome in ("win", "draw", "loss") for side in (0, 1)}
    opponents = {"tactical": {**record, **seats}}
    card = model_card(
        "ConnectFour-v0", "mappo", 0.2, 0.9, 256, opponents=opponents, held_out={"mcts1000": {**record, **seats}}
    )
    protocol_part, held_out_part = card.split("## Held-out opponents")
    assert "| tactical | 256 |" in protocol_part and "mcts1000" not in protocol_part
    assert "| mcts1000 | 256 | 50.0% | 25.0% | 25.0% |" in held_out_part and "never count in the score" in held_out_part
    assert "## Held-out opponents" not in model_card("ConnectFour-v0", "mappo", 0.2, 0.9, 256, opponents=opponents)


def test_the_held_out_players_are_rated_against_the_fixed_ladder_and_rate_a_policy_from_their_games(
    tmp_path: Path,
) -> None:
    """The held-out fit (`anchors.held_out_document`): each held-out player plays the random player and each ladder
    player, whose ratings stay as the shipped fit has them; a result's held-out games then rate it on that scale."""
    spec = dataclasses.replace(
        registry.spec("ConnectFour-v0"),
        opponents={"tactical": "parallax_zoo.agents.ladder:tactical_connect_four"},
        held_out=CHEAP_HELD_OUT,
    )
    env = parallax_zoo.make("ConnectFour-v0")
    anchors_file = tmp_path / "anchors.json"
    shutil.copy(ANCHORS_FILE, anchors_file)
    shipped = json.loads(ANCHORS_FILE.read_text())["envs"]["ConnectFour-v0"]

    document = held_out_document([(spec, env)], games=8, path=anchors_file)
    fit = document["envs"]["ConnectFour-v0"]
    ladder_parts = ("ratings", "records")
    assert {key: fit[key] for key in ladder_parts} == {key: shipped[key] for key in ladder_parts}, "the ladder fit kept"
    records = {tuple(r["players"]): MatchRecord(r["wins"], r["draws"], r["losses"]) for r in fit["held_out"]["records"]}
    assert set(records) == {(held, fixed) for held in CHEAP_HELD_OUT for fixed in (RANDOM, "tactical")}
    assert all(record.games == 8 for record in records.values()) and fit["held_out"]["games_per_pair"] == 8
    ladder = load_anchors("ConnectFour-v0")
    refit = fit_ratings(records, {RANDOM: ladder[RANDOM], "tactical": ladder["tactical"]})
    assert {name: r["elo"] for name, r in fit["held_out"]["ratings"].items()} == pytest.approx(
        {name: refit[name].elo for name in CHEAP_HELD_OUT}
    )
    assert refit[RANDOM].elo == 1000 and refit["tactical"].elo == ladder["tactical"].elo, "the ladder held fixed"
    assert records[("alphabeta1", RANDOM)].wins >= 6, "a one-ply alpha-beta that takes every win beats random"

    write_anchors(document, anchors_file)
    held = load_held_out_anchors("ConnectFour-v0", anchors_file)
    assert set(held) == set(CHEAP_HELD_OUT) and all(rating.anchor for rating in held.values())
    assert load_anchors("ConnectFour-v0", anchors_file) == ladder

    def rated(win: float, loss: float) -> Rating | None:
        record = {"games": 256.0, "win": win, "draw": 1 - win - loss, "loss": loss}
        result = EvalResult(
            "ConnectFour-v0",
            "mine",
            protocol(registry.spec("ConnectFour-v0")),
            scores=(0.0,),
            held_out={name: record for name in CHEAP_HELD_OUT},
        )
        return held_out_rating(result, anchors_file)

    even, strong, weak = rated(0.5, 0.5), rated(0.95, 0.05), rated(0.05, 0.95)
    assert even is not None and strong is not None and weak is not None
    assert min(r.elo for r in held.values()) <= even.elo <= max(r.elo for r in held.values())
    assert weak.elo < even.elo < strong.elo and even.games == 2 * 256
    no_games = EvalResult("ConnectFour-v0", "mine", protocol(registry.spec("ConnectFour-v0")), scores=(0.0,))
    assert held_out_rating(no_games, anchors_file) is None


def test_rating_held_out_players_needs_the_ladders_fit_first(tmp_path: Path) -> None:
    empty = tmp_path / "anchors.json"
    empty.write_text(json.dumps({"protocol_version": PROTOCOL_VERSION, "games_per_pair": 8, "envs": {}}))
    with pytest.raises(ValueError, match=r"no ladder fit .* maintain anchors --write ConnectFour-v0"):
        held_out_document([registry.resolve("ConnectFour-v0")], games=8, path=empty)
    with pytest.raises(ValueError, match="Race-v0 has no held-out players"):
        held_out_document([registry.resolve("Race-v0")], games=8, path=empty)


def test_the_card_gives_the_rating_the_held_out_games_alone_give() -> None:
    record = {"games": 256.0, "win": 0.5, "draw": 0.25, "loss": 0.25}
    seats = {f"{outcome}_side_{side}": 0.5 for outcome in ("win", "draw", "loss") for side in (0, 1)}
    games = {"tactical": {**record, **seats}}
    card = model_card(
        "ConnectFour-v0",
        "mappo",
        0.2,
        0.9,
        256,
        opponents=games,
        rating=Rating(2200.4, 2150.0, 2250.0, 256),
        held_out={"mcts1000": {**record, **seats}},
        held_out_rating=Rating(1800.6, 1700.2, 1900.9, 256),
    )
    protocol_part, held_out_part = card.split("## Held-out opponents")
    assert "Elo 2200 (95% CI [2150, 2250]" in protocol_part
    assert "Elo 1801 (95% CI [1700, 1901]) from these games alone" in held_out_part
