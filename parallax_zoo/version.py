"""The version of parallax-zoo: the installed distribution's, else the source tree's pyproject.toml. Standard library only.

Run from a checkout that is not installed (PYTHONPATH set to it), the
distribution has no metadata; the version is then read from the
pyproject.toml beside the package, so configs and results still record it.
"""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

DISTRIBUTION = "parallax-zoo"


def version() -> str:
    """`parallax-zoo`'s version: from the installed metadata, else the checkout's pyproject.toml."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        pass
    pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
    if pyproject.is_file():
        found = re.search(r'^version\s*=\s*"([^"]+)"', pyproject.read_text(encoding="utf-8"), re.MULTILINE)
        if found:
            return f"{found.group(1)}+source"
    return "unknown"


__version__ = version()
