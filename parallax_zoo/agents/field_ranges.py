"""The range each numeric hyperparameter may take, and the check configs run on themselves before any training."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class FieldRange:
    """An interval of finite numbers, each end closed unless said open; `high=inf` leaves it unbounded above."""

    low: float
    high: float = math.inf
    low_open: bool = False
    high_open: bool = False

    def holds(self, value: float) -> bool:
        if not math.isfinite(value):
            return False
        above = value > self.low if self.low_open else value >= self.low
        below = value < self.high if self.high_open else value <= self.high
        return above and below

    def describe(self, name: str) -> str:
        """The interval in words, e.g. "0 <= gamma <= 1" or "vf_clip > 0" (a finite number in both)."""
        low = f"{_number(self.low)} {'<' if self.low_open else '<='} {name}"
        if math.isinf(self.high):
            return f"{name} {'>' if self.low_open else '>='} {_number(self.low)}"
        return f"{low} {'<' if self.high_open else '<='} {_number(self.high)}"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(value)


def out_of_range(config: Any, ranges: Mapping[str, FieldRange]) -> list[str]:
    """One sentence per field of `config` outside its range: the field, its value and the range."""
    problems = []
    for name, allowed in ranges.items():
        value = getattr(config, name)
        values = value if isinstance(value, tuple) else (value,)
        if not all(isinstance(v, numbers.Real) and not isinstance(v, bool) and allowed.holds(float(v)) for v in values):
            shown = f"each of {name}" if isinstance(value, tuple) else name
            problems.append(f"{name}={value!r} is out of range: expected {allowed.describe(shown)}, a finite number")
    return problems
