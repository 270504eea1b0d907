"""The leaderboard page in a real headless Chromium: it loads clean, its headers sort, and every row shows.

The browser is Debian's `chromium` (installed by `make test` where it can be); without one these tests skip
with a line saying why. The board is made of real `EvalResult`s, two envs, one a zero-sum game.
"""

from __future__ import annotations

import pytest
from helpers.browser import Chromium, find_chromium
from PIL import Image

import parallax_zoo
from parallax_zoo.judging.evaluation import EvalResult, protocol
from parallax_zoo.judging.leaderboard import NON_FINITE_NOTE, Leaderboard, Row
from parallax_zoo.judging.ratings import Rating

CHROMIUM, WHY_NOT = find_chromium()
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason=WHY_NOT)

HOSTILE = "<script>alert('x')</script>"
COMMIT = "0123456789abcdef0123456789abcdef01234567"
HUB_ENTRANT = f"hub:someone/tictactoe-ppo@{COMMIT}"
PROVENANCE = {
    "repo": "someone/tictactoe-ppo",
    "commit": COMMIT,
    "files": {"config.yaml": "a" * 64, "model.safetensors": "b" * 64},
}


def tictactoe(
    policy: str, perfect: tuple[float, float, float], random: tuple[float, float, float], provenance: dict | None = None
) -> EvalResult:
    """A TicTacToe result with these (win, draw, loss) shares against the perfect and the random player."""
    fixed = protocol(parallax_zoo.spec("TicTacToe-v0"))

    def record(shares: tuple[float, float, float]) -> dict[str, float]:
        win, draw, loss = shares
        return {
            "games": float(fixed.episodes),
            "win": win,
            "draw": draw,
            "loss": loss,
            "return": win - loss,
            "win_side_0": win,
            "draw_side_0": draw,
            "loss_side_0": loss,
        }

    scores = (1.0,) * round(perfect[0] * fixed.episodes) + (0.0,) * round(perfect[1] * fixed.episodes)
    scores += (-1.0,) * (fixed.episodes - len(scores))
    return EvalResult(
        "TicTacToe-v0",
        policy,
        fixed,
        scores=scores,
        provenance=provenance or {},
        opponents={"perfect": record(perfect), "random": record(random)},
    )


def race(policy: str, scores: tuple[float, ...]) -> EvalResult:
    return EvalResult("Race-v0", policy, protocol(parallax_zoo.spec("Race-v0")), scores=scores)


def row(result: EvalResult, normalized: float | None, rating: Rating | None = None) -> Row:
    """The board's row of a result, as `leaderboard.leaderboard` makes it."""
    return Row(
        result.env_id,
        result.policy,
        result.mean,
        result.ci95,
        result.episodes,
        normalized,
        elo=rating.elo if rating else None,
        elo_ci=(rating.low, rating.high) if rating else None,
        note="" if result.finite else NON_FINITE_NOTE,
        opponents=result.opponents,
        provenance=result.provenance,
    )


def two_env_board() -> Leaderboard:
    """TicTacToe with three rated entrants (one from the Hub, one with a hostile name) and Race with four."""
    ratings = {
        HUB_ENTRANT: Rating(1480.0, 1440.0, 1520.0, 512),
        "zeta": Rating(1200.0, 1150.0, 1250.0, 512),
        HOSTILE: Rating(940.0, 900.0, 980.0, 512),
        "perfect": Rating(1481.0, 1436.0, 1526.0, 512, anchor=True),
        "random": Rating(1000.0, 1000.0, 1000.0, 512, anchor=True),
    }
    games = [
        tictactoe(HUB_ENTRANT, (0.0, 1.0, 0.0), (0.9, 0.1, 0.0), PROVENANCE),
        tictactoe("zeta", (0.0, 0.5, 0.5), (0.7, 0.1, 0.2)),
        tictactoe(HOSTILE, (0.0, 0.0, 1.0), (0.4, 0.1, 0.5), {"repo": HOSTILE, "commit": HOSTILE}),
    ]
    races = [
        race("alpha", (6.0, 7.0)),
        race("delta", (5.0, 5.5)),
        race("bravo", (3.0, 3.5)),
        race("charlie", (float("nan"), 1.0)),
    ]
    rows = [row(result, normalized=1.0 + result.mean, rating=ratings[result.policy]) for result in games]
    rows += [row(result, normalized=result.mean / 6.5) for result in races]
    return Leaderboard(rows, date="2026-01-02", ratings={"TicTacToe-v0": ratings})


