"""Checking an environment's constructor arguments against its annotations, before anything is built.

An env states each argument's type, and where it matters its range, in the
signature: `size: Annotated[int, Range(ge=2)] = 5`. `check_arguments` reads
them, so the constructor and the zoo's registry refuse a bad value with the
same message: which argument, what it must be, what was given.
"""

from __future__ import annotations

import inspect
import math
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union

import numpy as np


@dataclass(frozen=True)
class Range:
    """Bounds for `typing.Annotated`: `ge`/`gt` below, `le`/`lt` above, any of them left out."""

    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None

    def contains(self, value: Any) -> bool:
        """Whether `value` lies within every bound (NaN lies within none)."""
        checks = (
            (self.ge, lambda bound: value >= bound),
            (self.gt, lambda bound: value > bound),
            (self.le, lambda bound: value <= bound),
            (self.lt, lambda bound: value < bound),
        )
        return all(bool(holds(bound)) for bound, holds in checks if bound is not None)

    def __str__(self) -> str:
        low = (f"{self.ge:g}", "[") if self.ge is not None else (f"{self.gt:g}", "(") if self.gt is not None else None
        high = (f"{self.le:g}", "]") if self.le is not None else (f"{self.lt:g}", ")") if self.lt is not None else None
        if low and high:
            return f"in {low[1]}{low[0]}, {high[0]}{high[1]}"
        if low:
            return f"{'>=' if low[1] == '[' else '>'} {low[0]}"
        if high:
            return f"{'<=' if high[1] == ']' else '<'} {high[0]}"
        return "any value"


class InvalidArgumentError(TypeError, ValueError):
    """An argument of the wrong type or outside its range; the message names it, what it must be and what was given."""


def check_arguments(target: Callable[..., Any], arguments: Mapping[str, Any], where: str) -> None:
    """Raise `InvalidArgumentError` for the first of `arguments` that `target`'s annotations refuse.

    `target` is a class (its `__init__` is read) or a function. Arguments
    without an annotation, and annotations other than plain types, unions,
    `Literal` and `Annotated[..., Range(...)]`, are not checked.
    """
    annotations = _annotations(target)
    for name, value in arguments.items():
        if name in annotations:
            expected = argument_problem(annotations[name], value)
            if expected is not None:
                raise InvalidArgumentError(
                    f"{where}: argument {name!r} must be {expected}, got {value!r} ({type(value).__name__})"
                )


def argument_problem(annotation: Any, value: Any) -> str | None:
    """What `value` should be to satisfy `annotation` (e.g. "an int >= 2"), or None where it does."""
    base, ranges = annotation, []
    if typing.get_origin(annotation) is Annotated:
        base, *metadata = typing.get_args(annotation)
        ranges = [item for item in metadata if isinstance(item, Range)]
    expected = _type_problem(base, value)
    if expected is not None:
        return " ".join([expected, *map(str, ranges)])
    for bounds in ranges:
        if not bounds.contains(value):
            return f"{_describe(base)} {bounds}"
    return None


def _type_problem(annotation: Any, value: Any) -> str | None:
    origin = typing.get_origin(annotation)
    if annotation is Any or annotation is inspect.Parameter.empty:
        return None
    if origin is Union or origin is types.UnionType:
        members = typing.get_args(annotation)
        if any(_type_problem(member, value) is None for member in members):
            return None
        return " or ".join(_describe(member) for member in members)
    if origin is Literal:
        options = typing.get_args(annotation)
        return None if value in options else f"one of {', '.join(map(repr, options))}"
    if annotation is None or annotation is type(None):
        return None if value is None else "None"
    if annotation is bool:
        return None if isinstance(value, (bool, np.bool_)) else "a bool"
    if annotation is int:
        return None if _is_int(value) else "an int"
    if annotation is float:
        if not (_is_int(value) or isinstance(value, (float, np.floating))):
            return "a finite float"
        return None if math.isfinite(value) else "a finite float"
    runtime_type = origin if isinstance(origin, type) else annotation
    if isinstance(runtime_type, type) and not isinstance(value, runtime_type):
        return _describe(annotation)
    return None


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _describe(annotation: Any) -> str:
    names = {int: "an int", float: "a finite float", bool: "a bool", str: "a str", type(None): "None"}
    if annotation in names:
        return names[annotation]
    return getattr(annotation, "__name__", str(annotation))


def _annotations(target: Callable[..., Any]) -> dict[str, Any]:
    """The resolved annotations of `target`'s parameters: of `__init__` for a class; empty where unreadable."""
    function = target.__init__ if inspect.isclass(target) else target
    try:
        return typing.get_type_hints(function, include_extras=True)
    except (NameError, TypeError, AttributeError):  # a signature that does not resolve is not checked
        return {}


__all__ = ["InvalidArgumentError", "Range", "argument_problem", "check_arguments"]
