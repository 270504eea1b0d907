"""The documentation site's environment catalogue: one Markdown page per family, generated from registry.yaml.

A family is the native env's module (`gridworld`, `tictactoe`, ...) or an
adapter's namespace (`gymnax`, `brax`, ...). Each page shows the family's
rules (the env class's or adapter module's docstring), its GIF where
`docs/` has one, and per id the spaces, limits and baseline score. The site
build calls `catalogue_pages` from `docs/hooks.py`, so the pages cannot drift
from the registry (docs: "Environments").
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from parallax_zoo.catalogue.registry import EnvSpec, Registry, packaged_registry

CATALOGUE_FOLDER = "environments"
"""Where the generated pages sit inside the site."""


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


def family_name(env_spec: EnvSpec) -> str:
    """The native env's module name, or the adapter's name."""
    if env_spec.entry_point is not None:
        return env_spec.entry_point.partition(":")[0].rpartition(".")[2]
    return str(env_spec.adapter)


def _docstring(target: Any) -> str:
    return inspect.cleandoc(getattr(target, "__doc__", None) or "")


def _family_rules(env_spec: EnvSpec) -> tuple[str, str]:
    """(title, rules): the module's first docstring line and the class's docstring (native), or the adapter module's."""
    if env_spec.entry_point is not None:
        module_name, _, attribute = env_spec.entry_point.partition(":")
        module = importlib.import_module(module_name)
        title = _docstring(module).split("\n", 1)[0] or module_name
        return title, _docstring(getattr(module, attribute, None))
    module_name = f"parallax.adapters.{env_spec.adapter}"
    try:
        doc = _docstring(importlib.import_module(module_name))
    except ImportError as error:
        return f"{env_spec.adapter} (adapted)", f"The `{module_name}` adapter could not be imported here: {error}."
    head, _, body = doc.partition("\n")
    return head or str(env_spec.adapter), body.strip()


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


def _spaces(env_spec: EnvSpec, make: Callable[[str], Any]) -> tuple[str, str]:
    """(action space, observation space) as their reprs, or why the env cannot be built here."""
    try:
        env = make(env_spec.id)
    except ImportError as error:
        reason = f"not built here: {str(error).splitlines()[0]}"
        return reason, reason
    return repr(env.action_space), repr(env.observation_space)


def _score(env_spec: EnvSpec) -> str:
    return "-" if env_spec.reference_score is None else f"{env_spec.reference_score:.3f}"


def _gif_name(env_id: str) -> str:
    return env_id.replace("/", "-") + ".gif"


def family_page(family: Family, docs_folder: Path, make: Callable[[str], Any]) -> str:
    """The Markdown page of one family."""
    lines = [f"# {family.title}", ""]
    if family.rules:
        lines += [family.rules, ""]
    for env_spec in family.specs:
        lines += [f"## `{env_spec.id}`", ""]
        gif = _gif_name(env_spec.id)
        if (docs_folder / gif).is_file():
            lines += [f"![{env_spec.id}](../{gif})", ""]
        action_space, observation_space = _spaces(env_spec, make)
        pin = env_spec.baseline
        rows = [
            ("kind", env_spec.kind),
            ("agents", str(env_spec.num_agents)),
            ("max_steps", str(env_spec.max_steps or "-")),
            ("action space", f"`{action_space}`"),
            ("observation space", f"`{observation_space}`"),
            ("tags", ", ".join(env_spec.tags) or "-"),
            ("opponents", ", ".join(env_spec.opponents) or "-"),
            ("baseline", "-" if pin is None else f"`{pin.repo_id}` at `{pin.revision}`"),
            ("reference score", _score(env_spec)),
        ]
        lines += ["| | |", "|---|---|"] + [f"| {name} | {value} |" for name, value in rows] + [""]
    return "\n".join(lines)


def index_page(found: list[Family]) -> str:
    """The catalogue's front page: every id, by family, with its kind, agents and reference score."""
    lines = [
        "# Environments",
        "",
        "Every registered id, one page per family, generated from `registry.yaml` when the site is built.",
        "The reference score is the pinned baseline's mean under the fixed evaluation protocol",
        "([Evaluation](../evaluation.md)); `-` where no baseline is pinned.",
        "",
        "| family | id | kind | agents | max_steps | reference score |",
        "|---|---|---|---|---|---|",
    ]
    for family in found:
        for env_spec in family.specs:
            lines.append(
                f"| [{family.name}]({family.name}.md) | `{env_spec.id}` | {env_spec.kind} | {env_spec.num_agents} | "
                f"{env_spec.max_steps or '-'} | {_score(env_spec)} |"
            )
    return "\n".join(lines) + "\n"


def catalogue_pages(docs_folder: Path, registry: Registry | None = None) -> Iterator[tuple[str, str]]:
    """(site path, Markdown) for the catalogue index and every family page."""
    registry = registry or packaged_registry()
    found = families(registry)
    yield f"{CATALOGUE_FOLDER}/index.md", index_page(found)
    for family in found:
        yield family.page, family_page(family, docs_folder, registry.make)
