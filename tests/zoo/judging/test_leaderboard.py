"""The leaderboard: normalisation, Elo from a real round robin, and its three renderings."""

from __future__ import annotations

import csv
import dataclasses
import io
import json

import pytest
from helpers.crafted_results import crafted, scored
from helpers.nim import CarelessNim, PerfectNim

import parallax_zoo
from parallax_zoo import evaluate
from parallax_zoo.catalogue.registry import resolve
from parallax_zoo.judging.evaluation import EvalResult, protocol
from parallax_zoo.judging.leaderboard import (
    NON_FINITE_NOTE,
    LeaderboardInputError,
    MatchRecord,
    elo_ratings,
    leaderboard,
    load_results,
    normalize,
    round_robin,
)


@pytest.fixture
def nim_id(scratch_registry):
    parallax_zoo.register(
        {
            "id": "TestNim-v0",
            "entry_point": "helpers.nim:Nim",
            "max_steps": 20,
            "multi_agent": True,
            "num_agents": 2,
            "tags": ["zero-sum", "test"],
        },
        override=True,
    )
    return "TestNim-v0"


def test_elo_orders_strong_weak_and_random_from_real_games(nim_id):
    records = round_robin(
        *resolve(nim_id), {"random": "random", "strong": PerfectNim(), "weak": CarelessNim(0.5)}, episodes=128
    )
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
def test_normalize_maps_random_to_zero_and_baseline_to_one(score, expected):
    assert normalize(score, 0.2, 0.9) == pytest.approx(expected)


def test_normalize_without_a_baseline_is_none():
    assert normalize(0.5, 0.2, None) is None


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
    assert page.startswith("<!DOCTYPE html>") and "<table class='sortable ranking'>" in page and "careless" in page
    assert "http" not in page.replace("http-equiv", "")


# Honest rankings: NaN last, inputs checked file by file


def synthetic(policy: str, scores: tuple[float, ...], env_id: str = "Race-v0") -> EvalResult:
    """A result as `evaluate` would write it, with the given scores (the last repeated to the protocol's count)."""
    return scored(env_id, policy, scores)


def test_a_non_finite_result_is_written_as_strict_json_and_ranked_last_with_a_note(tmp_path):
    saved = synthetic("diverged", (float("nan"), 1.0)).save(tmp_path / "diverged.json")
    data = json.loads(saved.read_text(), parse_constant=lambda token: pytest.fail(f"bare {token} in the JSON"))
    assert data["finite"] is False and data["mean"] is None and data["scores"][:3] == [None, 1.0, 1.0]
    synthetic("weak", (-5.0, -5.0)).save(tmp_path / "weak.json")
    synthetic("infinite", (float("inf"), 0.0)).save(tmp_path / "infinite.json")
    results = load_results(tmp_path)
    assert {r.policy: r.finite for r in results} == {"diverged": False, "weak": True, "infinite": False}
    board = leaderboard(results)
    assert [row.entrant for row in board.rows][0] == "weak"
    assert {row.entrant: row.note for row in board.rows} == {
        "weak": "",
        "diverged": NON_FINITE_NOTE,
        "infinite": NON_FINITE_NOTE,
    }
    assert NON_FINITE_NOTE in board.to_markdown()


@pytest.mark.parametrize(
    ("content", "field", "problem"),
    [
        (b"{not json", "(whole file)", "not JSON"),
        (b"\xff\xfe{}", "(whole file)", "not UTF-8"),
        (b"[1, 2]", "(whole file)", "expected a JSON object"),
        ("drop:scores", "scores", "missing"),
        ("set:scores=[]", "scores", "empty"),
        ('set:scores="high"', "scores", "expected a JSON list"),
        ('set:scores=[1, "x"]', "scores", "expected numbers"),
        ("set:policy=3", "policy", "expected a JSON str"),
        ('set:env_id="Nope-v0"', "env_id", "not a registered env id"),
        ("protocol:drop:episodes", "protocol", "missing ['episodes']"),
        ("protocol:set:colour=1", "protocol", "unexpected ['colour']"),
        ('protocol:set:episodes="128"', "protocol.episodes", "expected a JSON int"),
    ],
)
def test_a_malformed_results_file_is_fatal_naming_the_file_and_the_field(tmp_path, content, field, problem):
    path = tmp_path / "bad.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        data = synthetic("p", (1.0,)).to_dict()
        target, (action, rest) = (
            (data["protocol"], content.split(":", 2)[1:])
            if content.startswith("protocol:")
            else (data, content.split(":", 1))
        )
        if action == "drop":
            del target[rest]
        else:
            key, value = rest.split("=", 1)
            target[key] = json.loads(value)
        path.write_text(json.dumps(data))
    with pytest.raises(LeaderboardInputError) as caught:
        load_results(tmp_path)
    message = str(caught.value)
    assert message.startswith(f"{path}: {field}: ") and problem in message and "(fatal)" in message


def test_two_files_with_one_policy_name_are_refused_naming_both(tmp_path):
    synthetic("mine", (1.0,)).save(tmp_path / "a.json")
    synthetic("mine", (2.0,)).save(tmp_path / "b.json")
    with pytest.raises(
        LeaderboardInputError, match="a.json and .*b.json both hold results of policy 'mine' on Race-v0"
    ):
        load_results(tmp_path)


def test_results_from_nowhere_are_an_error(tmp_path):
    with pytest.raises(LeaderboardInputError, match="no such file or folder"):
        load_results(tmp_path / "missing")
    with pytest.raises(LeaderboardInputError, match="holds no \\*.json results"):
        load_results(tmp_path)


