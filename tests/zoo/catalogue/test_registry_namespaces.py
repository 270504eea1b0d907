"""Ids grouped by namespace: `list_envs(namespace=...)`, `namespace_of`, and `parallax-zoo list [NAMESPACE]`."""

from __future__ import annotations

import pytest

import parallax_zoo
from parallax_zoo.catalogue.registry import EnvNotFoundError, Registry, default_registry, namespace_of
from parallax_zoo.cli.main import main

SMALL_REGISTRY = """
envs:
  - id: Zed-v1
    entry_point: some.module:Zed
  - id: pgx/2048
    adapter: pgx
    foreign_id: '2048'
  - id: pgx/go_9x9
    adapter: pgx
    foreign_id: go_9x9
    multi_agent: true
    num_agents: 2
  - id: jumanji/Snake-v1
    adapter: jumanji
    foreign_id: Snake-v1
"""


def test_namespace_is_the_part_before_the_slash_and_native_without_one():
    assert namespace_of("pgx/go_9x9") == "pgx"
    assert namespace_of("xminigrid/MiniGrid-DoorKey-5x5") == "xminigrid"
    assert namespace_of("Race-v0") == "native"


def test_list_envs_filters_by_namespace_and_names_the_known_ones():
    registry = Registry.from_yaml(SMALL_REGISTRY)
    assert registry.namespaces() == ["native", "jumanji", "pgx"]
    assert registry.list_envs(namespace="pgx") == ["pgx/2048", "pgx/go_9x9"]
    assert registry.list_envs(namespace="native") == ["Zed-v1"]
    with pytest.raises(
        EnvNotFoundError, match=r"namespace 'pgy'. Did you mean: 'pgx'\? Namespaces: native, jumanji, pgx"
    ):
        registry.list_envs(namespace="pgy")


def test_the_table_has_one_section_per_namespace_native_first():
    table = Registry.from_yaml(SMALL_REGISTRY).table()
    sections = table.split("\n\n")
    assert [section.splitlines()[0] for section in sections] == ["native (1 env)", "jumanji (1 env)", "pgx (2 envs)"]
    assert [line.split()[0] for line in sections[2].splitlines()[3:]] == ["pgx/2048", "pgx/go_9x9"]


def test_the_package_registers_every_suites_ids_under_its_namespace():
    counts = {
        namespace: len(parallax_zoo.list_envs(namespace=namespace)) for namespace in default_registry().namespaces()
    }
    assert counts["pgx"] == 20 and counts["jumanji"] == 25 and counts["xminigrid"] == 44
    assert counts["gymnax"] == 25 and counts["brax"] == 11 and counts["mjx"] == 25 + 29
    assert all(parallax_zoo.spec(env_id).adapter == "pgx" for env_id in parallax_zoo.list_envs(namespace="pgx"))


def test_cli_list_filters_by_a_namespace(capsys):
    assert main(["list", "jumanji"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "jumanji (25 envs)"
    listed = [line.split()[0] for line in out.splitlines()[3:] if line.strip()]
    assert listed == parallax_zoo.list_envs(namespace="jumanji")


def test_cli_list_groups_every_id(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    titles = [block.splitlines()[0] for block in out.strip().split("\n\n")]
    assert titles[0].startswith("native (") and any(title.startswith("pgx (20 envs)") for title in titles)
    rows = [line.split()[0] for block in out.strip().split("\n\n") for line in block.splitlines()[3:]]
    assert sorted(rows) == parallax_zoo.list_envs()


def test_cli_list_of_an_unknown_namespace_is_a_one_line_user_error(capsys):
    assert main(["list", "jumanjii"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Did you mean: 'jumanji'" in err
