"""Parallax Zoo: native JAX environments, a registry of them and of adapted ones, and their baselines.

`make`, `spec`, `list_envs` and `register` need only jax; `load_baseline`,
`evaluate` and `leaderboard` load the `train` and `hub` extras on first use.
The single-agent ids also appear in Gymnasium's registry as `parallax_zoo/<id>`
once Gymnasium is imported (`parallax_zoo.catalogue.gymnasium_ids`).
The package's folders are its layers (README, "Layout").
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from parallax_zoo.catalogue.gymnasium_ids import register_when_gymnasium_loads
from parallax_zoo.catalogue.registry import EnvSpec, list_envs, make, register, registry_table, spec
from parallax.version import __version__

if TYPE_CHECKING:
    from parallax_zoo.judging.evaluation import evaluate
    from parallax_zoo.judging.leaderboard import leaderboard
    from parallax_zoo.policies.loading import load_baseline

_LAZY = {
    "evaluate": "parallax_zoo.judging.evaluation",
    "leaderboard": "parallax_zoo.judging.leaderboard",
    "load_baseline": "parallax_zoo.policies.loading",
}


register_when_gymnasium_loads()


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'parallax_zoo' has no attribute {name!r}")


__all__ = [
    "EnvSpec", "__version__", "evaluate", "leaderboard", "list_envs", "load_baseline", "make", "register",
    "registry_table", "spec",
]


def __dir__() -> list[str]:
    """The public API only (`__all__`), not the names this module imports to build it."""
    return sorted(__all__)
