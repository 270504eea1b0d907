"""Baseline files to and from the Hugging Face Hub (docs/baselines.md, docs/evaluation.md).

A baseline is pinned by a `BaselinePin` (`parallax_zoo.catalogue.pins`): the Hub repo, the
revision and the sha256 of every file. `fetch_baseline` finds the pinned files in
the local mirror, then the Hub cache, then downloads them, and refuses any file whose hash
differs from the pin. `fetch_hub_files` fetches a policy repo at a commit and checks each file
against the hash the Hub reports for it there. Both return the bytes they hashed
(`VerifiedFiles`), so a caller parses exactly what was checked. `push_baseline` uploads a
baseline folder and returns the pin to record. Every request is bounded (`hub_network`).

`HF_ENDPOINT`, `HF_HUB_OFFLINE`, `HF_HUB_CACHE` and `HF_HOME` are read when a function is
called, not only when huggingface_hub is imported, so a process may set them late.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from parallax_zoo.catalogue.pins import (
    REFUSED_WEIGHT_SUFFIXES,
    BaselinePin,
    baseline_dirname,
    check_repo_id,
    sha256_file,
)
from parallax_zoo.errors import UserError

logger = logging.getLogger(__name__)

MIRROR_ENV_VAR = "PARALLAX_ZOO_BASELINES"
"""Names a folder to use as the local mirror instead of the repo's `baselines/`."""

_LFS_POINTER_PREFIX = b"version https://git-lfs.github.com/spec/v1"
_TRUE_VALUES = {"1", "on", "yes", "true"}
_COMMIT = re.compile(r"[0-9a-f]{40}")


class HubError(UserError, RuntimeError):
    """A baseline could not be fetched from or pushed to the Hub."""


class BaselineIntegrityError(HubError):
    """A baseline file's sha256 differs from its pin; the file was refused."""

    def __init__(self, message: str, *, filename: str, expected: str, found: str) -> None:
        super().__init__(message)
        self.filename = filename
        self.expected = expected
        self.found = found


class BaselineNotPinnedError(HubError, LookupError):
    """The env has no baseline pinned in registry.yaml."""


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


@dataclass(frozen=True)
class VerifiedFiles:
    """Files whose hashes were checked, with the very bytes that were hashed: parse `contents`, never re-read the
    folder."""

    folder: Path
    contents: Mapping[str, bytes]
    sha256: Mapping[str, str]


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
    removed from the cache. To load what was verified, use `fetch_baseline_files` and its `contents`.
    """
    return fetch_baseline_files(pin, mirror_dir, cache_dir=cache_dir, token=token).folder


def fetch_baseline_files(
    pin: BaselinePin,
    mirror_dir: Path | None,
    *,
    cache_dir: Path | None = None,
    token: str | None = None,
) -> VerifiedFiles:
    """`fetch_baseline`, returning each file's bytes as read once and hashed."""
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
            f"({', '.join(pin.files)}) in the mirror folder (the repo's baselines/<EnvId>/ or "
            f"${MIRROR_ENV_VAR}/<EnvId>/, '/' in the id written as '-')."
        )
    return _download(pin, cache, token)


def _read(path: Path) -> bytes | None:
    """A file's bytes, or None if it vanished (another process may have removed a refused file)."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _verified_mirror(pin: BaselinePin, mirror_dir: Path | None) -> VerifiedFiles | None:
    """The mirror's files if it holds every pinned file with the pinned hash; None if it lacks some; raise on a
    mismatch."""
    if mirror_dir is None:
        return None
    contents: dict[str, bytes] = {}
    for filename in pin.files:
        path = mirror_dir.joinpath(*filename.split("/"))
        data = _read(path) if path.is_file() else None
        if data is None or data.startswith(_LFS_POINTER_PREFIX):
            return None
        contents[filename] = data
    for filename, data in contents.items():
        found = hashlib.sha256(data).hexdigest()
        if found != pin.files[filename]:
            raise BaselineIntegrityError(
                f"{mirror_dir.joinpath(*filename.split('/'))} in the local mirror has sha256 {found}, but the pin of "
                f"{pin.repo_id}@{pin.revision} expects {pin.files[filename]}; the file was refused and left untouched. "
                "Restore it (e.g. `git checkout` it or delete it and run `parallax-zoo download ID`), or, if you "
                "retrained on purpose, push the new baseline with `parallax-zoo push ID` and update the pin in "
                "registry.yaml.",
                filename=filename,
                expected=pin.files[filename],
                found=found,
            )
    return VerifiedFiles(mirror_dir, contents, dict(pin.files))


def _snapshot_folder(path: Path, filename: str) -> Path:
    """The folder that `filename` (a repo path, maybe with '/') lies in at `path`."""
    return path.parents[filename.count("/")]


def _verified_cache(pin: BaselinePin, cache_dir: Path) -> VerifiedFiles | None:
    """The cached snapshot's files if it holds every pinned file with the pinned hash; bad cached files are removed."""
    from huggingface_hub import try_to_load_from_cache

    paths: dict[str, Path] = {}
    contents: dict[str, bytes] = {}
    for filename in pin.files:
        cached = try_to_load_from_cache(pin.repo_id, filename, cache_dir=cache_dir, revision=pin.revision)
        data = _read(Path(cached)) if isinstance(cached, str) else None
        if not isinstance(cached, str) or data is None:
            return None
        paths[filename], contents[filename] = Path(cached), data
    folders = {_snapshot_folder(path, filename) for filename, path in paths.items()}
    for filename, data in contents.items():
        found = hashlib.sha256(data).hexdigest()
        if found != pin.files[filename]:
            _refuse_cached(paths[filename], filename, f"{pin.repo_id}@{pin.revision}", pin.files[filename], found)
            logger.warning(
                "cached %s of %s had sha256 %s, not the pinned %s; removed it from the Hub cache "
                "and downloading it again",
                filename,
                pin.repo_id,
                found,
                pin.files[filename],
            )
            return None
    if len(folders) != 1:
        return None
    return VerifiedFiles(folders.pop(), contents, dict(pin.files))


