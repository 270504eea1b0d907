"""The env table is generated from registry.yaml (README.md holds none: the docs site's catalogue is built from the
registry, tests/test_docs.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from parallax_zoo.catalogue.env_table import END_MARKER, START_MARKER, MarkerError, env_table, main, table_in, with_table
from parallax_zoo.catalogue.registry import Registry

REPO = Path(__file__).resolve().parent.parent
REGISTRY_YAML = REPO / "parallax_zoo" / "catalogue" / "registry.yaml"
DIGEST = "ab" * 32

SMALL_REGISTRY = f"""
envs:
  - id: Zed-v1
    entry_point: some.module:Zed
    max_steps: 20
  - id: Alpha-v0
    entry_point: some.module:Alpha
    multi_agent: true
    num_agents: 2
    baseline: {{repo_id: org/alpha, files: {{model.safetensors: {DIGEST}}}}}
    reference_score: 0.87654
  - id: gymnax/CartPole-v1
    adapter: gymnax
    foreign_id: CartPole-v1
"""


def test_table_rows_are_sorted_ids_with_kind_agents_limit_score_and_baseline_link():
    table = env_table(Registry.from_yaml(SMALL_REGISTRY))
    assert table.splitlines() == [
        "| id | kind | agents | max_steps | reference score | baseline |",
        "|---|---|---|---|---|---|",
        "| `Alpha-v0` | native | 2 | - | 0.877 | [org/alpha](https://huggingface.co/org/alpha) |",
        "| `Zed-v1` | native | 1 | 20 | - | - |",
        "| `gymnax/CartPole-v1` | gymnax | 1 | - | - | - |",
    ]


def test_every_packaged_env_has_a_row():
    registry_ids = set(Registry.from_yaml(REGISTRY_YAML.read_text(encoding="utf-8")).list_envs())
    rows = env_table().splitlines()[2:]
    assert {row.split("`")[1] for row in rows} == registry_ids


def test_with_table_replaces_only_between_the_markers_and_is_idempotent():
    document = f"# Title\n\nintro\n\n{START_MARKER}\nold table\n{END_MARKER}\n\n## Next\n"
    updated = with_table(document, "| new |\n")
    assert updated == f"# Title\n\nintro\n\n{START_MARKER}\n\n| new |\n\n{END_MARKER}\n\n## Next\n"
    assert with_table(updated, "| new |\n") == updated
    assert table_in(updated) == "| new |\n"


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ("no markers at all\n", "exactly one"),
        (f"{START_MARKER}\n{START_MARKER}\n{END_MARKER}\n", "exactly one"),
        (f"{END_MARKER}\ntable\n{START_MARKER}\n", "comes before"),
    ],
)
def test_misplaced_markers_say_what_to_fix(document: str, problem: str):
    with pytest.raises(MarkerError, match=problem):
        with_table(document, "| t |\n")


def test_command_checks_then_writes_a_stale_document(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    path = tmp_path / "README.md"
    path.write_text(f"# Zoo\n\n{START_MARKER}\n| stale |\n{END_MARKER}\n")
    assert main(["--check", str(path)]) == 1
    assert "stale" in capsys.readouterr().err
    assert main(["--write", str(path)]) == 0
    assert table_in(path.read_text()) == env_table()
    assert main(["--check", str(path)]) == 0
    assert [p.name for p in tmp_path.iterdir()] == ["README.md"]


def test_command_reports_missing_markers(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    path = tmp_path / "README.md"
    path.write_text("# Zoo without markers\n")
    assert main(["--write", str(path)]) == 2
    assert "exactly one" in capsys.readouterr().err
    assert path.read_text() == "# Zoo without markers\n"


def test_a_zero_sum_score_names_its_opponent_and_a_draw_against_perfect_play_says_so():
    rows = {line.split(" | ")[0].strip("| `"): line for line in env_table().splitlines()[2:]}
    assert "| 0.000 vs perfect: every game drawn, the best possible |" in rows["TicTacToe-v0"]
    assert "| 1.000 vs tactical |" in rows["ConnectFour-v0"] and " vs " not in rows["GridWorld-v0"]


def test_a_space_whose_repr_spans_lines_stays_in_one_table_row():
    import parallax_zoo
    from parallax_zoo.catalogue.catalogue_pages import families, family_page, recorded_spaces
    from parallax_zoo.catalogue.registry import packaged_registry

    docs = Path(__file__).resolve().parents[1] / "docs"
    recorded = recorded_spaces(docs)
    assert "\n" in recorded["pgx/backgammon"][1]  # Box bounds printed by numpy over two lines
    pgx = next(family for family in families(packaged_registry()) if family.name == "pgx")
    page = family_page(pgx, docs, parallax_zoo.make, recorded)
    section = page.split("## `pgx/backgammon`")[1].split("\n## ")[0]
    row = next(line for line in section.splitlines() if line.startswith("| observation space |"))
    assert row.endswith("(2, 34), int32)` |") and row.count("`") == 2, row
