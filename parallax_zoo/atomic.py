"""Writing files so that nothing half-written is ever left behind: a temporary name, then a rename."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path


class OutputNotWrittenError(OSError):
    """A file could not be written (no space, a folder in the way, a file where a folder should be); what was
    there before is unchanged. The message names the path and the reason."""

    def __str__(self) -> str:
        return str(self.strerror)


def atomic_write(path: str | os.PathLike[str], write: Callable[[Path], object]) -> Path:
    """Call `write(temporary)` for a temporary file beside `path`, then rename it onto `path`.

    On any failure the temporary file is removed and `path` keeps its old content; a failure of the file
    system (no space, a folder in the way) is an `OutputNotWrittenError` naming `path`.
    The file gets the usual permissions (0666 less the umask), not the temporary's 0600.
    """
    path = Path(path)
    temporary = _stage(path, write)
    try:
        os.replace(temporary, path)
    except OSError as error:
        raise _not_written(path, error) from error
    finally:
        temporary.unlink(missing_ok=True)
    return path


def atomic_write_all(files: Mapping[Path, Callable[[Path], object]]) -> list[Path]:
    """Write several files as one set: every file is staged beside its path first, then all are renamed in.

    Either every path gets its new content or, on any failure (an `OutputNotWrittenError` naming the path),
    every path keeps its old content (or stays absent) and no temporary file is left behind.
    """
    staged: dict[Path, Path] = {}
    moved: list[tuple[Path, Path | None]] = []  # (path, where its old content waits), in the order renamed in
    try:
        for path, write in files.items():
            staged[Path(path)] = _stage(Path(path), write)
        for path, temporary in staged.items():
            try:
                if path.is_dir():
                    raise IsADirectoryError(21, "a folder is in the way", str(path))
                previous = None
                if path.exists():
                    handle, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".old", dir=path.parent)
                    os.close(handle)
                    previous = Path(name)
                    try:
                        os.replace(path, previous)
                    except OSError:
                        previous.unlink(missing_ok=True)
                        raise
                moved.append((path, previous))
                os.replace(temporary, path)
            except OSError as error:
                raise _not_written(path, error) from error
    except BaseException:
        for path, previous in reversed(moved):
            if previous is not None:
                os.replace(previous, path)
            else:
                path.unlink(missing_ok=True)
        raise
    finally:
        for temporary in staged.values():
            temporary.unlink(missing_ok=True)
    for _, previous in moved:
        if previous is not None:
            previous.unlink(missing_ok=True)
    return list(staged)


def check_writable(path: str | os.PathLike[str]) -> None:
    """Refuse, before any work, a `path` that cannot become a file: a folder stands there, or a file stands
    where one of its folders should be (`OutputNotWrittenError`)."""
    path = Path(path)
    if path.is_dir():
        raise _not_written(path, IsADirectoryError(21, "a folder is in the way"))
    blocking = next((parent for parent in path.parents if parent.exists() and not parent.is_dir()), None)
    if blocking is not None:
        raise _not_written(path, NotADirectoryError(20, f"{blocking} is a file, not a folder"))


def _stage(path: Path, write: Callable[[Path], object]) -> Path:
    """`write` into a new temporary file beside `path` (its folder made if needed), with the usual permissions."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as error:
        raise _not_written(path, error) from error
    os.close(handle)
    temporary = Path(name)
    try:
        write(temporary)
        os.chmod(temporary, 0o666 & ~_umask())
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise _not_written(path, error) from error
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return temporary


def _not_written(path: Path, error: OSError) -> OutputNotWrittenError:
    """The error saying `path` was not written, why, and that what was there is unchanged."""
    if isinstance(error, OutputNotWrittenError):
        return error
    reason = error.strerror or str(error)
    blocking = next((parent for parent in path.parents if parent.exists() and not parent.is_dir()), None)
    if blocking is not None and str(blocking) not in reason:
        reason = f"{reason} ({blocking} is a file, not a folder)"
    return OutputNotWrittenError(
        error.errno, f"cannot write {path}: {reason}; nothing there was changed. Free some space or choose another path"
    )


def _umask() -> int:
    """The process's file-creation mask (read by setting it, then restoring it)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text_atomic(path: str | os.PathLike[str], text: str) -> Path:
    """Write a UTF-8 text file atomically."""
    return atomic_write(path, lambda temporary: temporary.write_text(text, encoding="utf-8"))


def write_texts_atomic(texts: Mapping[Path, str]) -> list[Path]:
    """Write several UTF-8 text files as one set (`atomic_write_all`): all of them, or none."""
    return atomic_write_all(
        {
            Path(path): (lambda temporary, text=text: temporary.write_text(text, encoding="utf-8"))
            for path, text in texts.items()
        }
    )
