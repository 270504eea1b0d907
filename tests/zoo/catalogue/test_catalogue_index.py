"""The site's table of every environment (the catalogue index, generated from registry.yaml at each docs build) lists
every registered id with its kind, agents, limit, reference score and baseline repo."""

from __future__ import annotations

from pathlib import Path

from docs.catalogue_pages import families, family_page, index_page, recorded_spaces
from parallax_zoo.catalogue.pins import HUB_URL
from parallax_zoo.catalogue.reference_scores import reference_score_cell
from parallax_zoo.catalogue.registry import Registry, packaged_registry

REPO = Path(__file__).resolve().parents[3]
REGISTRY_YAML = REPO / "parallax_zoo" / "catalogue" / "registry.yaml"
DOCS = REPO / "docs"


def _rows() -> dict[str, list[str]]:
    """The index's rows by id: the cells between the pipes."""
    lines = index_page(families(packaged_registry())).splitlines()
    rows = [line for line in lines if line.startswith("| [")]
    return {row.split("`")[1]: [cell.strip() for cell in row.strip("|").split(" | ")] for row in rows}


def test_every_packaged_env_has_one_row_with_its_limit_score_and_baseline_repo():
    registry = Registry.from_yaml(REGISTRY_YAML.read_text(encoding="utf-8"))
    rows = _rows()
    assert set(rows) == set(registry.list_envs())
    for env_id, cells in rows.items():
        env_spec = registry.spec(env_id)
        pin = env_spec.baseline
        assert cells[2:] == [
            env_spec.kind,
            str(env_spec.num_agents),
            str(env_spec.max_steps or "-"),
            reference_score_cell(env_spec),
            "-" if pin is None else f"[{pin.repo_id}]({HUB_URL}/{pin.repo_id})",
        ], env_id


def test_a_zero_sum_score_names_its_opponent_and_a_draw_against_perfect_play_says_so():
    rows = _rows()
    assert rows["TicTacToe-v0"][5] == "0.000 vs perfect: every game drawn, the best possible"
    connect_four = packaged_registry().spec("ConnectFour-v0").reference_score
    assert rows["ConnectFour-v0"][5] == f"{connect_four:.3f} vs tactical" and " vs " not in rows["GridWorld-v0"][5]


def test_a_space_whose_repr_spans_lines_stays_in_one_table_row():
    import parallax_zoo

    recorded = recorded_spaces(DOCS)
    assert "\n" in recorded["pgx/backgammon"][1]  # Box bounds printed by numpy over two lines
    pgx = next(family for family in families(packaged_registry()) if family.name == "pgx")
    page = family_page(pgx, DOCS, parallax_zoo.make, recorded)
    section = page.split("## `pgx/backgammon`")[1].split("\n## ")[0]
    row = next(line for line in section.splitlines() if line.startswith("| observation space |"))
    assert row.endswith("(2, 34), int32)` |") and row.count("`") == 2, row