def _refuse_cached(path: Path, filename: str, where: str, expected: str, found: str) -> None:
    """Remove a cached file whose hash is wrong; if the cache cannot be written, say so and what to do, and raise."""
    try:
        _remove_cached_file(path, filename)
    except OSError as error:
        raise BaselineIntegrityError(
            f"{filename} of {where} in the Hub cache {path.parent} has sha256 {found}, but {expected} was expected, "
            f"so it was refused; it could NOT be removed ({error.strerror or error}: the cache is read-only or "
            "another user's). Nothing was loaded. Delete that file (or the repo's folder in the cache) as its owner, "
            "or point HF_HUB_CACHE at a writable folder, and run again.",
            filename=filename,
            expected=expected,
            found=found,
        ) from error


def _download(pin: BaselinePin, cache_dir: Path, token: str | None) -> VerifiedFiles:
    """Download every pinned file into the Hub cache at one commit and verify it; return the snapshot's files."""
    revision = pin.revision
    folder: Path | None = None
    contents: dict[str, bytes] = {}
    for filename, expected in pin.files.items():
        path, data = _download_file(pin.repo_id, filename, revision, cache_dir, token)
        found = hashlib.sha256(data).hexdigest()
        if found != expected:
            where = f"{hub_endpoint()}/{pin.repo_id} at revision {revision}"
            _refuse_cached(path, filename, where, expected, found)
            raise BaselineIntegrityError(
                f"{filename} downloaded from {where} has sha256 {found}, but "
                f"the pin expects {expected}; it was refused and removed from the Hub cache. If the repo was "
                "updated on purpose, update the pin in registry.yaml from `parallax-zoo push ID`.",
                filename=filename,
                expected=expected,
                found=found,
            )
        contents[filename] = data
        folder = _snapshot_folder(path, filename)
        revision = folder.name
    assert folder is not None, "a BaselinePin always lists at least one file"
    return VerifiedFiles(folder, contents, dict(pin.files))


