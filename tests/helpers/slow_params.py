"""Parametrizing over many cases of which only a few run in the default suite (docs/development.md)."""

from __future__ import annotations

from collections.abc import Iterable

import pytest


def slow_except(values: Iterable[object], by_default: set[object]) -> list[object]:
    """`values` as pytest parameters, each one not in `by_default` marked `slow` (run with --run-slow)."""
    return [value if value in by_default else pytest.param(value, marks=pytest.mark.slow) for value in values]
