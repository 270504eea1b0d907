"""The folder tree is the architecture (docs/layout.md): each folder imports only the layers below it.

Every import in every module is read with `ast`, including imports inside
functions and `importlib.import_module("...")` with a literal name, so a lazy
import cannot slip past.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

BASE = ("parallax", "parallax_zoo.atomic", "parallax_zoo.errors", "parallax_zoo.locking")
"""What every room of the zoo may import: the protocol and the zoo's standard-library-only modules."""

ALLOWED: dict[str, tuple[str, ...]] = {
    "parallax": ("parallax",),
    "parallax_zoo/atomic.py": (),
    "parallax_zoo/errors.py": (),
    "parallax_zoo/locking.py": (),
    "parallax_zoo/envs": ("parallax", "parallax_zoo.envs"),
    "parallax_zoo/agents": ("parallax", "parallax_zoo.envs", "parallax_zoo.catalogue", "parallax_zoo.agents"),
    "parallax_zoo/catalogue": (*BASE, "parallax_zoo.catalogue"),
    "parallax_zoo/policies": (*BASE, "parallax_zoo.agents", "parallax_zoo.catalogue", "parallax_zoo.policies"),
    "parallax_zoo/judging": (
        *BASE,
        "parallax_zoo.envs",
        "parallax_zoo.agents",
        "parallax_zoo.catalogue",
        "parallax_zoo.policies",
        "parallax_zoo.judging",
    ),
    "parallax_zoo/baselines": (
        *BASE,
        "parallax_zoo.envs",
        "parallax_zoo.agents",
        "parallax_zoo.catalogue",
        "parallax_zoo.policies",
        "parallax_zoo.judging",
        "parallax_zoo.baselines",
    ),
    "parallax_zoo/cli": ("parallax", "parallax_zoo"),
}
"""Each layer (a folder, or one module) -> the project packages its modules may import."""

PROJECT = ("parallax", "parallax_zoo")


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(source: str, package: str) -> set[str]:
    """Every module `source` (a module of `package`) imports: `import`, `from ... import` (relative ones
    resolved) and `importlib.import_module("literal")`; `from a import b` counts both `a` and `a.b`."""
    tree = ast.parse(source)
    package_parts = package.split(".")
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package_parts[: len(package_parts) - node.level + 1] if node.level else []
            stem = ".".join([*base, *([node.module] if node.module else [])])
            found.add(stem)
            found.update(f"{stem}.{alias.name}" for alias in node.names)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.add(node.args[0].value)
    return found


def is_within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def project_imports(path: Path) -> set[str]:
    """The modules of `parallax` and `parallax_zoo` that the file at `path` imports."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    imported = imported_modules(path.read_text(encoding="utf-8"), package)
    return {module for module in imported if any(is_within(module, top) for top in PROJECT)}


def layer_files(layer: str) -> list[Path]:
    root = REPO / layer
    return [root] if root.suffix == ".py" else sorted(root.rglob("*.py"))


def violations(layer: str) -> list[str]:
    allowed = ALLOWED[layer]
    found = []
    for path in layer_files(layer):
        for name in sorted(project_imports(path)):
            if not any(is_within(name, package) for package in allowed):
                found.append(f"{path.relative_to(REPO)} imports {name}")
    return found


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layer_imports_only_the_layers_below_it(layer: str) -> None:
    assert layer_files(layer), f"{layer} holds no Python files; the layer table is out of date"
    assert violations(layer) == [], f"{layer} may import only {ALLOWED[layer] or 'the standard library'}"


def test_every_module_of_the_zoo_sits_in_a_layer() -> None:
    """A new folder or top-level module gets a line in the layer table (and in docs/layout.md's tree)."""
    top = {"parallax_zoo/__init__.py"}
    placed = {path for layer in ALLOWED for path in layer_files(layer)}
    unplaced = [
        str(path.relative_to(REPO))
        for path in sorted((REPO / "parallax_zoo").rglob("*.py"))
        if path not in placed and str(path.relative_to(REPO)) not in top
    ]
    assert unplaced == []


def test_the_layout_page_names_every_room_and_every_extra() -> None:
    """docs/layout.md's tree has a line for each room of the layer table and names every extra of pyproject.toml."""
    import tomllib

    tree = (REPO / "docs" / "layout.md").read_text(encoding="utf-8").split("```")[1]
    lines = [line.strip() for line in tree.splitlines()]
    rooms = [layer.removeprefix("parallax_zoo/") for layer in ALLOWED if layer.startswith("parallax_zoo/")]
    missing_rooms = [room for room in rooms if not any(line.startswith(room.removesuffix(".py")) for line in lines)]
    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    missing_extras = [extra for extra in extras if not re.search(rf"\b{extra}\b", tree)]
    assert (missing_rooms, missing_extras) == ([], [])


def test_the_reader_sees_lazy_relative_and_importlib_imports() -> None:
    """The imports a layer could hide: inside a function, relative, and through importlib."""
    source = (
        "import importlib\n"
        "def late():\n"
        "    from parallax_zoo.catalogue import registry\n"
        "    from ..policies import hub\n"
        "    from . import ppo\n"
        "    return importlib.import_module('parallax_zoo')\n"
    )
    assert imported_modules(source, "parallax_zoo.agents") == {
        "importlib",
        "parallax_zoo.catalogue",
        "parallax_zoo.catalogue.registry",
        "parallax_zoo.policies",
        "parallax_zoo.policies.hub",
        "parallax_zoo.agents",
        "parallax_zoo.agents.ppo",
        "parallax_zoo",
    }
