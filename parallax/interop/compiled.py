"""`Static`: an env as a static argument of `jax.jit`, so every export of one env object shares its compiled code."""

from __future__ import annotations

from typing import Any


class Static:
    """Hashes and compares by the identity of the env it holds; envs keep their config on the object, never in it."""

    __slots__ = ("env",)

    def __init__(self, env: Any):
        self.env = env

    def __hash__(self) -> int:
        return id(self.env)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Static) and other.env is self.env
