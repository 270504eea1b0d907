"""The held-out players (registry.yaml `held_out:`): met only when an evaluation asks, reported apart from the
protocol's opponents, never counted in the score, never seated in training (docs/evaluation.md, "The held-out
ladder")."""

from __future__ import annotations

import dataclasses
import json

import pytest

import parallax_zoo
from parallax_zoo.agents.player_factories import held_out_player, training_opponent
from parallax_zoo.baselines.model_card import model_card
from parallax_zoo.catalogue import registry
from parallax_zoo.catalogue.registry import RegistryError
from parallax_zoo.errors import UserError
from parallax_zoo.judging.evaluation import EvalResult, evaluate

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
