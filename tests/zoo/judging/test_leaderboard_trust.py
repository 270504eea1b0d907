"""Forged and broken inputs to the leaderboard: every results file is ranked as what it is or stops the board with one
line naming the file and the field; ratings use every recorded game; the board's files are written as one set.

The results are built in the format `evaluate` writes (`crafted_results`) and then altered as a forger would; the
full disk is a real tmpfs of a few pages, mounted by the test where the machine allows it.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.crafted_results import crafted, random_result, scored

import parallax_zoo
from parallax_zoo.atomic import OutputNotWrittenError
from parallax_zoo.catalogue.player_names import BASELINE, RANDOM
from parallax_zoo.cli.main import main
from parallax_zoo.judging.evaluation import EvalResult
from parallax_zoo.judging.leaderboard import LeaderboardInputError, leaderboard, load_results
from parallax_zoo.judging.result_checks import result_problem
from parallax_zoo.policies.loading import baseline_label

BASELINES = Path(__file__).resolve().parents[3] / "baselines"
C4 = "ConnectFour-v0"
C4_GAMES = {
    "tactical": (0, 0, 256),
    "depth2": (3, 0, 253),
    "depth4": (0, 0, 256),
    RANDOM: (128, 0, 128),
    BASELINE: (0, 0, 256),
}
"""A ConnectFour result's games (won, drawn, lost) against each opponent of the protocol: a weak player's."""


def c4_data() -> dict[str, Any]:
    return crafted(C4, "mine", C4_GAMES).to_dict()


def opponent(name: str, **changes: Any) -> Callable[[dict[str, Any]], None]:
    return lambda data: data["opponents"][name].update(changes)


def setting(key: str, value: Any, within: str | None = None) -> Callable[[dict[str, Any]], None]:
    return lambda data: (data[within] if within else data).__setitem__(key, value)


def dropping(*keys: str) -> Callable[[dict[str, Any]], None]:
    def drop(data: dict[str, Any]) -> None:
        target = data
        for key in keys[:-1]:
            target = target[key]
        del target[keys[-1]]

    return drop


FORGERIES: dict[str, tuple[Callable[[dict[str, Any]], None], str, str]] = {
    "a million games": (opponent("tactical", games=1e6), "opponents.tactical.games", "the protocol plays 256 games"),
    "a trillion games": (opponent("depth2", games=1e12), "opponents.depth2.games", "the protocol plays 256 games"),
    "negative games": (opponent("random", games=-1000.0), "opponents.random.games", "the protocol plays 256 games"),
    "win 5 loss -4": (
        opponent("depth4", win=5.0, draw=0.0, loss=-4.0),
        "opponents.depth4.win",
        "a rate lies in [0, 1]",
    ),
    "rates summing to 1.5": (opponent("random", win=0.5, draw=0.5, loss=0.5), "opponents.random.win", "sum to 1.5"),
    "a part of a game": (opponent("random", win=0.3, loss=0.7), "opponents.random.win", "not a whole number of games"),
    "a record without win": (dropping("opponents", "depth2", "win"), "opponents.depth2.win", "missing"),
    "an opponent left out": (dropping("opponents", BASELINE), "opponents", "the protocol of ConnectFour-v0 plays"),
    "an extra opponent": (
        lambda d: d["opponents"].update(rival=d["opponents"]["tactical"]),
        "opponents",
        "records against",
    ),
    "sides not adding up": (opponent("random", games_side_0=100.0), "opponents.random.", "side"),
    "scores not the record's": (lambda d: d.update(scores=[1.0] * 256), "scores", "by the scores' signs"),
    "huge scores of the record's": (
        lambda d: d.update(scores=[-1e308] * 256),
        "scores",
        "but opponents.tactical.return records -1",
    ),
    "a record without return": (dropping("opponents", "random", "return"), "opponents.random.return", "missing"),
    "one score of 256": (
        lambda d: d.update(scores=[1.0], episodes=1),
        "scores",
        "1 scores, but the protocol plays 256 episodes",
    ),
    "an episodes field not the scores'": (setting("episodes", 5), "episodes", "the file holds 256 scores"),
    "protocol.episodes": (
        setting("episodes", 128, "protocol"),
        "protocol.episodes",
        "the protocol of ConnectFour-v0 has 256",
    ),
    "protocol.env_id": (setting("env_id", "TicTacToe-v0", "protocol"), "protocol.env_id", "the result's env_id is"),
    "protocol.opponents": (setting("opponents", [RANDOM], "protocol"), "protocol.opponents", "has ['tactical'"),
    "a ladder player's name": (setting("policy", "tactical"), "policy", "is a ladder player of ConnectFour-v0"),
    "the bare baseline": (setting("policy", BASELINE), "policy", "names the baseline, but the pinned baseline is"),
    "another baseline": (setting("policy", "baseline:evil/fake@main"), "policy", "names the baseline"),
    "a newline in the name": (setting("policy", "two\nlines"), "policy", "one line of text"),
    "a 1 MB name": (setting("policy", "x" * 2**20), "policy", "a policy name has at most 256"),
    "a lone surrogate": (setting("policy", "odd\ud800"), "policy", "lone surrogate"),
    "a 400-digit score": (lambda d: d["scores"].__setitem__(0, 10**400), "scores", "an integer of about 401 digits"),
    "a score past a float": (lambda d: d["scores"].__setitem__(0, "HUGE"), "scores", "inf (a number beyond"),
    "a bare NaN": (lambda d: d["scores"].__setitem__(0, "BARE"), "(whole file)", "a bare NaN"),
    "a weak result named random": (setting("policy", RANDOM), "scores", "but the random player scores -0.976562"),
}
"""Forgery: (how the file is altered, the field the one line names, what it says)."""


@pytest.mark.parametrize("forgery", FORGERIES)
def test_a_forged_results_file_stops_the_board_naming_the_file_and_the_field(tmp_path: Path, forgery: str) -> None:
    alter, field, problem = FORGERIES[forgery]
    data = c4_data()
    alter(data)
    text = json.dumps(data).replace('"HUGE"', "1e400").replace('"BARE"', "NaN")
    path = tmp_path / "forged.json"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    with pytest.raises(LeaderboardInputError) as caught:
        load_results(tmp_path)
    message = str(caught.value)
    assert message.startswith(f"{path}: {field}") and problem in message and "\n" not in message, message


def test_the_untouched_files_and_every_shipped_evaluation_pass_the_checks(tmp_path: Path) -> None:
    crafted(C4, "mine", C4_GAMES).save(tmp_path / "mine.json")
    scored("Race-v0", "racer", (1.0, 2.0)).save(tmp_path / "racer.json")
    assert {r.policy for r in load_results(tmp_path)} == {"mine", "racer"}
    for path in sorted(BASELINES.glob("*/eval.json")):
        measured = EvalResult.from_json(json.loads(path.read_text()))
        measured = EvalResult(**{**measured.__dict__, "policy": baseline_label(parallax_zoo.spec(measured.env_id))})
        assert result_problem(measured) is None, path
    forged = EvalResult(**{**crafted(C4, "mine", C4_GAMES).__dict__, "policy": "depth4"})
    with pytest.raises(
        LeaderboardInputError, match="the result of 'depth4' on ConnectFour-v0: policy: 'depth4' is a ladder player"
    ):
        leaderboard([forged])  # results given in Python are checked too


def test_the_cli_answers_a_forged_file_in_one_line_with_exit_2(tmp_path: Path, capsys) -> None:
    data = c4_data()
    data["opponents"]["depth4"].update(win=5.0, draw=0.0, loss=-4.0)
    (tmp_path / "forged.json").write_text(json.dumps(data))
    assert main(["leaderboard", "--results", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(
        f"parallax-zoo leaderboard: {tmp_path / 'forged.json'}: opponents.depth4.win: 5; a rate lies in [0, 1]"
    )


# Scores: no overflow, ranks that match the order, an order from the results alone


def test_huge_scores_have_a_finite_mean_and_rank_where_their_label_says(tmp_path: Path) -> None:
    huge = scored("Race-v0", "huge", (1e308,))
    board = leaderboard([huge, scored("Race-v0", "steady", (1.0,)), random_result("Race-v0")])
    assert [row.entrant for row in board.rows] == ["huge", "steady", RANDOM]
    assert board.rows[0].mean == 1e308 and board.rows[0].ci95 == (1e308, 1e308)
    assert [cells[1] for cells in csv.reader(io.StringIO(board.to_csv()))][1:] == ["1", "2", "3"]
    assert "inf" not in board.to_markdown() and "nan" not in board.to_markdown()
    swinging = scored("Race-v0", "swinging", (1.7e308, -1.7e308) * 64)
    swinging.save(tmp_path / "swinging.json")
    with pytest.raises(LeaderboardInputError, match="swinging.json: scores: too large to average"):
        load_results(tmp_path)


def test_tied_rows_are_ordered_by_content_not_by_file_name(tmp_path: Path) -> None:
    boards = []
    for first, second in (("alpha", "omega"), ("omega", "alpha")):
        folder = tmp_path / first
        for file, name in (("a.json", first), ("b.json", second)):
            scored("Race-v0", name, (1.0,)).save(folder / file)
        random_result("Race-v0").save(folder / "random.json")
        board = leaderboard(load_results(folder))
        board.date = "2026-01-01"
        boards.append(board)
    assert [row.entrant for row in boards[0].rows] == ["alpha", "omega", RANDOM]
    assert boards[0].to_markdown() == boards[1].to_markdown() and boards[0].to_csv() == boards[1].to_csv()


def test_csv_cells_a_spreadsheet_would_run_are_neutralised_and_numbers_stay_numbers() -> None:
    names = ['=HYPERLINK("http://x")', "+1+1", "-2+3", "@SUM(A1)", "plain"]
    board = leaderboard([scored("Race-v0", name, (-5.0,)) for name in names] + [random_result("Race-v0")])
    table = list(csv.reader(io.StringIO(board.to_csv())))[1:]
    entrants = {row[2] for row in table}
    assert entrants == {'\'=HYPERLINK("http://x")', "'+1+1", "'-2+3", "'@SUM(A1)", "plain", RANDOM}
    assert {row[3] for row in table} == {"-5.000", "0.799"}


# Elo: every player rated from all its recorded games; a given random result reused


def test_the_baseline_joining_through_the_random_players_result_is_rated_from_its_own_games_too() -> None:
    random_games = {
        "tactical": (3, 0, 253),  # its scores: a mean of -250/256, the random player's shipped score
        "depth2": (0, 0, 256),
        "depth4": (0, 0, 256),
        RANDOM: (128, 0, 128),
        BASELINE: (7, 0, 249),
    }  # as the baseline's eval.json has it: it loses 2.7% to the random player
    board = leaderboard([crafted(C4, RANDOM, random_games)])
    ratings = board.ratings[C4]
    recorded = json.loads((BASELINES / C4 / "eval.json").read_text())["opponents"]["tactical"]
    assert recorded["win"] > 0.9  # the baseline beats the tactical player in most games of its eval.json
    assert ratings[BASELINE].elo > ratings["tactical"].elo
    assert ratings[BASELINE].games == 256 + 4 * 256  # the random player's games with it, and its own
    random_row = next(row for row in board.rows if row.entrant == RANDOM)
    assert random_row.mean == -250 / 256 and random_row.normalized == 0.0  # the given result, not a new evaluation


# Writing: one line and exit 2, the three files together or not at all


def old_board(folder: Path) -> dict[str, str]:
    """A board written into `folder`, and its files' contents."""
    paths = leaderboard([scored("Race-v0", "old", (1.0,)), random_result("Race-v0")]).write(folder)
    return {suffix: path.read_text() for suffix, path in paths.items()}


