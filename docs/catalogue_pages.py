"""The documentation site's environment catalogue: one Markdown page per family, generated from registry.yaml.

A family is the native env's module (`gridworld`, `tictactoe`, ...), an
adapter's namespace (`brax`, `pgx`, ...), or for gymnax and Playground one of
their families by tag (`gymnax-minatar`, `mjx-dm-control`, ...). Each page shows the family's
rules (the env class's or adapter module's docstring), its GIF where
`docs/` has one, and per id the spaces, limits and baseline score. The site
build calls `catalogue_pages` from `docs/hooks.py`, so the pages cannot drift
from the registry (docs: "Environments").

Building some suites' envs takes seconds each, so the spaces of adapted ids
come from `docs/environment_spaces.json`, which this module writes:

    make docs-spaces   # python docs/catalogue_pages.py --write-spaces docs/environment_spaces.json

Native and gymnax ids, cheap to build, are always built when the site is,
and so is any adapted id the file does not list yet.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from parallax_zoo.atomic import write_text_atomic
from parallax_zoo.catalogue.foreign_envs import IncompatibleVersionsError
from parallax_zoo.catalogue.menagerie import MissingAssetsError
from parallax_zoo.catalogue.pins import HUB_URL
from parallax_zoo.catalogue.reference_scores import reference_score_cell
from parallax_zoo.catalogue.registry import EnvSpec, Registry, packaged_registry

CATALOGUE_FOLDER = "environments"
"""Where the generated pages sit inside the site."""

SPACES_FILE = "environment_spaces.json"
"""The recorded spaces of adapted ids, in the docs folder: {id: [action space, observation space]}."""

BUILT_AT_SITE_BUILD = ("native", "gymnax")
"""Kinds whose envs are always built when the site is: they build in milliseconds."""


@dataclass(frozen=True)
class Family:
    """Ids that share an entry-point module (native) or an adapter (foreign)."""

    name: str
    title: str
    rules: str
    specs: tuple[EnvSpec, ...]

    @property
    def page(self) -> str:
        return f"{CATALOGUE_FOLDER}/{self.name}.md"

    @property
    def label(self) -> str:
        """A short name for menus: the adapter's namespace, or the native module's title up to its colon."""
        if self.specs[0].kind != "native":
            return self.name
        return self.title.split(":")[0].strip()


SUBFAMILIES = {
    "gymnax": {"classic-control": "classic control", "minatar": "MinAtar", "bsuite": "bsuite", "misc": "misc"},
    "mjx": {"dm-control": "DM Control Suite", "locomotion": "locomotion", "manipulation": "manipulation"},
}
"""Adapters whose ids fall into families by a tag, one page each (`gymnax-minatar`): tag -> the family's title."""


def _subfamily(env_spec: EnvSpec) -> str | None:
    """The tag that puts an adapted id into one of its adapter's families, or None."""
    tags = SUBFAMILIES.get(str(env_spec.adapter), {})
    return next((tag for tag in env_spec.tags if tag in tags), None)


def family_name(env_spec: EnvSpec) -> str:
    """The native env's module name, the adapter's name, or `adapter-tag` for an adapter split into families."""
    if env_spec.entry_point is not None:
        return env_spec.entry_point.partition(":")[0].rpartition(".")[2]
    tag = _subfamily(env_spec)
    return str(env_spec.adapter) if tag is None else f"{env_spec.adapter}-{tag}"


def _module_syntax(module_name: str) -> ast.Module:
    """The parsed source of `module_name`, found without running it: an adapter's module imports its suite (Brax,
    JaxMARL, ...), seconds each, and the pages need only its docstrings."""
    spec = importlib.util.find_spec(module_name)
    if spec is None or spec.origin is None:
        raise ValueError(f"no source for the module {module_name!r} of a registered id")
    return ast.parse(Path(spec.origin).read_text(encoding="utf-8"))


def _docstring(node: ast.Module | ast.ClassDef | None) -> str:
    return (ast.get_docstring(node) or "") if node is not None else ""


