"""The one base class of errors caused by what a user gave: a bad file, flag, id or remote repo.

Every such error says what was wrong and what to do. The `parallax-zoo`
command prints it as one line and exits 2; any other exception is a bug
and keeps its traceback (exit 1). Raise a subclass of `UserError` (most
also derive from the built-in type a caller would expect, e.g. `ValueError`).
"""

from __future__ import annotations


class UserError(Exception):
    """Bad input from the user (docs/getting-started.md, "The command line"): the message names what was wrong and
    what to do."""


def one_line(error: BaseException) -> str:
    """The error's message on one line: its lines joined with '; ', surrounding whitespace dropped."""
    return "; ".join(line.strip() for line in str(error).splitlines() if line.strip())
