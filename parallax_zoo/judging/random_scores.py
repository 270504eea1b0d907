"""The random player's protocol score of every id, measured once and shipped, so a normalised score exists for an
id with no baseline and the leaderboard need not play the random player again (docs/evaluation.md, "The random
player's scores"). A stored score counts only while its protocol is the id's protocol now."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from parallax.core import AnyEnv
from parallax_zoo.agents.player import Player
from parallax_zoo.atomic import write_text_atomic
from parallax_zoo.catalogue.player_names import RANDOM
from parallax_zoo.catalogue.registry import EnvSpec
from parallax_zoo.errors import UserError
from parallax_zoo.judging.evaluation import EvalResult, evaluate, protocol
from parallax_zoo.locking import LockTimeout, exclusive_lock, lock_beside

RANDOM_SCORES_FILE = Path(__file__).resolve().with_name("random_scores.json")
"""Per id: the random player's mean, 95% interval, episodes and the protocol they were measured under."""
LOCK_TIMEOUT = 60.0
"""Seconds a writer waits for another writer of the same file (two batches pinning at once)."""


def _protocol_dict(env_spec: EnvSpec, pinning: bool = False) -> dict[str, Any]:
    current = protocol(env_spec, pinning)
    return {**asdict(current), "opponents": list(current.opponents)}


def stored_random_score(
    env_spec: EnvSpec, path: Path = RANDOM_SCORES_FILE, pinning: bool = False
) -> dict[str, Any] | None:
    """The shipped record of the random player on `env_spec`'s id, or None where there is none under its protocol
    (`pinning`: the protocol it will have once a baseline is pinned, which a zero-sum game's baseline joins)."""
    envs = json.loads(path.read_text(encoding="utf-8")).get("envs", {}) if path.is_file() else {}
    record = envs.get(env_spec.id)
    return record if record is not None and record.get("protocol") == _protocol_dict(env_spec, pinning) else None


def measure_random_score(env_spec: EnvSpec, env: AnyEnv, baseline: Player | None = None) -> dict[str, Any]:
    """The random player's result on `env` under the id's protocol, as the file keeps it. A zero-sum game also meets
    `baseline` (the weights about to be pinned), as its protocol will once they are."""
    result: EvalResult = evaluate(env_spec, env, RANDOM, baseline=baseline)
    kept = ("mean", "ci95", "ci95_method", "episodes", "protocol", "env_version", "versions")
    return {key: value for key, value in result.to_dict().items() if key in kept}


def write_random_scores(records: Iterable[tuple[str, dict[str, Any]]], path: Path = RANDOM_SCORES_FILE) -> Path:
    """Add or replace the records of the ids given; every other id keeps the record the file has. The file is read
    and written under its lock (`.random_scores.json.lock` beside it), so writers at once all land."""
    lock = lock_beside(path)
    try:
        with exclusive_lock(lock, LOCK_TIMEOUT):
            envs = json.loads(path.read_text(encoding="utf-8")).get("envs", {}) if path.is_file() else {}
            envs.update(dict(records))
            document = {"envs": dict(sorted(envs.items()))}
            write_text_atomic(path, json.dumps(document, indent=1, sort_keys=True, allow_nan=False) + "\n")
    except LockTimeout:
        raise UserError(
            f"{path} stayed locked by another writer for {LOCK_TIMEOUT:.0f} s; if no `parallax-zoo maintain` job is "
            f"running, remove {lock} and run again"
        ) from None
    return path


__all__ = ["RANDOM_SCORES_FILE", "measure_random_score", "stored_random_score", "write_random_scores"]
