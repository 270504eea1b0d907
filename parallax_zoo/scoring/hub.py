"""Baseline files to and from the Hugging Face Hub (DESIGN.md sections 6 and 7).

A baseline is pinned by a `BaselinePin` (`parallax_zoo.catalogue.pins`): the Hub repo, the
revision and the sha256 of every file. `fetch_baseline` finds the pinned files in
the local mirror, then the Hub cache, then downloads them, and refuses any file whose hash
differs from the pin. `push_baseline` uploads a baseline folder and returns the pin to record.

`HF_ENDPOINT`, `HF_HUB_OFFLINE`, `HF_HUB_CACHE` and `HF_HOME` are read when a function is
called, not only when huggingface_hub is imported, so a process may set them late.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path

from parallax_zoo.catalogue.pins import (
    REFUSED_WEIGHT_SUFFIXES,
    BaselinePin,
    baseline_dirname,
    check_repo_id,
    sha256_file,
)

logger = logging.getLogger(__name__)

MIRROR_ENV_VAR = "PARALLAX_ZOO_BASELINES"
"""Names a folder to use as the local mirror instead of the repo's `baselines/`."""

_LFS_POINTER_PREFIX = b"version https://git-lfs.github.com/spec/v1"
_TRUE_VALUES = {"1", "on", "yes", "true"}


class HubError(RuntimeError):
    """A baseline could not be fetched from or pushed to the Hub."""


class BaselineIntegrityError(HubError):
    """A baseline file's sha256 differs from its pin; the file was refused."""

    def __init__(self, message: str, *, filename: str, expected: str, found: str) -> None:
        super().__init__(message)
        self.filename = filename
        self.expected = expected
        self.found = found


class BaselineUnavailableError(HubError):
    """The pinned files are neither mirrored nor cached, and cannot be downloaded (offline or the Hub failed)."""


def mirror_root() -> Path:
    """The local mirror of the baselines: `$PARALLAX_ZOO_BASELINES`, else the repo's `baselines/` folder."""
    configured = os.environ.get(MIRROR_ENV_VAR)
    if configured:
        return Path(configured).expanduser()
    return Path(__file__).resolve().parents[2] / "baselines"


def mirror_folder(env_id: str) -> Path:
    """An env's own folder in the mirror: `mirror_root() / baseline_dirname(env_id)` (`gymnax-CartPole-v1`)."""
    return mirror_root() / baseline_dirname(env_id)


def hub_endpoint() -> str:
    """The Hub URL: `HF_ENDPOINT` as set now, else huggingface_hub's default."""
    from huggingface_hub import constants

    return (os.environ.get("HF_ENDPOINT") or constants.ENDPOINT).rstrip("/")


def hub_offline() -> bool:
    """Whether `HF_HUB_OFFLINE` is set now or was set when huggingface_hub was imported."""
    from huggingface_hub import constants

    return constants.HF_HUB_OFFLINE or os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in _TRUE_VALUES


def hub_cache_dir() -> Path:
    """The Hub cache: `HF_HUB_CACHE`, else `HF_HOME/hub`, as set now; else huggingface_hub's default."""
    from huggingface_hub import constants

    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    return Path(constants.HF_HUB_CACHE)


def fetch_baseline(
    pin: BaselinePin,
    mirror_dir: Path | None,
    *,
    cache_dir: Path | None = None,
    token: str | None = None,
) -> Path:
    """Return a folder holding every pinned file, sha256-verified: from the mirror, else the Hub cache, else the Hub.

    `mirror_dir` is the env's own mirror folder (`mirror_root() / baseline_dirname(env_id)`). A mirror file that
    differs from the pin is refused and left as it is; a cached or downloaded one is refused and
    removed from the cache.
    """
    mirrored = _verified_mirror(pin, mirror_dir)
    if mirrored is not None:
        return mirrored
    cache = hub_cache_dir() if cache_dir is None else cache_dir
    cached = _verified_cache(pin, cache)
    if cached is not None:
        return cached
    if hub_offline():
        raise BaselineUnavailableError(
            f"HF_HUB_OFFLINE is set and the baseline {pin.repo_id}@{pin.revision} is neither in the local mirror "
            f"{mirror_dir if mirror_dir is not None else '(none given)'} nor in the Hub cache {cache}. "
            f"Unset HF_HUB_OFFLINE and run `parallax-zoo download ID` once while online, or put the pinned files "
            f"({', '.join(pin.files)}) in the mirror folder (the repo's baselines/<EnvId>/ or ${MIRROR_ENV_VAR}/<EnvId>/, '/' in the id written as '-')."
        )
    return _download(pin, cache, token)


