"""Parallax Zoo: native JAX environments, a registry of them and of adapted ones, and their baselines.

`make`, `spec`, `list_envs` and `register` need only jax; `load_baseline`,
`evaluate` and `leaderboard` load the `train` and `hub` extras on first use.
The single-agent ids also appear in Gymnasium's registry as `parallax_zoo/<id>`
once Gymnasium is imported (`parallax_zoo.catalogue.gymnasium_ids`).
The package's folders are its layers (docs/layout.md).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from parallax.version import __version__
from parallax_zoo.catalogue.gymnasium_ids import register_when_gymnasium_loads
from parallax_zoo.catalogue.registry import EnvSpec, list_envs, make, register, registry_table, resolve, spec

if TYPE_CHECKING:
    from jax.sharding import Mesh

    from parallax_zoo.agents.player import Player
    from parallax_zoo.judging.evaluation import EvalResult
    from parallax_zoo.judging.leaderboard import leaderboard

_LAZY = {"leaderboard": "parallax_zoo.judging.leaderboard"}


def load_baseline(env_id: str) -> Player:
    """The baseline of `env_id` at the revision registry.yaml pins, every file sha256-checked (docs/baselines.md).

    A baseline that searches at play time comes whole, as a `SearchPlayer`; `.policy` is its raw network.
    """
    from parallax_zoo.policies import loading

    return loading.load_baseline(*resolve(env_id))


def evaluate(
    env_id: str,
    policy: Player | str,
    *,
    name: str | None = None,
    baseline: Player | None = None,
    episodes: int | None = None,
    mesh: Mesh | None = None,
    provenance: dict[str, Any] | None = None,
) -> EvalResult:
    """Evaluate `policy` (a `Policy`, a scripted player, or `"random"`) on `env_id` under its fixed protocol
    (docs/evaluation.md); the options are `parallax_zoo.judging.evaluation.evaluate`'s."""
    from parallax_zoo.judging import evaluation

    env_spec, env = resolve(env_id)
    return evaluation.evaluate(
        env_spec, env, policy, name=name, baseline=baseline, episodes=episodes, mesh=mesh, provenance=provenance
    )


register_when_gymnasium_loads()


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'parallax_zoo' has no attribute {name!r}")


__all__ = [
    "EnvSpec",
    "__version__",
    "evaluate",
    "leaderboard",
    "list_envs",
    "load_baseline",
    "make",
    "register",
    "registry_table",
    "spec",
]


def __dir__() -> list[str]:
    """The public API only (`__all__`), not the names this module imports to build it."""
    return sorted(__all__)