def _family_rules(env_spec: EnvSpec) -> tuple[str, str]:
    """(title, rules): the module's first docstring line and the class's docstring (native), or the adapter module's."""
    if env_spec.entry_point is not None:
        module_name, _, attribute = env_spec.entry_point.partition(":")
        module = _module_syntax(module_name)
        title = _docstring(module).split("\n", 1)[0] or module_name
        env_class = next(
            (node for node in module.body if isinstance(node, ast.ClassDef) and node.name == attribute), None
        )
        return title, _docstring(env_class)
    module_name = f"parallax.adapters.{env_spec.adapter}"
    doc = _docstring(_module_syntax(module_name))
    head, _, body = doc.partition("\n")
    tag = _subfamily(env_spec)
    if tag is None:
        return head or str(env_spec.adapter), body.strip()
    rules = f"{head}\n\n{body.strip()}"
    if "menagerie" in env_spec.tags:
        rules += (
            "\n\nThese envs need MuJoCo Menagerie's robot assets; where they are missing, `make` says which "
            "and how to provide them ([the suites page](../suites.md))."
        )
    return f"{env_spec.adapter} {SUBFAMILIES[str(env_spec.adapter)][tag]}", rules


def families(registry: Registry | None = None) -> list[Family]:
    """Every family of the registry, native ones first, each with its ids sorted."""
    registry = registry or packaged_registry()
    grouped: dict[str, list[EnvSpec]] = {}
    for env_id in registry.list_envs():
        env_spec = registry.spec(env_id)
        grouped.setdefault(family_name(env_spec), []).append(env_spec)
    found = []
    for name, specs in grouped.items():
        title, rules = _family_rules(specs[0])
        found.append(Family(name=name, title=title, rules=rules, specs=tuple(specs)))
    return sorted(found, key=lambda family: (family.specs[0].kind != "native", family.name))


def built_spaces(env_id: str, make: Callable[[str], Any]) -> tuple[str, str]:
    """(action space, observation space) of the built env as their reprs, or why it cannot be built here."""
    try:
        env = make(env_id)
    except ImportError as error:
        reason = f"not built here: {str(error).splitlines()[0]}"
        return reason, reason
    except MissingAssetsError as error:
        reason = f"not built here: needs MuJoCo Menagerie's robot assets ({', '.join(error.folders)})"
        return reason, reason
    except IncompatibleVersionsError as error:
        reason = f"not built here: {str(error).split(':')[0]}"
        return reason, reason
    return repr(env.action_space), repr(env.observation_space)


def recorded_spaces(docs_folder: Path) -> dict[str, tuple[str, str]]:
    """The spaces `docs/environment_spaces.json` records, by id; empty where there is no file."""
    path = docs_folder / SPACES_FILE
    if not path.is_file():
        return {}
    return {env_id: (pair[0], pair[1]) for env_id, pair in json.loads(path.read_text(encoding="utf-8")).items()}


def _spaces(env_spec: EnvSpec, make: Callable[[str], Any], recorded: Mapping[str, tuple[str, str]]) -> tuple[str, str]:
    if env_spec.kind in BUILT_AT_SITE_BUILD or env_spec.id not in recorded:
        return built_spaces(env_spec.id, make)
    return recorded[env_spec.id]


def _score(env_spec: EnvSpec) -> str:
    return reference_score_cell(env_spec)


def _one_line_code(text: str) -> str:
    """`text` as inline code on one line: a multi-line repr (a large Box's bounds) would split the table row."""
    return f"`{' '.join(text.split())}`"


def _gif_name(env_id: str) -> str:
    return env_id.replace("/", "-") + ".gif"


