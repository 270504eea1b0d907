"""Replacing a training run's folder as one step: written whole in a staging folder beside it, then swapped in.

The old folder stays whole until the swap (docs/baselines.md, "Training"): it is
renamed aside to `.<name>.previous`, the staged folder renamed into its place,
and the old one removed. Ctrl-C is held back during the swap; a process killed
between the two renames leaves the old folder aside, and the next run into the
folder puts it back (`recover`) before it trains.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


@contextmanager
def staged_beside(target: Path) -> Iterator[Path]:
    """A new empty staging folder beside `target` for the block; whatever of it was not moved in is removed after,
    so a failed or interrupted run leaves nothing half-written."""
    folder = staging_folder(target)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def staging_folder(target: Path) -> Path:
    """A new empty folder beside `target` (same filesystem, so a rename moves it in one step)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix=f".{target.name}.staging-", dir=target.parent))
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(folder, 0o777 & ~mask)  # a folder's usual permissions, not mkdtemp's 0700
    return folder


def aside_folder(target: Path) -> Path:
    """Where `swap_in` keeps the old `target` while the new one moves in."""
    return target.parent / f".{target.name}.previous"


def swap_in(staged: Path, target: Path) -> None:
    """Put the folder `staged` in the place of `target` (which may be missing); the old folder is removed after."""
    aside = aside_folder(target)
    shutil.rmtree(aside, ignore_errors=True)
    with deferred_interrupts():
        if target.exists():
            os.replace(target, aside)
        os.replace(staged, target)
    shutil.rmtree(aside, ignore_errors=True)


def move_files_in(staged: Path, target: Path) -> None:
    """Move each file of `staged` into `target` by a rename, keeping `target`'s other entries; `staged` goes."""
    target.mkdir(parents=True, exist_ok=True)
    with deferred_interrupts():
        for path in sorted(staged.iterdir()):
            os.replace(path, target / path.name)
    shutil.rmtree(staged, ignore_errors=True)


def recover(target: Path, is_current: Callable[[Path], bool] | None = None) -> None:
    """Undo what a run killed mid-way left beside `target`: its staging folders go, and an old folder set aside
    comes back when `target` is missing or, for a pinned folder, when `is_current` (whether a folder matches
    registry.yaml's pin) says the old folder is the pinned one and `target` is not."""
    for leftover in target.parent.glob(f".{target.name}.staging-*"):
        shutil.rmtree(leftover, ignore_errors=True)
    aside = aside_folder(target)
    if not aside.is_dir():
        return
    if not target.exists():
        os.replace(aside, target)
    elif is_current is not None and not is_current(target) and is_current(aside):
        staged = staging_folder(target)
        os.replace(target, staged / target.name)
        os.replace(aside, target)
        shutil.rmtree(staged, ignore_errors=True)
    else:
        shutil.rmtree(aside, ignore_errors=True)


@contextmanager
def deferred_interrupts() -> Iterator[None]:
    """Hold back SIGINT and SIGTERM for the block (in the main thread); one that arrived is delivered after it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = {signal.SIGINT, signal.SIGTERM}
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


@contextmanager
def interrupts_noticed() -> Iterator[Callable[[], None]]:
    """For the block, Ctrl-C raises KeyboardInterrupt as usual and is also remembered: the function yielded raises
    it again at a safe point if the first one was swallowed (Python only prints one raised inside a finalizer), so
    a long run still stops. Leaves a SIGINT handler other than Python's default (a notebook's) alone."""
    if threading.current_thread() is not threading.main_thread() or (
        signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield lambda: None
        return
    seen: list[int] = []

    def remember(signum: int, frame: Any) -> None:
        seen.append(signum)
        raise KeyboardInterrupt

    def check() -> None:
        if seen:
            raise KeyboardInterrupt

    signal.signal(signal.SIGINT, remember)
    try:
        yield check
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