def _is_lfs_pointer(path: Path) -> bool:
    """Whether a mirror file is a git-lfs pointer left by a clone without git-lfs, rather than the file itself."""
    with path.open("rb") as stream:
        return stream.read(len(_LFS_POINTER_PREFIX)) == _LFS_POINTER_PREFIX


def _verified_mirror(pin: BaselinePin, mirror_dir: Path | None) -> Path | None:
    """The mirror folder if it holds every pinned file with the pinned hash; None if it lacks some; raise on a mismatch."""
    if mirror_dir is None:
        return None
    paths = {filename: mirror_dir.joinpath(*filename.split("/")) for filename in pin.files}
    if not all(path.is_file() and not _is_lfs_pointer(path) for path in paths.values()):
        return None
    for filename, path in paths.items():
        found = sha256_file(path)
        if found != pin.files[filename]:
            raise BaselineIntegrityError(
                f"{path} in the local mirror has sha256 {found}, but the pin of {pin.repo_id}@{pin.revision} expects "
                f"{pin.files[filename]}; the file was refused and left untouched. Restore it (e.g. `git checkout` it "
                "or delete it and run `parallax-zoo download ID`), or, if you retrained on purpose, push the new "
                "baseline with `parallax-zoo push ID` and update the pin in registry.yaml.",
                filename=filename,
                expected=pin.files[filename],
                found=found,
            )
    return mirror_dir


def _snapshot_folder(path: Path, filename: str) -> Path:
    """The folder that `filename` (a repo path, maybe with '/') lies in at `path`."""
    return path.parents[filename.count("/")]


def _verified_cache(pin: BaselinePin, cache_dir: Path) -> Path | None:
    """The cached snapshot folder if it holds every pinned file with the pinned hash; bad cached files are removed."""
    from huggingface_hub import try_to_load_from_cache

    paths: dict[str, Path] = {}
    for filename in pin.files:
        cached = try_to_load_from_cache(pin.repo_id, filename, cache_dir=cache_dir, revision=pin.revision)
        if not isinstance(cached, str):
            return None
        paths[filename] = Path(cached)
    folders = {_snapshot_folder(path, filename) for filename, path in paths.items()}
    mismatched = [filename for filename, path in paths.items() if sha256_file(path) != pin.files[filename]]
    for filename in mismatched:
        logger.warning("cached %s of %s differs from its pin; removed it from the cache", filename, pin.repo_id)
        _remove_cached_file(paths[filename], filename)
    if mismatched or len(folders) != 1:
        return None
    return folders.pop()


def _download(pin: BaselinePin, cache_dir: Path, token: str | None) -> Path:
    """Download every pinned file into the Hub cache at one commit and verify it; return the snapshot folder."""
    import httpx2
    from huggingface_hub import hf_hub_download

    endpoint = hub_endpoint()
    revision = pin.revision
    folder: Path | None = None
    for filename, expected in pin.files.items():
        try:
            path = Path(
                hf_hub_download(
                    pin.repo_id,
                    filename,
                    revision=revision,
                    cache_dir=cache_dir,
                    endpoint=endpoint,
                    token=token,
                    library_name="parallax-zoo",
                )
            )
        except (OSError, httpx2.HTTPError) as error:
            raise BaselineUnavailableError(
                f"could not download {filename} of {pin.repo_id}@{revision} from the Hub at {endpoint} "
                f"(HF_ENDPOINT): {error}. Check the connection, HF_ENDPOINT and the repo id in the pin, "
                "or put the pinned files in the local mirror."
            ) from error
        found = sha256_file(path)
        if found != expected:
            _remove_cached_file(path, filename)
            raise BaselineIntegrityError(
                f"{filename} downloaded from {endpoint}/{pin.repo_id} at revision {revision} has sha256 {found}, but "
                f"the pin expects {expected}; it was refused and removed from the Hub cache. If the repo was "
                "updated on purpose, update the pin in registry.yaml from `parallax-zoo push ID`.",
                filename=filename,
                expected=expected,
                found=found,
            )
        folder = _snapshot_folder(path, filename)
        revision = folder.name
    assert folder is not None, "a BaselinePin always lists at least one file"
    return folder


