"""Progress of long evaluations on stderr: what is being played, games done of how many, time left.

The CLI turns it on for a command (`with shown(): ...`); library calls stay silent unless they ask. The bar moves
once per jitted batch (an opponent's games, a round-robin pair), so it costs nothing inside the compiled programs.
"""

from __future__ import annotations

import contextvars
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_SHOWN = contextvars.ContextVar("parallax_zoo_progress_shown", default=False)

BAR_FORMAT = "{desc}: {n_fmt}/{total_fmt} {unit} [{elapsed}<{remaining}]{postfix}"


@contextmanager
def shown() -> Iterator[None]:
    """Show the progress of every evaluation and match inside the block on stderr."""
    token = _SHOWN.set(True)
    try:
        yield
    finally:
        _SHOWN.reset(token)


@contextmanager
def bar(description: str, total: int, unit: str) -> Iterator[Any]:
    """A tqdm bar on stderr while progress is shown, else one that draws nothing; `update(n)` after each batch."""
    from tqdm import tqdm

    with tqdm(
        total=total,
        desc=description,
        unit=unit,
        bar_format=BAR_FORMAT,
        file=sys.stderr,
        mininterval=0,
        disable=not _SHOWN.get(),
        dynamic_ncols=True,
    ) as progress:
        yield progress