def new_results(folder: Path) -> Path:
    scored("Race-v0", "new", (2.0,)).save(folder / "new.json")
    random_result("Race-v0").save(folder / "random.json")
    return folder


def test_a_folder_in_place_of_one_file_leaves_all_three_as_they_were(tmp_path: Path) -> None:
    out = tmp_path / "board"
    before = old_board(out)
    (out / "leaderboard.csv").unlink()
    (out / "leaderboard.csv").mkdir()
    board = leaderboard(load_results(new_results(tmp_path / "results")))
    with pytest.raises(OutputNotWrittenError, match=f"cannot write {out / 'leaderboard.csv'}: a folder is in the way"):
        board.write(out)
    assert (out / "leaderboard.md").read_text() == before["md"]
    assert (out / "leaderboard.html").read_text() == before["html"]
    assert sorted(p.name for p in out.iterdir()) == ["leaderboard.csv", "leaderboard.html", "leaderboard.md"]


def test_out_under_a_file_or_onto_a_folder_is_one_line_before_any_work(tmp_path: Path, capsys) -> None:
    results = new_results(tmp_path / "results")
    (tmp_path / "a-file").write_text("mine")
    assert main(["leaderboard", "--results", str(results), "--out", str(tmp_path / "a-file" / "board")]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"parallax-zoo leaderboard: cannot write {tmp_path / 'a-file' / 'board' / 'leaderboard.md'}: "
        f"{tmp_path / 'a-file'} is a file, not a folder; nothing there was changed. Free some space or "
        "choose another path\n"
    )
    (tmp_path / "board" / "leaderboard.html").mkdir(parents=True)
    assert main(["leaderboard", "--results", str(results), "--out", str(tmp_path / "board")]) == 2
    assert "leaderboard.html: a folder is in the way" in capsys.readouterr().err
    assert main(["eval", "GridWorld-v0", "--policy", "random", "--out", str(tmp_path / "a-file" / "r.json")]) == 2
    assert capsys.readouterr().err.startswith(f"parallax-zoo eval: cannot write {tmp_path / 'a-file' / 'r.json'}: ")


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A real tmpfs of 64 KiB mounted at a fresh folder (skipped where mounting is not permitted)."""
    mount, umount = shutil.which("mount"), shutil.which("umount")
    if mount is None or umount is None or os.geteuid() != 0:
        pytest.skip("a real full disk needs a tmpfs mount: there is no mount(8) here, or the tests do not run as root")
    point = tmp_path / "small-disk"
    point.mkdir()
    done = subprocess.run([mount, "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(point)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"mounting a tmpfs is not permitted here: {done.stderr.strip()}")
    try:
        yield point
    finally:
        subprocess.run([umount, str(point)], check=True)


def fill(folder: Path) -> None:
    """Fill the file system of `folder` to the last byte."""
    with open(folder / "filler", "wb", buffering=0) as handle:
        try:
            while True:
                handle.write(b"\0" * 4096)
        except OSError:
            pass


def test_a_full_disk_is_one_line_and_leaves_the_old_board_whole(full_disk: Path, tmp_path: Path, capsys) -> None:
    out = full_disk / "board"
    before = old_board(out)
    fill(full_disk)
    results = new_results(tmp_path / "results")
    assert main(["leaderboard", "--results", str(results), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "No space left on device; nothing there was changed" in err, err
    assert {suffix: (out / f"leaderboard.{suffix}").read_text() for suffix in before} == before
    assert sorted(p.name for p in out.iterdir()) == ["leaderboard.csv", "leaderboard.html", "leaderboard.md"]
    assert main(["eval", "GridWorld-v0", "--policy", "random", "--out", str(full_disk / "r.json")]) == 2
    err = capsys.readouterr().err  # the evaluation's progress, then the error in one line
    assert "Traceback" not in err and err.endswith("\n")
    assert err.splitlines()[-1] == (
        f"parallax-zoo eval: cannot write {full_disk / 'r.json'}: No space left on device; "
        "nothing there was changed. Free some space or choose another path"
    )
    assert sorted(p.name for p in full_disk.iterdir()) == ["board", "filler"]
