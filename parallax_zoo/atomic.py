"""Writing files so that nothing half-written is ever left behind: a temporary name, then a rename."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def atomic_write(path: str | os.PathLike[str], write: Callable[[Path], object]) -> Path:
    """Call `write(temporary)` for a temporary file beside `path`, then rename it onto `path`.

    On any failure the temporary file is removed and `path` keeps its old content.
    The file gets the usual permissions (0666 less the umask), not the temporary's 0600.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(handle)
    temporary = Path(name)
    try:
        write(temporary)
        os.chmod(temporary, 0o666 & ~_umask())
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    return path


def _umask() -> int:
    """The process's file-creation mask (read by setting it, then restoring it)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text_atomic(path: str | os.PathLike[str], text: str) -> Path:
    """Write a UTF-8 text file atomically."""
    return atomic_write(path, lambda temporary: temporary.write_text(text, encoding="utf-8"))
