"""The family default configuration of an env id without a config of its own (docs/baselines.md, "Family
defaults"): one file per family in `baseline_configs/families/`, the family read from the registry's tags."""

from __future__ import annotations

from pathlib import Path

from parallax_zoo.catalogue.registry import EnvSpec

FAMILY_CONFIGS = Path(__file__).resolve().parent / "baseline_configs" / "families"
"""`<family>.yaml` for every family of `FAMILIES`."""

FAMILIES = {
    "self-play": "zero-sum games: one policy in every seat, against itself and the random player (MAPPO)",
    "mappo": "other multi-agent envs: MAPPO with a centralised critic",
    "ppo-recurrent": "single-agent envs observed partially: recurrent PPO (a GRU)",
    "ppo-continuous": "single-agent envs with continuous actions: PPO with a Gaussian policy",
    "ppo": "every other single-agent env: feed-forward PPO",
}
"""Family name -> whom it is for, in the order `family_of` tries them."""


def family_of(env_spec: EnvSpec) -> str:
    """The family whose default trains `env_spec` when it has no config of its own, from its registry tags."""
    tags = set(env_spec.tags)
    if env_spec.multi_agent:
        return "self-play" if "zero-sum" in tags else "mappo"
    if "partially-observable" in tags:
        return "ppo-recurrent"
    return "ppo-continuous" if "continuous" in tags else "ppo"


def family_config_path(env_spec: EnvSpec) -> Path:
    """The default config file of `env_spec`'s family."""
    return FAMILY_CONFIGS / f"{family_of(env_spec)}.yaml"


__all__ = ["FAMILIES", "FAMILY_CONFIGS", "family_config_path", "family_of"]
