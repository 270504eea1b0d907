"""MuJoCo's warnings as Python warnings: by default MuJoCo prints them from C and appends them to a MUJOCO_LOG.TXT
in the working folder, neither of which belongs to the caller (docs/suites.md, "What every adapter guarantees")."""

from __future__ import annotations

import contextlib
import importlib
import sys
import warnings
from collections.abc import Iterator


class MuJoCoWarning(UserWarning):
    """A warning MuJoCo gave (e.g. a deprecated attribute in a suite's own XML, an unstable simulation)."""


@contextlib.contextmanager
def mujoco_warnings_as_python_warnings(import_mujoco: bool = True) -> Iterator[None]:
    """Inside the block, MuJoCo's warnings are `MuJoCoWarning`s. With `import_mujoco=False` the block only
    catches them once MuJoCo was already imported by something else (JaxMARL imports it with Brax), so a suite
    that never touches MuJoCo does not pay for importing it."""
    if not import_mujoco and "mujoco" not in sys.modules:
        yield
        return
    mujoco = importlib.import_module("mujoco")  # its handler setters are compiled, absent from its type stubs
    previous = mujoco.get_mju_user_warning()
    mujoco.set_mju_user_warning(lambda message: warnings.warn(f"MuJoCo: {message}", MuJoCoWarning, stacklevel=2))
    try:
        yield
    finally:
        mujoco.set_mju_user_warning(previous)


__all__ = ["MuJoCoWarning", "mujoco_warnings_as_python_warnings"]