def family_page(
    family: Family, docs_folder: Path, make: Callable[[str], Any], recorded: Mapping[str, tuple[str, str]]
) -> str:
    """The Markdown page of one family."""
    lines = [f"# {family.title}", ""]
    if family.rules:
        lines += [family.rules, ""]
    for env_spec in family.specs:
        lines += [f"## `{env_spec.id}`", ""]
        gif = _gif_name(env_spec.id)
        if (docs_folder / gif).is_file():
            lines += [f"![{env_spec.id}](../{gif})", ""]
        action_space, observation_space = _spaces(env_spec, make, recorded)
        pin = env_spec.baseline
        rows = [
            ("kind", env_spec.kind),
            ("agents", str(env_spec.num_agents)),
            ("max_steps", str(env_spec.max_steps or "-")),
            ("action space", _one_line_code(action_space)),
            ("observation space", _one_line_code(observation_space)),
            ("tags", ", ".join(env_spec.tags) or "-"),
            ("opponents", ", ".join(env_spec.opponents) or "-"),
            ("baseline", "-" if pin is None else f"`{pin.repo_id}` at `{pin.revision}`"),
            ("reference score", _score(env_spec)),
        ]
        lines += ["| | |", "|---|---|"] + [f"| {name} | {value} |" for name, value in rows] + [""]
    return "\n".join(lines)


def _baseline_link(env_spec: EnvSpec) -> str:
    pin = env_spec.baseline
    return "-" if pin is None else f"[{pin.repo_id}]({HUB_URL}/{pin.repo_id})"


def index_page(found: list[Family]) -> str:
    """The catalogue's front page: every id, by family, with its kind, agents, time limit, reference score and the
    Hub repo of its pinned baseline."""
    lines = [
        "# Environments",
        "",
        "Every registered id, one page per family, generated from `registry.yaml` when the site is built.",
        "The reference score is the pinned baseline's mean under the fixed evaluation protocol",
        "([Evaluation](../evaluation.md)); `-` where no baseline is pinned. A zero-sum game's score is its mean",
        "result against the opponent named (+1 a win, 0 a draw, -1 a loss). The baseline column links each",
        "pinned baseline's Hub repo.",
        "",
        "| family | id | kind | agents | max_steps | reference score | baseline |",
        "|---|---|---|---|---|---|---|",
    ]
    for family in found:
        for env_spec in family.specs:
            lines.append(
                f"| [{family.name}]({family.name}.md) | `{env_spec.id}` | {env_spec.kind} | {env_spec.num_agents} | "
                f"{env_spec.max_steps or '-'} | {_score(env_spec)} | {_baseline_link(env_spec)} |"
            )
    return "\n".join(lines) + "\n"


def catalogue_pages(docs_folder: Path, registry: Registry | None = None) -> Iterator[tuple[str, str]]:
    """(site path, Markdown) for the catalogue index and every family page."""
    registry = registry or packaged_registry()
    found = families(registry)
    yield f"{CATALOGUE_FOLDER}/index.md", index_page(found)
    recorded = recorded_spaces(docs_folder)
    for family in found:
        yield family.page, family_page(family, docs_folder, registry.make, recorded)


def write_spaces(path: Path, registry: Registry | None = None) -> dict[str, tuple[str, str]]:
    """Builds every adapted id and records its spaces in `path` (sorted JSON, one id a line)."""
    registry = registry or packaged_registry()
    spaces = {
        env_id: built_spaces(env_id, registry.make)
        for env_id in registry.list_envs()
        if registry.spec(env_id).kind not in BUILT_AT_SITE_BUILD
    }
    lines = [f"  {json.dumps(env_id)}: {json.dumps(list(pair))}" for env_id, pair in sorted(spaces.items())]
    write_text_atomic(path, "{\n" + ",\n".join(lines) + "\n}\n")
    return spaces


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The docs catalogue's recorded spaces of adapted envs.")
    parser.add_argument(
        "--write-spaces", type=Path, required=True, metavar="FILE", help="build every adapted id and record its spaces"
    )
    args = parser.parse_args(argv)
    spaces = write_spaces(args.write_spaces)
    print(f"wrote {args.write_spaces}: the spaces of {len(spaces)} adapted ids")
    return 0


if __name__ == "__main__":
    sys.exit(main())
