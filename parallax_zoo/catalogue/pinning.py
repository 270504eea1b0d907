"""Pinning a baseline folder in registry.yaml: its files' sha256 and the reference score its `eval.json` measured.

`pin_baseline` edits only the env's own entry (its `baseline:` and
`reference_score:` keys), so the header comment and every other entry stay
byte for byte; the result is parsed back and checked before it replaces the
file. Nothing here is typed by hand: hashes come from `pins.sha256_file`, the
score from `eval.json`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import yaml

from parallax_zoo.atomic import write_text_atomic
from parallax_zoo.catalogue.pins import BaselinePin, baseline_repo_id, sha256_file
from parallax_zoo.catalogue.registry import PACKAGED_REGISTRY, EnvSpec, Registry

PINNED_KEYS = ("baseline", "reference_score")
ENTRY_INDENT = "    "


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


def _entry_bounds(lines: list[str], env_id: str) -> tuple[int, int]:
    """The [start, end) line range of the entry `- id: env_id` under `envs:` (trailing blank lines excluded)."""
    starts = [i for i, line in enumerate(lines) if line.startswith("  - id:")]
    matching = [i for i in starts if yaml.safe_load(lines[i].split(":", 1)[1]) == env_id]
    if len(matching) != 1:
        raise ValueError(f"registry.yaml has {len(matching)} entries with id {env_id!r}; expected exactly one")
    start = matching[0]
    end = next((i for i in starts if i > start), len(lines))
    while end > start and not lines[end - 1].strip():
        end -= 1
    return start, end


def _without_pinned_keys(entry: list[str]) -> list[str]:
    """The entry's lines minus its `baseline:` and `reference_score:` keys and their nested lines."""
    kept, skipping = [], False
    for line in entry:
        is_key = line.startswith(ENTRY_INDENT) and not line.startswith(ENTRY_INDENT + " ")
        if is_key:
            skipping = line.strip().split(":", 1)[0] in PINNED_KEYS
        if not skipping:
            kept.append(line)
    return kept


def pinned_text(text: str, env_id: str, pin: BaselinePin, score: float) -> str:
    """registry.yaml's text with `env_id`'s baseline and reference_score replaced (or added at the entry's end)."""
    lines = text.splitlines(keepends=True)
    start, end = _entry_bounds(lines, env_id)
    entry = _without_pinned_keys(lines[start:end])
    if entry and not entry[-1].endswith("\n"):
        entry[-1] += "\n"
    block = yaml.safe_dump({"baseline": pin.to_dict(), "reference_score": score}, sort_keys=False)
    entry += [ENTRY_INDENT + line + "\n" for line in block.splitlines()]
    return "".join(lines[:start] + entry + lines[end:])


def pin_baseline(env_id: str, folder: Path, registry_path: str | os.PathLike[str] | None = None) -> EnvSpec:
    """Pin `folder` as `env_id`'s baseline in registry.yaml (the package's by default); returns the new spec."""
    path = Path(registry_path) if registry_path is not None else PACKAGED_REGISTRY
    pin, score = folder_pin(env_id, Path(folder))
    text = pinned_text(path.read_text(encoding="utf-8"), env_id, pin, score)
    updated = Registry.from_yaml(text, source=str(path)).spec(env_id)
    if updated.baseline != pin or updated.reference_score != score:
        raise ValueError(f"pinning {env_id} in {path} did not round-trip; the file was left unchanged")
    write_text_atomic(path.resolve(), text)
    return updated
