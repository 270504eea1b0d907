"""README.md is a page one reads through (at most 200 lines; the rest lives in docs/), and its table of suites
gives each namespace's id and baseline counts as registry.yaml has them."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import parallax_zoo

README = Path(__file__).resolve().parents[2] / "README.md"
NATIVE = "(none)"
SUITE_ROW = re.compile(
    r"^\| (`(?P<namespace>[\w-]+)/`|(?P<native>\(none\))) \|[^|]*\| (?P<ids>\d+) \| (?P<baselines>\d+) \|"
)


def readme_suite_counts() -> dict[str, tuple[int, int]]:
    """namespace (NATIVE for the zoo's own ids) -> (ids, baselines), as README's table of suites states them."""
    found = {}
    for line in README.read_text(encoding="utf-8").splitlines():
        row = SUITE_ROW.match(line)
        if row is not None:
            found[row["namespace"] or NATIVE] = (int(row["ids"]), int(row["baselines"]))
    return found


def registry_suite_counts() -> dict[str, tuple[int, int]]:
    ids: Counter[str] = Counter()
    baselines: Counter[str] = Counter()
    for env_id in parallax_zoo.list_envs():
        namespace = env_id.split("/")[0] if "/" in env_id else NATIVE
        ids[namespace] += 1
        baselines[namespace] += parallax_zoo.spec(env_id).baseline is not None
    return {namespace: (ids[namespace], baselines[namespace]) for namespace in ids}


def test_the_readme_table_of_suites_counts_what_the_registry_holds():
    assert readme_suite_counts() == registry_suite_counts()


def test_the_readme_stays_short():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines; move the detail into a page under docs/"
