"""Importing a peer's training script from a checkout of its public repository, at run time.

Peers' scripts import libraries for other environments or for experiment
plumbing (logging, config files) at the top. `stand_ins` puts small modules
under those names while the script is imported, and takes them out of
`sys.modules` again afterwards, so nothing else in the process sees them.
Nothing of a peer is copied into this project.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import types
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any


class StandIn(types.ModuleType):
    """A module whose given attributes are set and whose other attributes fail when used."""

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        return type(attr, (), {"__init__": _unused(f"{self.__name__}.{attr}")})


def _unused(what: str) -> Callable[..., None]:
    def fail(*_: Any, **__: Any) -> None:
        raise RuntimeError(f"{what} is a stand-in: the benchmark's runs do not use it")

    return fail


@contextlib.contextmanager
def stand_ins(modules: Mapping[str, Mapping[str, Any]]) -> Iterator[None]:
    """Modules `name -> attributes` in `sys.modules` for the duration (parents get their children set)."""
    saved = {name: sys.modules.get(name) for name in modules}
    made = {name: StandIn(name) for name in modules}
    for name, module in made.items():
        for attr, value in modules[name].items():
            setattr(module, attr, value)
        parent, _, child = name.rpartition(".")
        if parent in made:
            setattr(made[parent], child, module)
        sys.modules[name] = module
    try:
        yield
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def import_script(folder: Path, module: str, stand_in: Mapping[str, Mapping[str, Any]]) -> types.ModuleType:
    """Import `module` from `folder` (put first on `sys.path`) with `stand_in` modules in place."""
    sys.path.insert(0, str(folder))
    with stand_ins(stand_in):
        return importlib.import_module(module)


# The peers' own dependencies, kept out of the project's extras: distrax asks for tensorflow-probability, whose
# 0.25 release fails to import on jax 0.10 (xla.pytype_aval_mappings); tfp-nightly 0.26 works, installed without
# distrax's requirements.
PEER_INSTALLS = {
    "distrax": "pip install --no-deps 'distrax>=0.1.5,<0.2' 'tfp-nightly>=0.26.0.dev20261027,<0.27' decorator gast"
}


def require(module: str, peer: str) -> None:
    """Exit with a clear message unless `module` (a peer's own dependency) can be imported."""
    try:
        importlib.import_module(module)
    except ImportError:
        sys.exit(f"{peer} needs {module}; install it ({PEER_INSTALLS.get(module, f'pip install {module}')}) and rerun.")
