"""The leaderboard: normalisation, Elo from a real round robin, and its three renderings."""

from __future__ import annotations

import csv
import io

import pytest
from nim import CarelessNim, PerfectNim

import parallax_zoo
from parallax_zoo.scoring.evaluation import evaluate
from parallax_zoo.scoring.leaderboard import MatchRecord, elo_ratings, leaderboard, load_results, normalise, round_robin


@pytest.fixture
def nim_id(scratch_registry):
    parallax_zoo.register(
        {"id": "TestNim-v0", "entry_point": "nim:Nim", "max_steps": 20, "multi_agent": True, "num_agents": 2,
         "tags": ["zero-sum", "test"]},
        override=True,
    )
    return "TestNim-v0"


def test_elo_orders_strong_weak_and_random_from_real_games(nim_id):
    records = round_robin(nim_id, {"random": "random", "strong": PerfectNim(), "weak": CarelessNim(0.5)}, episodes=128)
    assert records[("strong", "weak")].wins > records[("strong", "weak")].losses
    ratings = elo_ratings(records)
    assert ratings["strong"] > ratings["weak"] > ratings["random"] == pytest.approx(1000.0)


def test_elo_is_symmetric_and_finite_for_a_clean_sweep():
    ratings = elo_ratings({("a", "random"): MatchRecord(wins=50, draws=0, losses=0)})
    assert ratings["random"] == pytest.approx(1000.0)
    assert 1000.0 < ratings["a"] < 2000.0
    even = elo_ratings({("a", "b"): MatchRecord(wins=10, draws=5, losses=10)}, anchor="a")
    assert even["b"] == pytest.approx(even["a"])


@pytest.mark.parametrize(("score", "expected"), [(0.2, 0.0), (0.9, 1.0), (0.55, 0.5), (1.6, 2.0)])
def test_normalise_maps_random_to_zero_and_baseline_to_one(score, expected):
    assert normalise(score, 0.2, 0.9) == pytest.approx(expected)


def test_normalise_without_a_baseline_is_none():
    assert normalise(0.5, 0.2, None) is None


def test_leaderboard_ranks_results_and_entrants_with_elo(tmp_path, nim_id):
    evaluate("Race-v0", "random", name="random racer").save(tmp_path / "race.json")
    results = load_results(tmp_path)
    board = leaderboard(results, {nim_id: {"perfect": PerfectNim(), "careless": CarelessNim(0.5)}})
    nim_rows = [row for row in board.rows if row.env_id == nim_id]
    assert [row.entrant for row in nim_rows] == ["perfect", "careless"]
    assert nim_rows[0].elo is not None and nim_rows[1].elo is not None and nim_rows[0].elo > nim_rows[1].elo
    race_rows = [row for row in board.rows if row.env_id == "Race-v0"]
    assert [row.entrant for row in race_rows] == ["random racer"]

    paths = board.write(tmp_path / "board")
    table = list(csv.reader(io.StringIO(paths["csv"].read_text())))
    assert table[0][:3] == ["env", "rank", "entrant"]
    assert {row[2] for row in table[1:]} == {"perfect", "careless", "random racer"}
    markdown = paths["md"].read_text()
    assert markdown.startswith("| env | rank |") and "perfect" in markdown
    page = paths["html"].read_text()
    assert page.startswith("<!DOCTYPE html>") and "<table>" in page and "careless" in page
    assert "http" not in page.replace("http-equiv", "")