def test_the_page_groups_envs_escapes_results_and_loads_nothing():
    page = two_env_board().to_html()
    assert page.count("<section id='env-") == 2 and "<h2>Race-v0</h2>" in page and "<h2>TicTacToe-v0</h2>" in page
    assert HOSTILE not in page and "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    assert "W 0% &middot; D 100% &middot; L 0%" in page and "a" * 64 in page and COMMIT in page
    assert f"https://huggingface.co/someone/tictactoe-ppo/blob/{COMMIT}/README.md" in page
    for fetching in ("<link", " src=", "@import", "url(", "fetch(", "XMLHttpRequest"):
        assert fetching not in page, f"the page would fetch something at view time ({fetching})"


@needs_chromium
def test_the_page_in_chromium_loads_clean_sorts_on_a_click_and_shows_every_row(tmp_path):
    board = two_env_board()
    page = board.write(tmp_path)["html"]
    race = "#env-1 table.ranking"  # the second env's section, Race-v0
    entrants = f"[...document.querySelectorAll('{race} tbody tr')].map(r => r.cells[1].dataset.sort)"
    assert CHROMIUM is not None
    with Chromium(CHROMIUM) as browser:
        browser.open(page, width=1280)
        assert browser.evaluate("document.querySelectorAll('table.ranking tbody tr').length") == len(board.rows)
        assert browser.evaluate(entrants) == ["alpha", "delta", "bravo", "charlie"]  # ranked; NaN last
        browser.click(f"{race} th:nth-child(2) button")  # entrant: A to Z
        assert browser.evaluate(entrants) == ["alpha", "bravo", "charlie", "delta"]
        browser.click(f"{race} th:nth-child(2) button")  # again: Z to A
        assert browser.evaluate(entrants) == ["delta", "charlie", "bravo", "alpha"]
        browser.click(f"{race} th:nth-child(3) button")  # score: best first, the non-finite last
        assert browser.evaluate(entrants) == ["alpha", "delta", "bravo", "charlie"]
        browser.click(f"{race} th:nth-child(3) button")  # again: worst first, the non-finite still last
        assert browser.evaluate(entrants) == ["bravo", "delta", "alpha", "charlie"]
        assert (
            browser.evaluate(f"document.querySelector('{race} th:nth-child(3)').getAttribute('aria-sort')")
            == "ascending"
        )
        for width in (1280, 390):  # a desktop, then a phone: no sideways scrolling, every row laid out
            browser.open(page, width=width)
            laid_out = browser.evaluate(
                "Object.fromEntries(['ranking', 'records', 'ratings', 'provenance'].map(kind => [kind,"
                " [...document.querySelectorAll(`table.${kind} tbody tr`)].filter(r => {"
                " const b = r.getBoundingClientRect();"
                " return b.height > 0 && b.width > 0 && b.left >= 0"
                " && b.right <= document.documentElement.clientWidth; }).length]))"
            )
            assert laid_out == {"ranking": 7, "records": 3, "ratings": 5, "provenance": 7}  # every row, on the page
            assert browser.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
            assert browser.evaluate("document.body.innerText").count("model card") >= 1
            shot = Image.open(browser.screenshot(tmp_path / f"leaderboard-{width}.png")).convert("L")
            assert shot.width == width and shot.height >= browser.evaluate("document.body.scrollHeight")
            darkest, lightest = shot.getextrema()
            assert isinstance(darkest, int) and isinstance(lightest, int)
            assert lightest - darkest > 100, "the screenshot is blank"
        browser.click(f"{race} th:nth-child(2) button")  # on the phone the headers are buttons above the cards
        assert browser.evaluate(entrants) == ["alpha", "bravo", "charlie", "delta"]
        assert browser.problems() == []


def test_the_cli_board_shows_where_an_entrants_files_came_from(tmp_path, capsys):
    from parallax_zoo import spec
    from parallax_zoo.cli.main import main

    assert main(["leaderboard", "--entrant", "Race-v0=baseline", "--out", str(tmp_path)]) == 0
    pin = spec("Race-v0").baseline
    assert pin is not None
    page = (tmp_path / "leaderboard.html").read_text()
    assert f"https://huggingface.co/{pin.repo_id}/blob/{pin.revision}/README.md" in page
    assert all(f"{name} <code>{digest}</code>" in page for name, digest in pin.files.items())