def _remove_cached_file(pointer: Path, filename: str) -> None:
    """Remove a file from the Hub cache: its snapshot entry and the repo blob it links to, so it is never served again.

    A blob that is itself a link into the cache-wide shared store (Xet downloads) is unlinked from
    this repo; the shared store entry is left for the other repos that may reference it.
    """
    repo_cache = _snapshot_folder(pointer, filename).parent.parent
    blob: Path | None = None
    if pointer.is_symlink():
        blob = Path(os.path.normpath(pointer.parent / os.readlink(pointer)))
    pointer.unlink(missing_ok=True)
    if blob is not None and blob.parent == repo_cache / "blobs":
        blob.unlink(missing_ok=True)


def download_files(repo_and_revision: str, filenames: Sequence[str]) -> Path:
    """Download `filenames` of a Hub repo, `REPO` or `REPO@REVISION`, into the Hub cache; the snapshot folder."""
    from huggingface_hub import snapshot_download

    repo_id, _, revision = repo_and_revision.partition("@")
    folder = snapshot_download(
        repo_id, revision=revision or None, allow_patterns=list(filenames), endpoint=hub_endpoint(), library_name="parallax-zoo"
    )
    return Path(folder)


def push_baseline(folder: Path, repo_id: str, *, token: str | None = None, private: bool = False) -> BaselinePin:
    """Create or update the Hub model repo from a baseline folder; return the pin (real commit, real hashes) to record."""
    import httpx2
    from huggingface_hub import CommitOperationAdd, HfApi

    files = _baseline_files(folder)
    check_repo_id(repo_id)
    hashes = {filename: sha256_file(path) for filename, path in files.items()}
    endpoint = hub_endpoint()
    api = HfApi(endpoint=endpoint, token=token, library_name="parallax-zoo")
    try:
        api.create_repo(repo_id, private=private, exist_ok=True)
        commit = api.create_commit(
            repo_id,
            operations=[CommitOperationAdd(filename, str(path)) for filename, path in files.items()],
            commit_message=f"Upload parallax-zoo baseline from {folder.name}",
        )
    except (OSError, httpx2.HTTPError, ValueError) as error:
        raise HubError(f"could not push {folder} to {endpoint}/{repo_id} (HF_ENDPOINT): {error}") from error
    return BaselinePin(repo_id=repo_id, revision=commit.oid, files=hashes)


def _baseline_files(folder: Path) -> dict[str, Path]:
    """Every file of a baseline folder to upload, by repo path; refuses pickle weights and a folder without safetensors."""
    if not folder.is_dir():
        raise HubError(f"baseline folder {folder} does not exist; train it first with `parallax-zoo train ID`")
    files = {
        path.relative_to(folder).as_posix(): path
        for path in sorted(folder.rglob("*"))
        if path.is_file() and not any(part.startswith(".") for part in path.relative_to(folder).parts)
    }
    refused = [filename for filename in files if filename.lower().endswith(REFUSED_WEIGHT_SUFFIXES)]
    if refused:
        raise HubError(
            f"{folder} holds pickle-capable weight files {refused}; baselines ship safetensors only. "
            "Save the parameters with safetensors as model.safetensors and remove these files."
        )
    if not any(filename.endswith(".safetensors") for filename in files):
        raise HubError(f"{folder} holds no .safetensors weights; expected model.safetensors next to config.yaml")
    return files


