"""Parallax envs as the objects the rest of the field consumes: Gymnasium and PettingZoo environments.

- `to_gymnasium(env)`: a `gymnasium.Env` for a single-agent env
- `to_gymnasium_vector(env, num_envs)`: a `gymnasium.vector.VectorEnv`, all envs in one jitted step
- `to_pettingzoo(env)`: a `pettingzoo.ParallelEnv` for a multi-agent env
- `to_pettingzoo_aec(env)`: a `pettingzoo.AECEnv`, one agent acting at a time

Gymnasium and PettingZoo are imported only when an export is first used
(the extras `gymnasium` and `pettingzoo`: `pip install -e '.[gymnasium]'` from a clone).
docs/interop.md shows them in use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from parallax.install_command import install_command

if TYPE_CHECKING:
    from parallax.interop.gymnasium_env import GymnasiumEnv, GymnasiumVectorEnv, to_gymnasium, to_gymnasium_vector
    from parallax.interop.pettingzoo_env import (
        PettingZooAECEnv,
        PettingZooParallelEnv,
        to_pettingzoo,
        to_pettingzoo_aec,
    )

_EXPORTS = {
    "GymnasiumEnv": ("parallax.interop.gymnasium_env", "gymnasium"),
    "GymnasiumVectorEnv": ("parallax.interop.gymnasium_env", "gymnasium"),
    "to_gymnasium": ("parallax.interop.gymnasium_env", "gymnasium"),
    "to_gymnasium_vector": ("parallax.interop.gymnasium_env", "gymnasium"),
    "PettingZooAECEnv": ("parallax.interop.pettingzoo_env", "pettingzoo"),
    "PettingZooParallelEnv": ("parallax.interop.pettingzoo_env", "pettingzoo"),
    "to_pettingzoo": ("parallax.interop.pettingzoo_env", "pettingzoo"),
    "to_pettingzoo_aec": ("parallax.interop.pettingzoo_env", "pettingzoo"),
}


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'parallax.interop' has no attribute {name!r}")
    module_name, extra = _EXPORTS[name]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError(
            f"{name} needs the package {error.name!r}, which is not installed. "
            f"Install it with: {install_command(extra)}",
            name=error.name,
        ) from error
    return getattr(module, name)


__all__ = [
    "GymnasiumEnv",
    "GymnasiumVectorEnv",
    "PettingZooAECEnv",
    "PettingZooParallelEnv",
    "to_gymnasium",
    "to_gymnasium_vector",
    "to_pettingzoo",
    "to_pettingzoo_aec",
]
