"""The GPU tier (docs/baselines.md, "The GPU tier"): the ids that do not train on a CPU in budget, each with its
configuration (a family file in `baseline_configs/gpu/` and the id's changes), the published number to meet and a
GPU time estimated from a published anchor, as `baseline_configs/gpu/tier.yaml` lists them. `parallax-zoo train ID
--tier gpu` trains with it; the GPU check trains a chosen set of them (docs/development.md)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from parallax_zoo.agents.ppo import PPOConfig
from parallax_zoo.errors import UserError
from parallax_zoo.policies import checkpoint

GPU_CONFIGS = Path(__file__).resolve().parent / "baseline_configs" / "gpu"
TIER_FILE = GPU_CONFIGS / "tier.yaml"


class NotInGpuTierError(UserError):
    """An id the GPU tier has no configuration for."""


@dataclass(frozen=True)
class Anchor:
    """A published speed: env steps per second, or `minutes` for `steps` env steps, on `hardware`."""

    hardware: str
    source: str
    steps_per_second: float | None = None
    minutes: float | None = None
    steps: int | None = None

    def minutes_for(self, steps: int) -> float:
        """The anchor's time for `steps` env steps, at its own rate."""
        if self.steps_per_second is not None:
            return steps / self.steps_per_second / 60
        assert self.minutes is not None and self.steps is not None
        return self.minutes * steps / self.steps


@dataclass(frozen=True)
class TierEntry:
    """One id of the GPU tier: its family config and changes, its anchor (None where none is published) and the
    published number to meet (None where its source gives none as a number)."""

    env_id: str
    family: str
    changes: Mapping[str, Any]
    anchor: Anchor | None
    published: float | None
    published_unit: str
    published_source: str

    def config(self) -> PPOConfig:
        """The configuration this id trains with on a GPU."""
        base = checkpoint.load_config(GPU_CONFIGS / f"{self.family}.yaml")
        fields = {field.name: field.type for field in dataclasses.fields(base)}
        unknown = sorted(set(self.changes) - set(fields))
        if unknown:
            raise ValueError(f"{TIER_FILE}: {self.env_id} changes unknown config fields {unknown}")
        return dataclasses.replace(base, env_id=self.env_id, **dict(self.changes))

    def estimated_minutes(self) -> float | None:
        """The GPU minutes the anchor's speed gives this id's budget (compile apart); None without an anchor."""
        return None if self.anchor is None else self.anchor.minutes_for(self.config().total_timesteps)


def tier_sources(path: Path = TIER_FILE) -> dict[str, str]:
    """What each source name of the tier file stands for."""
    return dict(yaml.safe_load(path.read_text(encoding="utf-8"))["sources"])


def gpu_tier(path: Path = TIER_FILE) -> dict[str, TierEntry]:
    """Every entry of the tier file, by id."""
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    entries = {}
    for row in document["entries"]:
        anchor = row.get("anchor")
        published = row.get("published") or {}
        entries[row["id"]] = TierEntry(
            env_id=row["id"],
            family=row["config"],
            changes=row.get("set") or {},
            anchor=None if anchor is None else Anchor(**anchor),
            published=published.get("value"),
            published_unit=published.get("unit", ""),
            published_source=published["source"],
        )
    return entries


def gpu_config(env_id: str) -> PPOConfig:
    """The GPU tier's configuration of `env_id`; a one-line error naming the tier's ids where it has none."""
    entries = gpu_tier()
    if env_id not in entries:
        raise NotInGpuTierError(
            f"{env_id} is not in the GPU tier ({TIER_FILE.name} lists {len(entries)} ids, e.g. "
            f"{', '.join(sorted(entries)[:3])}); train it without --tier gpu"
        )
    return entries[env_id].config()


__all__ = [
    "GPU_CONFIGS",
    "TIER_FILE",
    "Anchor",
    "NotInGpuTierError",
    "TierEntry",
    "gpu_config",
    "gpu_tier",
    "tier_sources",
]
