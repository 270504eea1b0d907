"""Adapters from foreign JAX environment APIs to the parallax protocol.

Each adapter imports its package (gymnax, brax, mujoco_playground) only when
it is first used, so `import parallax.adapters` stays light.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from parallax.adapters.brax import BraxAdapter
    from parallax.adapters.gymnax import GymnaxAdapter
    from parallax.adapters.mjx import MJXAdapter

_ADAPTERS = {
    "GymnaxAdapter": "parallax.adapters.gymnax",
    "BraxAdapter": "parallax.adapters.brax",
    "MJXAdapter": "parallax.adapters.mjx",
}


def __getattr__(name: str) -> Any:
    if name in _ADAPTERS:
        return getattr(importlib.import_module(_ADAPTERS[name]), name)
    raise AttributeError(f"module 'parallax.adapters' has no attribute {name!r}")


__all__ = ["BraxAdapter", "GymnaxAdapter", "MJXAdapter"]
