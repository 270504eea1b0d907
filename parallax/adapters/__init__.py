"""Adapters from foreign JAX environment APIs to the parallax protocol.

Each adapter imports its package (gymnax, brax, mujoco_playground, pgx,
jumanji, jaxmarl, xminigrid, craftax) only when it is first used, so
`import parallax.adapters` stays light. What they share, the spaces and the
checked, jitted `reset` and `step`, is `parallax.adapters.base.Adapter`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from parallax.install_command import install_command

if TYPE_CHECKING:
    from parallax.adapters.brax import BraxAdapter
    from parallax.adapters.craftax import CraftaxAdapter
    from parallax.adapters.gymnax import GymnaxAdapter
    from parallax.adapters.jaxmarl import JaxMARLAdapter
    from parallax.adapters.jumanji import JumanjiAdapter
    from parallax.adapters.mjx import MJXAdapter
    from parallax.adapters.pgx import PgxAdapter, PgxSinglePlayerAdapter
    from parallax.adapters.xminigrid import XMiniGridAdapter

_ADAPTERS = {
    "GymnaxAdapter": "parallax.adapters.gymnax",
    "BraxAdapter": "parallax.adapters.brax",
    "MJXAdapter": "parallax.adapters.mjx",
    "JaxMARLAdapter": "parallax.adapters.jaxmarl",
    "CraftaxAdapter": "parallax.adapters.craftax",
    "PgxAdapter": "parallax.adapters.pgx",
    "PgxSinglePlayerAdapter": "parallax.adapters.pgx",
    "JumanjiAdapter": "parallax.adapters.jumanji",
    "XMiniGridAdapter": "parallax.adapters.xminigrid",
}

_EXTRAS = {
    "GymnaxAdapter": "gymnax",
    "BraxAdapter": "brax",
    "MJXAdapter": "mjx",
    "JaxMARLAdapter": "jaxmarl",
    "CraftaxAdapter": "craftax",
    "PgxAdapter": "pgx",
    "PgxSinglePlayerAdapter": "pgx",
    "JumanjiAdapter": "jumanji",
    "XMiniGridAdapter": "xminigrid",
}


def __getattr__(name: str) -> Any:
    if name in _ADAPTERS:
        try:
            module = importlib.import_module(_ADAPTERS[name])
        except ModuleNotFoundError as error:
            raise ModuleNotFoundError(
                f"{name} needs the package {error.name!r}, which is not installed. "
                f"Install it with: {install_command(_EXTRAS[name])}",
                name=error.name,
            ) from error
        return getattr(module, name)
    raise AttributeError(f"module 'parallax.adapters' has no attribute {name!r}")


__all__ = [
    "BraxAdapter",
    "CraftaxAdapter",
    "GymnaxAdapter",
    "JaxMARLAdapter",
    "JumanjiAdapter",
    "MJXAdapter",
    "PgxAdapter",
    "PgxSinglePlayerAdapter",
    "XMiniGridAdapter",
]
