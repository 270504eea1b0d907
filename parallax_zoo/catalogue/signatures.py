"""Checks keyword arguments against what a constructor accepts, before calling it: names, types and ranges."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from parallax.arguments import InvalidArgumentError, check_arguments


class InvalidKwargError(InvalidArgumentError):
    """A keyword argument the environment does not take, or a value it refuses; names it and what would be right."""


def accepted_kwargs(target: Callable[..., Any]) -> list[str] | None:
    """The keyword names `target` accepts; None if anything goes.

    For a class, the constructors its classes define are read in method
    resolution order, following one that takes `**kwargs` (the cooperative
    `super().__init__(**kwargs)` pattern) until one without; a class that
    defines none takes no keyword arguments.
    """
    if inspect.isclass(target):
        classes = [c for c in inspect.getmro(target) if c is not object and "__init__" in vars(c)]
        callables: list[Callable[..., Any]] = [vars(c)["__init__"] for c in classes]
    else:
        callables = [target]
    names: list[str] = []
    for function in callables:
        try:
            parameters = inspect.signature(function).parameters.values()
        except (TypeError, ValueError):
            return None
        keyword_kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        names += [p.name for p in parameters if p.kind in keyword_kinds and p.name != "self" and p.name not in names]
        if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
            return names
    return names if not callables else None


def check_kwargs(env_id: str, kwargs: Mapping[str, Any], accepted: Callable[..., Any] | Iterable[str]) -> None:
    """Raise `InvalidKwargError` for the first kwarg not in `accepted` (names, or a callable's signature).

    With a callable, each value is also checked against its parameter's
    annotation and range (`parallax.arguments`), so that nothing is built
    from a value of the wrong type.
    """
    names = accepted_kwargs(accepted) if callable(accepted) else list(accepted)
    if names is not None:
        unknown = [name for name in kwargs if name not in names]
        if unknown:
            raise InvalidKwargError(
                f"{env_id} does not take the keyword argument{'s' if len(unknown) > 1 else ''} "
                f"{', '.join(repr(n) for n in unknown)}. It accepts: {', '.join(names) if names else '(none)'}."
            )
    if callable(accepted):
        try:
            check_arguments(accepted, kwargs, where=env_id)
        except InvalidArgumentError as error:
            raise InvalidKwargError(str(error)) from None
