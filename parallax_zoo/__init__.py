"""Parallax Zoo: native JAX environments, a registry of them and of adapted ones, and their baselines.

`make`, `spec`, `list_envs` and `register` need only jax; `load_baseline`,
`evaluate` and `leaderboard` load the `train` and `hub` extras on first use.
The single-agent ids also appear in Gymnasium's registry as `parallax_zoo/<id>`
once Gymnasium is imported (`parallax_zoo.catalogue.gymnasium_ids`).
The package's folders are its layers (docs/layout.md).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from types import ModuleType
from typing import TYPE_CHECKING, Any

from parallax_zoo.catalogue.gymnasium_ids import register_when_gymnasium_loads
from parallax_zoo.catalogue.registry import EnvSpec, list_envs, make, register, registry_table, spec
from parallax_zoo.version import __version__

if TYPE_CHECKING:
    from parallax_zoo.scoring.evaluation import evaluate
    from parallax_zoo.scoring.leaderboard import leaderboard
    from parallax_zoo.scoring.loading import load_baseline

_LAZY = {
    "evaluate": "parallax_zoo.scoring.evaluation",
    "leaderboard": "parallax_zoo.scoring.leaderboard",
    "load_baseline": "parallax_zoo.scoring.loading",
}


register_when_gymnasium_loads()


register_when_gymnasium_loads()


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'parallax_zoo' has no attribute {name!r}")


MOVED_MODULES = {
    "parallax_zoo.registry": "parallax_zoo.catalogue.registry",
    "parallax_zoo.registry_pins": "parallax_zoo.catalogue.pinning",
    "parallax_zoo.foreign_envs": "parallax_zoo.catalogue.foreign_envs",
    "parallax_zoo.signatures": "parallax_zoo.catalogue.signatures",
    "parallax_zoo.env_table": "parallax_zoo.catalogue.env_table",
    "parallax_zoo.hub": "parallax_zoo.scoring.hub",
    "parallax_zoo.evaluation": "parallax_zoo.scoring.evaluation",
    "parallax_zoo.loading": "parallax_zoo.scoring.loading",
    "parallax_zoo.baselines": "parallax_zoo.scoring.baselines",
    "parallax_zoo.recording": "parallax_zoo.scoring.recording",
    "parallax_zoo.agents.checkpoint": "parallax_zoo.scoring.checkpoint",
}
"""Module paths of the previous release -> where the module lives now; the old paths import with a
DeprecationWarning for one release. (`parallax_zoo.leaderboard` is the function now; its module is
`parallax_zoo.scoring.leaderboard`.)"""


class _MovedModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports an old module path as the module's new one (the same module object), with a DeprecationWarning."""

    def find_spec(self, fullname: str, path: Any = None, target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        return importlib.util.spec_from_loader(fullname, self) if fullname in MOVED_MODULES else None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        new = MOVED_MODULES[module.__name__]
        warnings.warn(f"{module.__name__} has moved to {new}; import it from there", DeprecationWarning, stacklevel=2)
        sys.modules[module.__name__] = importlib.import_module(new)


if not any(isinstance(finder, _MovedModuleFinder) for finder in sys.meta_path):
    sys.meta_path.insert(0, _MovedModuleFinder())


__all__ = [
    "EnvSpec", "__version__", "evaluate", "leaderboard", "list_envs", "load_baseline", "make", "register",
    "registry_table", "spec",
]


def __dir__() -> list[str]:
    """The public API only (`__all__`), not the names this module imports to build it."""
    return sorted(__all__)