def _download_file(
    repo_id: str, filename: str, revision: str, cache_dir: Path, token: str | None
) -> tuple[Path, bytes]:
    """One file through huggingface_hub into the cache, with bounded waits; its cache path and its bytes, read once."""
    import httpx2
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import RemoteEntryNotFoundError, RepositoryNotFoundError, RevisionNotFoundError

    from parallax_zoo.policies.hub_network import HubFileLimit, HubGaveUp, bounded_requests, describe, file_limits

    endpoint = hub_endpoint()
    where = f"{filename} of {repo_id}@{revision} from the Hub at {endpoint} (HF_ENDPOINT)"
    blobs = cache_dir / f"models--{repo_id.replace('/', '--')}" / "blobs"
    partial_before = set(blobs.glob("*.incomplete"))
    with bounded_requests(file_limits()) as failures:
        try:
            path = Path(
                hf_hub_download(
                    repo_id,
                    filename,
                    revision=revision,
                    cache_dir=cache_dir,
                    endpoint=endpoint,
                    token=token,
                    library_name="parallax-zoo",
                )
            )
        except RepositoryNotFoundError as error:
            raise BaselineUnavailableError(
                f"could not download {where}: the repo {repo_id} does not exist there (or is private: set HF_TOKEN). "
                "Check the repo id and HF_ENDPOINT"
            ) from error
        except RevisionNotFoundError as error:
            raise BaselineUnavailableError(
                f"could not download {where}: the repo has no revision {revision}. Check the commit id"
            ) from error
        except RemoteEntryNotFoundError as error:
            raise BaselineUnavailableError(
                f"could not download {where}: the repo has no file {filename} at that revision. Check the repo and pin"
            ) from error
        except (OSError, httpx2.HTTPError, HubGaveUp, HubFileLimit) as error:
            for partial in set(blobs.glob("*.incomplete")) - partial_before:
                partial.unlink(missing_ok=True)
            if isinstance(error, HubFileLimit):
                raise BaselineUnavailableError(f"could not download {where}: {error}") from error
            cause = describe(failures[0]) if failures else describe(error)
            tries = f" ({len(failures)} failed attempts)" if failures else ""
            raise BaselineUnavailableError(
                f"could not download {where}: {cause}{tries}. Check the connection, HF_ENDPOINT and the repo id; "
                f"or work without the network: HF_HUB_OFFLINE=1 uses the files already in the Hub cache, and a local "
                f"mirror (the repo's baselines/<EnvId>/ or ${MIRROR_ENV_VAR}/<EnvId>/) holding the pinned files needs "
                "no Hub"
            ) from error
    data = _read(path)
    if data is None:
        if path.is_symlink() and not path.exists():
            # The other process unlinked this snapshot entry and its blob, and huggingface_hub linked the entry
            # again in between: remove the link left pointing at nothing, so nothing of the refused file remains.
            path.unlink(missing_ok=True)
        raise BaselineUnavailableError(
            f"{where} was removed from the Hub cache {cache_dir} by another process while this one was verifying it "
            "(that process may have refused it as tampered); run the command again"
        )
    return path, data


def fetch_hub_files(repo_and_commit: str, filenames: tuple[str, ...], *, token: str | None = None) -> VerifiedFiles:
    """`filenames` of a Hub model repo at a commit (`REPO@<40-hex commit>`), each checked against the Hub's own hashes.

    The Hub reports, per file at that commit, the sha256 of an LFS file and the git blob id
    (sha1 of "blob <size>\\0" + bytes) of any other; a file whose bytes do not match is refused and
    removed from the cache. A branch or tag is refused: it moves, so a result could not be reproduced.
    """
    repo_id, commit = parse_repo_at_commit(repo_and_commit)
    endpoint = hub_endpoint()
    cache = hub_cache_dir()
    reported = _reported_hashes(repo_id, commit, filenames, token)
    contents: dict[str, bytes] = {}
    hashes: dict[str, str] = {}
    folder: Path | None = None
    for filename in filenames:
        path, data = _download_file(repo_id, filename, commit, cache, token)
        kind, expected = reported[filename]
        found = hashlib.sha256(data).hexdigest() if kind == "sha256" else git_blob_id(data)
        if found != expected:
            where = f"{endpoint}/{repo_id} at commit {commit}"
            _refuse_cached(path, filename, where, expected, found)
            raise BaselineIntegrityError(
                f"{filename} downloaded from {where} has {kind} {found}, but the Hub reports {expected} for it at that "
                "commit; the file was refused and removed from the Hub cache. The download or the Hub's storage is "
                "corrupt: try again later, or ask the repo's owner to re-upload it",
                filename=filename,
                expected=expected,
                found=found,
            )
        contents[filename], hashes[filename] = data, hashlib.sha256(data).hexdigest()
        folder = _snapshot_folder(path, filename)
    assert folder is not None, "fetch_hub_files needs at least one filename"
    return VerifiedFiles(folder, contents, hashes)


def parse_repo_at_commit(repo_and_commit: str) -> tuple[str, str]:
    """`REPO@COMMIT` split, the commit checked to be 40 lowercase hex digits (a branch or tag is refused)."""
    repo_id, _, revision = repo_and_commit.partition("@")
    check_repo_id(repo_id)
    if not _COMMIT.fullmatch(revision):
        given = f"revision {revision!r}" if revision else "no revision"
        raise HubError(
            f"hub:{repo_and_commit} names {given}; a Hub policy must name a commit, hub:{repo_id}@<40-hex commit id>, "
            "because a branch or tag moves and the result could not be reproduced. The commit is printed by "
            f"`HfApi().model_info({repo_id!r}).sha` or shown on the repo's 'Files and versions' page"
        )
    return repo_id, revision


