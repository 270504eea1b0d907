"""The schema of a baseline pin in registry.yaml: the Hub repo, the revision and every file's sha256, checked.

The catalogue validates each entry's `baseline:` with `BaselinePin`; the hub
(`parallax_zoo.policies.hub`) fetches and pushes what a pin names. A baseline's
folder and Hub repo are named after its env id by `baseline_dirname`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

from parallax_zoo.errors import UserError

HUB_URL = "https://huggingface.co"
"""The public Hub: a pinned repo's page is `HUB_URL/REPO_ID`."""
REFUSED_WEIGHT_SUFFIXES = (".bin", ".pt", ".pth", ".pkl", ".pickle", ".ckpt", ".joblib")
"""Weight formats that can carry pickled code; baselines ship `.safetensors` only (docs/baselines.md)."""

_SHA256 = re.compile(r"[0-9a-f]{64}")
_COMMIT = re.compile(r"[0-9a-f]{40}")
_REPO_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}")


class BaselinePinError(UserError, ValueError):
    """A baseline pin (repo id, revision, file hashes) is malformed."""


@dataclasses.dataclass(frozen=True)
class BaselinePin:
    """Where a baseline lives on the Hub and the sha256 of each of its files, as registry.yaml records it."""

    repo_id: str
    revision: str = "main"
    files: Mapping[str, str] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        check_repo_id(self.repo_id)
        _check_revision(self.revision, self.repo_id)
        if not isinstance(self.files, Mapping) or not self.files:
            raise BaselinePinError(
                f"the pin of {self.repo_id} lists no files; expected a mapping filename -> sha256, "
                "as printed by `parallax-zoo push ID`"
            )
        for filename, sha256 in self.files.items():
            _check_pinned_file(filename, sha256, self.repo_id)
        object.__setattr__(self, "files", MappingProxyType(dict(sorted(self.files.items()))))

    def __hash__(self) -> int:
        return hash((self.repo_id, self.revision, tuple(self.files.items())))

    @property
    def is_commit(self) -> bool:
        """Whether the revision is an immutable commit (set by a real push) rather than the provisional "main"."""
        return _COMMIT.fullmatch(self.revision) is not None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BaselinePin:
        """Build a pin from its registry.yaml form: {repo_id, revision, files: {filename: sha256}}."""
        if not isinstance(data, Mapping):
            raise BaselinePinError(f"a baseline pin must be a mapping with repo_id, revision and files, got {data!r}")
        unknown = sorted(set(data) - {"repo_id", "revision", "files"})
        if unknown:
            raise BaselinePinError(f"unknown keys {unknown} in baseline pin; expected only repo_id, revision, files")
        if "repo_id" not in data or "files" not in data:
            raise BaselinePinError(f"a baseline pin needs repo_id and files, got keys {sorted(data)}")
        files = data["files"]
        if not isinstance(files, Mapping):
            raise BaselinePinError(f"baseline pin files must map filename -> sha256, got {files!r}")
        return cls(repo_id=data["repo_id"], revision=data.get("revision", "main"), files=dict(files))

    def to_dict(self) -> dict[str, Any]:
        """The registry.yaml form of the pin (plain dicts and strings)."""
        return {"repo_id": self.repo_id, "revision": self.revision, "files": dict(self.files)}


def check_repo_id(repo_id: object) -> None:
    if not isinstance(repo_id, str) or not _REPO_ID.fullmatch(repo_id) or "--" in repo_id or ".." in repo_id:
        raise BaselinePinError(
            f"invalid Hub repo id {repo_id!r}: expected 'namespace/name' made of letters, digits, '.', '_' and '-' "
            "(no '--' or '..'), e.g. 'parallax-zoo/Race-v0'"
        )


def _check_revision(revision: object, repo_id: str) -> None:
    if revision != "main" and (not isinstance(revision, str) or not _COMMIT.fullmatch(revision)):
        raise BaselinePinError(
            f'invalid revision {revision!r} in the pin of {repo_id}: expected "main" (not pushed yet) or the '
            "40-character lowercase hex commit id that `parallax-zoo push ID` printed"
        )


def _check_pinned_file(filename: object, sha256: object, repo_id: str) -> None:
    if not isinstance(filename, str) or not filename or filename.startswith("/") or "\\" in filename:
        raise BaselinePinError(f"invalid filename {filename!r} in the pin of {repo_id}: expected a relative path")
    if any(part in ("", ".", "..") for part in filename.split("/")):
        raise BaselinePinError(
            f"invalid filename {filename!r} in the pin of {repo_id}: '.', '..' and empty path parts are not allowed"
        )
    if filename.lower().endswith(REFUSED_WEIGHT_SUFFIXES):
        raise BaselinePinError(
            f"{filename!r} in the pin of {repo_id} is a pickle-capable weight format; baselines ship "
            "safetensors only: save the parameters with safetensors and pin model.safetensors instead"
        )
    if not isinstance(sha256, str) or not _SHA256.fullmatch(sha256):
        raise BaselinePinError(
            f"invalid sha256 {sha256!r} for {filename!r} in the pin of {repo_id}: expected 64 lowercase hex "
            "characters (quote it in YAML)"
        )


def format_pin(pin: BaselinePin) -> str:
    """The YAML to paste under the env's entry in registry.yaml."""
    return yaml.safe_dump({"baseline": pin.to_dict()}, sort_keys=False)


def sha256_file(path: Path) -> str:
    """The sha256 hex digest of a file's bytes, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def baseline_dirname(env_id: str) -> str:
    """The folder (and Hub repo) name of an env's baseline: its id with '/' as '-', e.g. "gymnax-CartPole-v1"."""
    return env_id.replace("/", "-")


def baseline_repo_id(env_id: str) -> str:
    """The Hub repo a baseline is pinned to before a push says otherwise: "parallax-zoo/<baseline_dirname>"."""
    return f"parallax-zoo/{baseline_dirname(env_id)}"
