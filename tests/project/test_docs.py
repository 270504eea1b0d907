"""The documentation site builds with `mkdocs build --strict`, and its catalogue lists every registered id."""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import parallax_zoo
from docs.catalogue_pages import BUILT_AT_SITE_BUILD, built_spaces, family_name, recorded_spaces

ROOT = Path(__file__).resolve().parents[2]

pytest.importorskip("mkdocs", reason="the docs extra is not installed")


def _text(page: Path) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", page.read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_MKDOCS_2_WARNING": "1"}
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert build.returncode == 0, build.stderr[-4000:]
    return out


def test_catalogue_index_lists_every_registered_id(site: Path) -> None:
    index = _text(site / "environments" / "index.html")
    missing = [env_id for env_id in parallax_zoo.list_envs() if env_id not in index]
    assert not missing


def test_every_family_page_shows_its_ids_spaces_and_scores(site: Path) -> None:
    for env_id in parallax_zoo.list_envs():
        env_spec = parallax_zoo.spec(env_id)
        page = _text(site / "environments" / family_name(env_spec) / "index.html")
        assert env_spec.id in page
        if env_spec.reference_score is not None:
            assert f"{env_spec.reference_score:.3f}" in page
        assert "action space" in page and "observation space" in page


def test_gymnax_and_playground_ids_get_a_page_per_family() -> None:
    found: dict[str, list[str]] = {}
    for env_id in parallax_zoo.list_envs():
        found.setdefault(family_name(parallax_zoo.spec(env_id)), []).append(env_id)
    gymnax_pages = ["gymnax-classic-control", "gymnax-minatar", "gymnax-bsuite", "gymnax-misc"]
    mjx_pages = ["mjx-dm-control", "mjx-locomotion", "mjx-manipulation"]
    assert set(gymnax_pages + mjx_pages + ["brax"]) <= set(found) and "gymnax" not in found and "mjx" not in found
    assert [len(found[name]) for name in gymnax_pages + mjx_pages] == [5, 5, 6, 9, 25, 19, 10]
    assert "gymnax/Breakout-MinAtar" in found["gymnax-minatar"] and "mjx/CheetahRun" in found["mjx-dm-control"]
    assert sorted(env_id for ids in found.values() for env_id in ids) == parallax_zoo.list_envs()


def test_native_family_pages_show_spaces_built_from_the_env(site: Path) -> None:
    page = _text(site / "environments" / "tictactoe" / "index.html")
    assert repr(parallax_zoo.make("TicTacToe-v0").action_space) in page


def test_api_reference_renders_the_docstrings(site: Path) -> None:
    from parallax import check_env

    first_line = (check_env.__doc__ or "").strip().splitlines()[0]
    assert first_line.split("`")[0].strip() in _text(site / "api" / "parallax" / "index.html")


SOURCE_FOLDERS = ("parallax", "parallax_zoo", "benchmarks")
DOCS_CITATION = re.compile(r"docs/[\w./-]+\.md")


def _sources() -> list[Path]:
    return [path for folder in SOURCE_FOLDERS for path in sorted((ROOT / folder).rglob("*.py"))]


def test_code_cites_the_project_docs_and_every_cited_page_exists() -> None:
    outside = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in _sources()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"DESIGN\.md|\bseed 00\d", line, flags=re.IGNORECASE)
    ]
    assert not outside, f"these lines cite documents outside the repository: {outside}"
    cited = {match for path in _sources() for match in DOCS_CITATION.findall(path.read_text(encoding="utf-8"))}
    assert cited, "no docstring cites a docs page"
    missing = sorted(page for page in cited if not (ROOT / page).is_file())
    assert not missing, f"docstrings cite pages that do not exist: {missing}"


def _recorded_ids_match_the_built_envs(env_ids: list[str]) -> None:
    recorded = recorded_spaces(ROOT / "docs")
    stale = {env_id: (recorded.get(env_id), built_spaces(env_id, parallax_zoo.make)) for env_id in env_ids}
    stale = {env_id: pair for env_id, pair in stale.items() if pair[0] != pair[1]}
    assert not stale, f"docs/environment_spaces.json is out of date for {sorted(stale)}: run `make docs-spaces`"


def test_recorded_spaces_match_cheap_adapted_envs() -> None:
    _recorded_ids_match_the_built_envs(["xminigrid/MiniGrid-Empty-5x5", "pgx/tic_tac_toe"])


@pytest.mark.slow
def test_recorded_spaces_match_every_adapted_env() -> None:
    adapted = [
        env_id for env_id in parallax_zoo.list_envs() if parallax_zoo.spec(env_id).kind not in BUILT_AT_SITE_BUILD
    ]
    _recorded_ids_match_the_built_envs(adapted)


def test_the_scorecard_page_sums_up_every_pinned_baseline_from_the_shipped_files(site: Path) -> None:
    from docs.scorecard_pages import namespace_scorecards, published_scores
    from parallax_zoo.catalogue.registry import packaged_registry

    published, _ = published_scores(ROOT / "docs")
    cards = namespace_scorecards(ROOT / "baselines", published, packaged_registry())
    text = _text(site / "scorecard" / "index.html")
    pinned = [env_id for env_id in parallax_zoo.list_envs() if parallax_zoo.spec(env_id).baseline is not None]
    assert sorted(i for card in cards for i in (*card.env_ids, *card.left_out)) == sorted(pinned)
    assert all(env_id in text for env_id in pinned)
    scored = [card for card in cards if card.env_ids]
    assert scored, "some namespace has baselines with seeds enough to score"
    for card in scored:
        assert f"{card.iqm:.3f} [{card.iqm_ci95[0]:.3f}, {card.iqm_ci95[1]:.3f}]" in text
        assert "<svg" in (site / "scorecard" / f"{card.namespace}.svg").read_text(encoding="utf-8")


def test_the_reproduction_page_puts_every_published_number_beside_ours(site: Path) -> None:
    from docs.scorecard_pages import published_scores
    from parallax_zoo.baselines.gpu_tier import gpu_tier

    published, sources = published_scores(ROOT / "docs")
    published_table, tier_table = re.findall(
        r"<table>(.*?)</table>", (site / "reproduction" / "index.html").read_text(encoding="utf-8"), re.S
    )
    rows = re.findall(r"<tr>(.*?)</tr>", published_table, re.S)[1:]
    assert len(rows) == len(published) and {row.source for row in published} <= set(sources)
    for row, html_row in zip(published, rows):
        cells = [_text_of(cell) for cell in re.findall(r"<td[^>]*>(.*?)</td>", html_row, re.S)]
        assert cells[0] == row.env_id and cells[1].startswith(f"{row.value:g}")
        env_spec = parallax_zoo.spec(row.env_id)
        if env_spec.baseline is None:
            assert cells[2] == "no pinned baseline yet"
        else:
            assert cells[4] == f"{env_spec.reference_score:.3f}" and cells[5].startswith("parallax-zoo train ")
    tier_rows = [_text_of(row) for row in re.findall(r"<tr>(.*?)</tr>", tier_table, re.S)[1:]]
    assert [row.split()[0] for row in tier_rows] == list(gpu_tier())  # every GPU tier id, with its estimate
    cheetah = next(row for row in tier_rows if row.startswith("mjx/CheetahRun"))
    assert "60,000,000" in cheetah and "2.3 min" in cheetah and "one A100" in cheetah


def _text_of(cell: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", cell)).strip()
