"""The README's table of environments, generated from registry.yaml so it cannot drift from the catalogue.

The table sits in README.md between `<!-- envs:start -->` and `<!-- envs:end -->`.

    python -m parallax_zoo.catalogue.env_table                    # print the table
    python -m parallax_zoo.catalogue.env_table --write README.md  # regenerate the README's table in place
    python -m parallax_zoo.catalogue.env_table --check README.md  # exit 1 if the README's table is stale
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from parallax_zoo.atomic import write_text_atomic
from parallax_zoo.catalogue.player_names import RANDOM
from parallax_zoo.catalogue.registry import EnvSpec, Registry, packaged_registry

START_MARKER = "<!-- envs:start -->"
END_MARKER = "<!-- envs:end -->"
HUB_URL = "https://huggingface.co"
COLUMNS = ("id", "kind", "agents", "max_steps", "reference score", "baseline")


class MarkerError(ValueError):
    """A document lacks the env-table markers, or has them out of order or more than once."""


UNBEATEN_OPPONENTS = ("perfect",)
"""Scripted opponents that play a solved game and never lose: a mean of 0 against one is a draw in every game."""


def reference_score_cell(env_spec: EnvSpec) -> str:
    """The reference score as a table shows it: a zero-sum game's names the opponent it is the mean result against
    (+1 win, 0 draw, -1 loss), and a 0 against an opponent that never loses reads as what it is, all draws."""
    score = env_spec.reference_score
    if score is None:
        return "-"
    if "zero-sum" not in env_spec.tags:
        return f"{score:.3f}"
    opponent = next(iter(env_spec.opponents), RANDOM)  # the protocol's first opponent
    if score == 0.0 and opponent in UNBEATEN_OPPONENTS:
        return f"{score:.3f} vs {opponent}: every game drawn, the best possible"
    return f"{score:.3f} vs {opponent}"


def _row(env_spec: EnvSpec) -> tuple[str, ...]:
    score = reference_score_cell(env_spec)
    pin = env_spec.baseline
    baseline = "-" if pin is None else f"[{pin.repo_id}]({HUB_URL}/{pin.repo_id})"
    return (f"`{env_spec.id}`", env_spec.kind, str(env_spec.num_agents), str(env_spec.max_steps or "-"), score, baseline)


def markdown_table(columns: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A Markdown table: the header, the rule, one line per row; a `|` inside a cell is escaped."""
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

    return "\n".join([line(columns), "|" + "---|" * len(columns), *map(line, rows)]) + "\n"


def env_table(registry: Registry | None = None) -> str:
    """The Markdown table of every registered env (sorted by id): id, kind, agents, max_steps, reference score, baseline repo."""
    registry = registry or packaged_registry()
    return markdown_table(COLUMNS, (_row(registry.spec(env_id)) for env_id in registry.list_envs()))


def _marker_span(document: str) -> tuple[int, int]:
    """The character range strictly between the two markers; a clear error if they are not there exactly once, in order."""
    counts = {marker: document.count(marker) for marker in (START_MARKER, END_MARKER)}
    if any(count != 1 for count in counts.values()):
        raise MarkerError(
            f"expected exactly one {START_MARKER!r} and one {END_MARKER!r} in the document, found {counts}; "
            "put the two markers on their own lines where the env table belongs"
        )
    start = document.index(START_MARKER) + len(START_MARKER)
    end = document.index(END_MARKER)
    if end < start:
        raise MarkerError(f"{END_MARKER!r} comes before {START_MARKER!r}; swap them")
    return start, end


def table_in(document: str) -> str:
    """The text between the markers, without the blank lines that surround the table."""
    start, end = _marker_span(document)
    return document[start:end].strip("\n") + "\n"


def with_table(document: str, table: str) -> str:
    """`document` with the text between the markers replaced by `table`, set off by blank lines."""
    start, end = _marker_span(document)
    return document[:start] + "\n\n" + table.strip("\n") + "\n\n" + document[end:]


def main(argv: Sequence[str] | None = None) -> int:
    """Print the table, write it into a document, or check that a document's table is current."""
    parser = argparse.ArgumentParser(prog="python -m parallax_zoo.catalogue.env_table", description="The README's table of environments, from registry.yaml.")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--write", metavar="PATH", type=Path, help="replace the table between the markers in PATH")
    action.add_argument("--check", metavar="PATH", type=Path, help="exit 1 if PATH's table differs from the registry")
    args = parser.parse_args(argv)
    table = env_table()
    if args.write is None and args.check is None:
        sys.stdout.write(table)
        return 0
    path: Path = args.write or args.check
    document = path.read_text(encoding="utf-8")
    try:
        if args.write is not None:
            write_text_atomic(path, with_table(document, table))
            print(f"wrote the env table ({table.count(chr(10)) - 2} envs) into {path}")
            return 0
        if table_in(document) != table:
            print(f"{path}: the env table is stale; run `python -m parallax_zoo.catalogue.env_table --write {path}`", file=sys.stderr)
            return 1
    except MarkerError as error:
        print(f"{path}: {error}", file=sys.stderr)
        return 2
    print(f"{path}: the env table matches registry.yaml")
    return 0


if __name__ == "__main__":
    sys.exit(main())
