"""Checks keyword arguments against what a constructor accepts, before calling it."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any


class InvalidKwargError(TypeError):
    """A keyword argument the environment does not take; names it and the accepted ones."""


def accepted_kwargs(target: Callable[..., Any]) -> list[str] | None:
    """The keyword names `target` accepts; None if anything goes.

    For a class, a constructor that takes `**kwargs` is followed up the bases
    (the cooperative `super().__init__(**kwargs)` pattern) until one without.
    """
    classes = inspect.getmro(target) if inspect.isclass(target) else ()
    callables: list[Callable[..., Any]] = [c.__init__ for c in classes if c is not object] if classes else [target]
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
    return None


def check_kwargs(env_id: str, kwargs: Mapping[str, Any], accepted: Callable[..., Any] | Iterable[str]) -> None:
    """Raise `InvalidKwargError` naming the first kwarg not in `accepted` (names, or a callable's signature)."""
    names = accepted_kwargs(accepted) if callable(accepted) else list(accepted)
    if names is None:
        return
    unknown = [name for name in kwargs if name not in names]
    if unknown:
        raise InvalidKwargError(
            f"{env_id} does not take the keyword argument{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(repr(n) for n in unknown)}. It accepts: {', '.join(names) if names else '(none)'}."
        )