def git_blob_id(data: bytes) -> str:
    """The git object id of a file's bytes, which the Hub reports for files not stored through LFS."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _reported_hashes(
    repo_id: str, commit: str, filenames: tuple[str, ...], token: str | None
) -> dict[str, tuple[str, str]]:
    """Per file, ("sha256", hex) for an LFS file or ("git blob id", hex) for another, as the Hub reports them at
    `commit`."""
    import httpx2
    from huggingface_hub import HfApi
    from huggingface_hub.errors import RepositoryNotFoundError, RevisionNotFoundError

    from parallax_zoo.policies.hub_network import HubFileLimit, HubGaveUp, bounded_requests, describe, file_limits

    endpoint = hub_endpoint()
    with bounded_requests(file_limits()) as failures:
        try:
            info = HfApi(endpoint=endpoint, token=token, library_name="parallax-zoo").model_info(
                repo_id, revision=commit, files_metadata=True
            )
        except RepositoryNotFoundError as error:
            raise HubError(
                f"no Hub model repo {repo_id} at {endpoint} (HF_ENDPOINT), or it is private (set HF_TOKEN); "
                "check the repo id"
            ) from error
        except RevisionNotFoundError as error:
            raise HubError(
                f"the Hub repo {repo_id} at {endpoint} has no commit {commit}; check the commit id"
            ) from error
        except (OSError, httpx2.HTTPError, HubGaveUp, HubFileLimit) as error:
            cause = (
                str(error)
                if isinstance(error, HubFileLimit)
                else describe(failures[0])
                if failures
                else describe(error)
            )
            raise BaselineUnavailableError(
                f"could not read the file list of {repo_id}@{commit} from the Hub at {endpoint} (HF_ENDPOINT): "
                f"{cause}. Check the connection and HF_ENDPOINT"
            ) from error
    siblings = {sibling.rfilename: sibling for sibling in info.siblings or []}
    reported: dict[str, tuple[str, str]] = {}
    for filename in filenames:
        sibling = siblings.get(filename)
        if sibling is None:
            raise HubError(
                f"the Hub repo {repo_id} has no {filename} at commit {commit} (it has "
                f"{sorted(siblings) or 'no files'}); "
                "a policy repo holds config.yaml and model.safetensors, as `parallax-zoo train` writes them"
            )
        if sibling.lfs is not None:
            reported[filename] = ("sha256", sibling.lfs.sha256)
        elif sibling.blob_id:
            reported[filename] = ("git blob id", sibling.blob_id)
        else:
            raise HubError(
                f"the Hub at {endpoint} reports no hash for {filename} of {repo_id}@{commit}; it cannot be verified"
            )
    return reported


def _remove_cached_file(pointer: Path, filename: str) -> None:
    """Remove a file from the Hub cache: its snapshot entry and the repo blob it links to, so it is never served again.

    A blob that is itself a link into the cache-wide shared store (Xet downloads) is unlinked from
    this repo; the shared store entry is left for the other repos that may reference it. Another
    process may have removed either already (it refused the same file): that is not an error.
    """
    repo_cache = _snapshot_folder(pointer, filename).parent.parent
    try:
        blob: Path | None = Path(os.path.normpath(pointer.parent / os.readlink(pointer)))
    except FileNotFoundError:
        blob = None  # removed already
    except OSError:
        blob = None  # a plain file (a filesystem without links): removing the pointer removes the bytes
    pointer.unlink(missing_ok=True)
    if blob is not None and blob.parent == repo_cache / "blobs":
        blob.unlink(missing_ok=True)


def push_baseline(folder: Path, repo_id: str, *, token: str | None = None, private: bool = False) -> BaselinePin:
    """Create or update the Hub model repo from a baseline folder; return the pin (real commit, real hashes) to
    record."""
    import httpx2
    from huggingface_hub import CommitOperationAdd, HfApi

    from parallax_zoo.policies.hub_network import HubGaveUp, bounded_requests, describe

    files = _baseline_files(folder)
    check_repo_id(repo_id)
    hashes = {filename: sha256_file(path) for filename, path in files.items()}
    endpoint = hub_endpoint()
    api = HfApi(endpoint=endpoint, token=token, library_name="parallax-zoo")
    with bounded_requests() as failures:
        try:
            api.create_repo(repo_id, private=private, exist_ok=True)
            commit = api.create_commit(
                repo_id,
                operations=[CommitOperationAdd(filename, str(path)) for filename, path in files.items()],
                commit_message=f"Upload parallax-zoo baseline from {folder.name}",
            )
        except (OSError, httpx2.HTTPError, ValueError, HubGaveUp) as error:
            cause = describe(failures[0]) if failures else describe(error)
            raise HubError(f"could not push {folder} to {endpoint}/{repo_id} (HF_ENDPOINT): {cause}") from error
    return BaselinePin(repo_id=repo_id, revision=commit.oid, files=hashes)


def _baseline_files(folder: Path) -> dict[str, Path]:
    """Every file of a baseline folder to upload, by repo path; refuses pickle weights and a folder without
    safetensors."""
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
