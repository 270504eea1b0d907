"""The pip command that installs one of parallax-zoo's extras, as the missing-package errors print it.

The package is not on a package index: from a clone (the checkout this code runs from) the command installs the
clone with the extra, `pip install -e '.[pgx]'`; an installed wheel gets the extra by name.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[1]


def _shown(path: Path) -> str:
    """`path` relative to the working directory when it lies below it ('.' for the directory itself)."""
    try:
        return str(path.relative_to(Path.cwd())) or "."
    except ValueError:
        return str(path)


def install_command(extra: str) -> str:
    """`PIP install -e 'CLONE[extra]'` from a clone of parallax-zoo, else `pip install 'parallax-zoo[extra]'`."""
    pyproject = CHECKOUT / "pyproject.toml"
    if pyproject.is_file() and 'name = "parallax-zoo"' in pyproject.read_text(encoding="utf-8"):
        pip = Path(sys.executable).with_name("pip")
        shown_pip = _shown(Path(os.path.abspath(pip))) if pip.is_file() else f"{sys.executable} -m pip"
        return f"{shown_pip} install -e '{_shown(CHECKOUT)}[{extra}]'"
    return f"pip install 'parallax-zoo[{extra}]'"
