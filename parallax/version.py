"""The one version of `parallax` and `parallax_zoo` (one distribution, `parallax-zoo`), and the package versions a
result records.

The number is written once, in pyproject.toml; this reads it from the installed
metadata. Standard library only.

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


VERSIONED_PACKAGES = (DISTRIBUTION, "jax", "jaxlib", "flax", "optax")
"""The packages whose versions a saved config or an evaluation result records."""


def package_versions() -> dict[str, str]:
    """The installed versions of the packages a result depends on, recorded in configs and results."""
    versions = {}
    for package in VERSIONED_PACKAGES:
        if package == DISTRIBUTION:
            versions[package] = version()
            continue
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = "not installed"
    return versions


__version__ = version()
