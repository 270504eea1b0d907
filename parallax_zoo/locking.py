"""Exclusive locks between processes that leave no lock file behind: `flock` on a file its holder removes.

The holder unlinks the lock file before it lets go, and a process that locked a
file already unlinked (it opened the name just before) tries again on the new
one, so two processes never both hold a lock of the same name.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class LockTimeout(TimeoutError):
    """Another process held the lock for longer than the caller would wait."""


def lock_beside(path: str | os.PathLike[str]) -> Path:
    """The lock named for the file or folder `path`: `.<name>.lock` beside it (present only while held)."""
    path = Path(path)
    return path.parent / f".{path.name}.lock"


@contextmanager
def exclusive_lock(path: str | os.PathLike[str], timeout: float) -> Iterator[None]:
    """Hold the lock named `path` for the block, waiting at most `timeout` seconds for it (0: one try).

    Raises `LockTimeout` when another process still holds it by then; the file is gone once the block ends.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + timeout
    while True:
        handle = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        if _try_lock(handle) and _is_current(handle, path):
            break
        os.close(handle)
        if time.monotonic() >= deadline:
            raise LockTimeout(f"{path} is held by another process")
        time.sleep(0.02)
    try:
        yield
    finally:
        path.unlink(missing_ok=True)
        os.close(handle)


def _try_lock(handle: int) -> bool:
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _is_current(handle: int, path: Path) -> bool:
    """Whether the locked file is still the one at `path` (its last holder may have unlinked it meanwhile)."""
    try:
        named = path.stat()
    except FileNotFoundError:
        return False
    opened = os.fstat(handle)
    return (named.st_dev, named.st_ino) == (opened.st_dev, opened.st_ino)
