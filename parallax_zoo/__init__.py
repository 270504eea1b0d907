"""Parallax Zoo: native JAX environments, a registry of them and of adapted ones, and their baselines.

`make`, `spec`, `list_envs` and `register` need only jax; `load_baseline`,
`evaluate` and `leaderboard` load the `train` and `hub` extras on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from parallax_zoo.registry import EnvSpec, list_envs, make, register, registry_table, spec

if TYPE_CHECKING:
    from parallax_zoo.evaluation import evaluate
    from parallax_zoo.leaderboard import leaderboard
    from parallax_zoo.loading import load_baseline

_LAZY = {
    "evaluate": "parallax_zoo.evaluation",
    "leaderboard": "parallax_zoo.leaderboard",
    "load_baseline": "parallax_zoo.loading",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'parallax_zoo' has no attribute {name!r}")


__all__ = ["EnvSpec", "evaluate", "leaderboard", "list_envs", "load_baseline", "make", "register", "registry_table", "spec"]