# Protocol versions and the anchored Elo scale


def test_a_results_file_of_protocol_version_1_is_refused_naming_the_version_and_the_way_out(tmp_path):
    data = synthetic("old", (1.0,)).to_dict()
    data["protocol"]["version"] = 1
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data))
    with pytest.raises(LeaderboardInputError) as caught:
        load_results(tmp_path)
    message = str(caught.value)
    assert message.startswith(
        f"{path}: protocol.version: evaluation protocol version 1, not 2; results of another version are refused"
    )
    assert "opponent ladder" in message and "parallax-zoo eval Race-v0 --policy P --out FILE" in message
    old = dataclasses.replace(
        synthetic("old", (1.0,)), protocol=dataclasses.replace(protocol(parallax_zoo.spec("Race-v0")), version=1)
    )
    with pytest.raises(
        LeaderboardInputError, match="'old' on Race-v0: protocol.version: evaluation protocol version 1, not 2"
    ):
        leaderboard([old])


def ladder_result(
    policy: str,
    perfect: tuple[int, int, int],
    random: tuple[int, int, int],
    baseline: tuple[int, int, int] = (0, 0, 256),
) -> EvalResult:
    """A TicTacToe result with the given games (won, drawn, lost) against `perfect`, the random player and the
    baseline, in the format `evaluate` writes."""
    return crafted("TicTacToe-v0", policy, {"perfect": perfect, "random": random, "baseline": baseline})


def test_the_board_rates_results_on_the_anchored_scale_with_intervals_and_the_anchors_stay_put():
    from parallax_zoo.judging.anchors import load_anchors

    provenance = {"repo": "someone/drawer", "commit": "c" * 40, "files": {"model.safetensors": "d" * 64}}
    drawer = dataclasses.replace(
        ladder_result("drawer", (0, 256, 0), (230, 26, 0), baseline=(0, 256, 0)), provenance=provenance
    )
    loser = ladder_result("loser", (0, 0, 256), (102, 26, 128))
    alone, crowded = leaderboard([drawer]), leaderboard([drawer, loser])
    perfect = load_anchors("TicTacToe-v0")["perfect"]
    for board in (alone, crowded):
        assert board.ratings["TicTacToe-v0"]["perfect"] == dataclasses.replace(
            perfect, games=board.ratings["TicTacToe-v0"]["perfect"].games
        )
        assert board.ratings["TicTacToe-v0"]["random"].elo == 1000.0
    ratings = crowded.ratings["TicTacToe-v0"]
    assert ratings["loser"].elo < 1000 < ratings["drawer"].elo
    # the loser moves the drawer only through the baseline both met
    assert ratings["drawer"].elo == pytest.approx(alone.ratings["TicTacToe-v0"]["drawer"].elo, abs=10)
    assert ratings["drawer"].elo == pytest.approx(perfect.elo, abs=80)  # draws every game with perfect play
    row = next(row for row in crowded.rows if row.entrant == "drawer")
    drawer_rating = ratings["drawer"]
    assert row.elo == drawer_rating.elo and row.elo_ci == (drawer_rating.low, drawer_rating.high)
    markdown = crowded.to_markdown()
    assert f"| {drawer_rating.elo:.0f} [{drawer_rating.low:.0f}, {drawer_rating.high:.0f}] |" in markdown
    # perfect met drawer, loser and the baseline (its eval.json games)
    assert (
        f"| TicTacToe-v0 | perfect | {perfect.elo:.0f} | [{perfect.low:.0f}, {perfect.high:.0f}] | "
        f"{3 * protocol(parallax_zoo.spec('TicTacToe-v0')).episodes} | ladder anchor (fixed) |"
    ) in markdown
    page = crowded.to_html()
    assert (
        "<h3>Elo ratings</h3>" in page and ">ladder anchor (fixed)</span></td>" in page and "Fisher information" in page
    )
    assert row.opponents == drawer.opponents and row.provenance == provenance
    assert "W 0% &middot; D 100% &middot; L 0%" in page and "W 90% &middot; D 10% &middot; L 0%" in page
    assert "d" * 64 in page and f"https://huggingface.co/someone/drawer/blob/{'c' * 40}/README.md" in page


def test_leaderboard_from_results_alone_has_elo_shared_ranks_and_explains_itself(tmp_path):
    from parallax_zoo.judging.leaderboard import leaderboard, load_results

    (tmp_path / "results").mkdir()
    result = parallax_zoo.evaluate("TicTacToe-v0", "random", name="first")
    for name in ("first", "second"):  # the same games under two names: equal scores
        dataclasses.replace(result, policy=name).save(tmp_path / "results" / f"{name}.json")
    assert repr(result).startswith("EvalResult(TicTacToe-v0, first: mean") and "256 episodes" in repr(result)
    assert "vs random: win" in repr(result) and "\n" not in repr(result) and len(repr(result)) < 300
    assert json.loads(result.to_json()) == result.to_dict()
    board = leaderboard(load_results(tmp_path / "results"))
    assert [row.elo is not None for row in board.rows] == [True, True]
    markdown = [line for line in board.to_markdown().splitlines() if line.startswith("| TicTacToe-v0 | ")]
    assert [line.split(" | ")[1] for line in markdown[:2]] == ["1", "1"]
    page = board.to_html()
    assert "Evaluation protocol version 2" in page and board.date in page
    assert "0 is the uniformly random player" in page and "random player rates 1000" in page
