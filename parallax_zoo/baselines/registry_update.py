"""Pinning a baseline folder in registry.yaml: its files' sha256 and the reference score its `eval.json` measured.

`pin_baseline` edits only the env's own `baseline:` and `reference_score:`
values, through a round-trip YAML writer (ruamel.yaml), so comments, blank
lines, key order and every other entry stay byte for byte; the result is
parsed back and checked before it replaces the file. Nothing here is typed by
hand: hashes come from `pins.sha256_file`, the score from `eval.json`.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from parallax_zoo.atomic import write_text_atomic
from parallax_zoo.catalogue import registry
from parallax_zoo.catalogue.pins import BaselinePin, baseline_repo_id, sha256_file
from parallax_zoo.catalogue.registry import EnvSpec, Registry
from parallax_zoo.errors import UserError
from parallax_zoo.locking import LockTimeout, exclusive_lock, lock_beside


def folder_pin(env_id: str, folder: Path) -> tuple[BaselinePin, float]:
    """The pin of a baseline folder (repo `baseline_repo_id`, revision "main") and its eval.json mean."""
    files = {
        path.name: sha256_file(path)
        for path in sorted(folder.iterdir())
        if path.is_file() and not path.name.startswith(".")
    }
    if "eval.json" not in files:
        raise ValueError(f"{folder} has no eval.json; train the baseline first with `parallax-zoo train {env_id}`")
    score = float(json.loads((folder / "eval.json").read_text())["mean"])
    return BaselinePin(repo_id=baseline_repo_id(env_id), revision="main", files=files), score


def _round_trip_yaml() -> Any:
    """A ruamel.yaml round-trip loader and dumper in registry.yaml's style (2-space maps, "  - " lists, long lines)."""
    from ruamel.yaml import YAML

    writer = YAML(typ="rt")
    writer.preserve_quotes = True
    writer.indent(mapping=2, sequence=4, offset=2)
    writer.width = 4096
    writer.representer.add_representer(
        type(None), lambda representer, _: representer.represent_scalar("tag:yaml.org,2002:null", "null")
    )
    return writer


def _update_in_place(mapping: Any, values: dict[str, Any]) -> None:
    """Set `values` into a round-trip mapping: existing keys keep their place and comments, stale keys go, new ones
    append."""
    from ruamel.yaml.comments import CommentedMap

    for key in [key for key in mapping if key not in values]:
        del mapping[key]
    for key, value in values.items():
        if isinstance(value, dict):
            if not isinstance(mapping.get(key), CommentedMap):
                mapping[key] = CommentedMap()
            _update_in_place(mapping[key], value)
        elif mapping.get(key) != value or type(mapping.get(key)) is not type(value):
            mapping[key] = value


def pinned_text(text: str, env_id: str, pin: BaselinePin, score: float) -> str:
    """registry.yaml's text with `env_id`'s baseline and reference_score set (added at the entry's end if absent)."""
    writer = _round_trip_yaml()
    document = writer.load(text)
    entries = [entry for entry in (document or {}).get("envs") or [] if entry.get("id") == env_id]
    if len(entries) != 1:
        raise ValueError(f"registry.yaml has {len(entries)} entries with id {env_id!r}; expected exactly one")
    entry = entries[0]
    _update_in_place_keys(entry, {"baseline": pin.to_dict(), "reference_score": score})
    buffer = io.StringIO()
    writer.dump(document, buffer)
    return buffer.getvalue()


def _update_in_place_keys(entry: Any, values: dict[str, Any]) -> None:
    """Set some keys of an entry, leaving its other keys alone; keys it lacks are added at its end,
    before the blank line or comment that closed it."""
    closing = _pop_closing_comment(entry) if any(key not in entry for key in values) else None
    for key, value in values.items():
        if isinstance(value, dict) and key in entry:
            _update_in_place(entry[key], value)
        elif key not in entry or entry[key] != value:
            entry[key] = value
    if closing is not None:
        entry.ca.items[list(entry)[-1]] = [None, None, closing, None]


def _pop_closing_comment(mapping: Any) -> Any:
    """Detach the comment after a mapping's last value (ruamel keeps the blank line after an entry there), or None."""
    from ruamel.yaml.comments import CommentedMap

    if not mapping:
        return None
    last = list(mapping)[-1]
    if isinstance(mapping[last], CommentedMap):
        return _pop_closing_comment(mapping[last])
    slots = mapping.ca.items.get(last)
    if not slots or len(slots) < 3 or slots[2] is None:
        return None
    closing, slots[2] = slots[2], None
    return closing


REGISTRY_LOCK_TIMEOUT = 60.0
"""Seconds a pin waits for another process's pin of the same registry.yaml to finish."""


class RegistryBusyError(UserError):
    """Another process held registry.yaml's lock for longer than a pin waits."""


def pin_baseline(
    env_id: str,
    folder: Path,
    registry_path: str | os.PathLike[str] | None = None,
    swap: Callable[[], None] | None = None,
) -> EnvSpec:
    """Pin `folder` as `env_id`'s baseline in registry.yaml (the package's by default); returns the new spec.

    The registry is locked and read under the lock, so pins of several envs made at once all land.
    `swap`, if given, runs under the lock just before the new pin is written: `train --pin` moves
    the folder it hashed (a staged copy) into place there, so no other pin sees one without the other.
    """
    path = Path(registry_path if registry_path is not None else registry.PACKAGED_REGISTRY).resolve()
    pin, score = folder_pin(env_id, Path(folder))
    try:
        with exclusive_lock(lock_beside(path), REGISTRY_LOCK_TIMEOUT):
            text = pinned_text(path.read_text(encoding="utf-8"), env_id, pin, score)
            updated = Registry.from_yaml(text, source=str(path)).spec(env_id)
            if updated.baseline != pin or updated.reference_score != score:
                raise ValueError(f"pinning {env_id} in {path} did not round-trip; the file was left unchanged")
            if swap is not None:
                swap()
            write_text_atomic(path, text)
    except LockTimeout:
        raise RegistryBusyError(
            f"{path} stayed locked by another pin for {REGISTRY_LOCK_TIMEOUT:.0f} s; if no `parallax-zoo train --pin` "
            f"or remeasure is running, remove {lock_beside(path)} and pin again"
        ) from None
    return updated
