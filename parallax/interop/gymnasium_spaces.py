"""Parallax spaces as Gymnasium spaces, and one agent's slot of a stacked multi-agent space.

Both Gymnasium and PettingZoo describe what an env accepts and emits with
`gymnasium.spaces`; the conversion keeps shapes, dtypes and per-element
bounds exactly (docs/interop.md lists the pairs).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import gymnasium
import jax
import numpy as np

from parallax.spaces import Box, Discrete, MultiBinary, MultiDiscrete, PyTreeSpace, Space


def to_gymnasium_space(space: Any) -> gymnasium.spaces.Space:
    """The Gymnasium space holding exactly the values `space` holds.

    `Discrete` becomes `Discrete` (whose values Gymnasium holds as `np.int64`,
    see `scalar_converter`; a `MultiDiscrete` when it has a shape),
    `Box` a `Box` with the same per-element bounds and dtype, `MultiDiscrete`
    and `MultiBinary` their namesakes (a non-int8 `MultiBinary` a 0/1 `Box`),
    and a `PyTreeSpace` of dicts, tuples and lists a `Dict` or `Tuple` (a NamedTuple, or another mapping such as
    Jumanji's dataclasses, a `Dict` by field).
    """
    if isinstance(space, Discrete):
        if space.shape == ():
            return gymnasium.spaces.Discrete(space.n)
        return gymnasium.spaces.MultiDiscrete(np.full(space.shape, space.n), dtype=_scalar_type(space))
    if isinstance(space, Box):
        return gymnasium.spaces.Box(space.low, space.high, space.shape, _scalar_type(space))
    if isinstance(space, MultiDiscrete):
        return gymnasium.spaces.MultiDiscrete(np.array(space.nvec), dtype=_scalar_type(space))
    if isinstance(space, MultiBinary):
        if np.dtype(space.dtype) == np.int8 and space.shape != ():
            return gymnasium.spaces.MultiBinary(space.shape[0] if len(space.shape) == 1 else space.shape)
        return gymnasium.spaces.Box(0, 1, space.shape, _scalar_type(space))
    if isinstance(space, PyTreeSpace):
        return to_gymnasium_space(space.spaces)
    if isinstance(space, dict):
        return gymnasium.spaces.Dict({key: to_gymnasium_space(value) for key, value in space.items()})
    if _is_record(space):  # Jumanji's observations and the dataclasses inside them: a Dict by field
        return to_gymnasium_space(_as_dict(space))
    if isinstance(space, (tuple, list)):
        return gymnasium.spaces.Tuple(tuple(to_gymnasium_space(value) for value in space))
    raise TypeError(
        f"no Gymnasium space corresponds to {space!r}: the exports convert Discrete, Box, MultiDiscrete, "
        "MultiBinary and PyTreeSpaces of dicts, tuples, NamedTuples, other mappings and lists of them. "
        "Give the env one of those spaces."
    )


def _is_record(value: Any) -> bool:
    """Whether `value` is a record other than a dict (a NamedTuple, or a mapping such as a chex dataclass), which the
    exports give as a dict keyed by field (docs/interop.md)."""
    return (isinstance(value, tuple) and hasattr(value, "_fields")) or (
        isinstance(value, Mapping) and not isinstance(value, dict)
    )


def _as_dict(record: Any) -> dict[str, Any]:
    """A record's fields as a plain dict, in the record's own order."""
    if isinstance(record, Mapping):
        return {key: record[key] for key in record.keys()}
    return dict(zip(record._fields, record))


def _scalar_type(space: Any) -> Any:
    """The NumPy scalar type of a space's dtype, the form Gymnasium's constructors take."""
    return np.dtype(space.dtype).type


def slot_space(space: Space, slot: int) -> Space:
    """Agent `slot`'s own space: a stacked multi-agent space without its leading `num_agents` axis."""
    if isinstance(space, Discrete):
        return Discrete(space.n, space.shape[1:], space.dtype)
    if isinstance(space, Box):
        return Box(space.low[slot], space.high[slot], space.shape[1:], space.dtype)
    if isinstance(space, MultiDiscrete):
        return MultiDiscrete(space.nvec[slot], space.dtype)
    if isinstance(space, MultiBinary):
        return MultiBinary(space.shape[1:], space.dtype)
    if isinstance(space, PyTreeSpace):
        leaves, treedef = jax.tree_util.tree_flatten(
            space.spaces, is_leaf=lambda x: isinstance(x, (Discrete, Box, MultiDiscrete, MultiBinary, PyTreeSpace))
        )
        return PyTreeSpace(treedef.unflatten([slot_space(leaf, slot) for leaf in leaves]))
    raise TypeError(f"slot_space does not know how to take one slot of {space!r}")


def numpy_dtype_of(space: Any) -> Any:
    """The NumPy dtype an action for `space` is cast to, or for a `PyTreeSpace` the pytree of them."""
    if isinstance(space, PyTreeSpace):
        return jax.tree_util.tree_map(np.dtype, space.dtype)
    return np.dtype(space.dtype)


def scalar_converter(space: Any) -> Callable[[Any], Any] | None:
    """What turns an observation of `space` into Gymnasium's form, or None when it already is.

    Gymnasium holds a `Discrete` value as an `np.int64` scalar where JAX
    gives a 0-d array, and a NamedTuple or other record as a dict; every other leaf passes through as it is.
    """
    if isinstance(space, PyTreeSpace):
        return scalar_converter(space.spaces)
    if isinstance(space, Discrete):
        return np.int64 if space.shape == () else None
    if _is_record(space):
        as_dict = scalar_converter(_as_dict(space))
        return _as_dict if as_dict is None else (lambda x: as_dict(_as_dict(x)))
    if isinstance(space, dict):
        converters = {key: scalar_converter(value) for key, value in space.items()}
        if all(c is None for c in converters.values()):
            return None
        return lambda x: {key: x[key] if c is None else c(x[key]) for key, c in converters.items()}
    if isinstance(space, (tuple, list)):
        items = [scalar_converter(value) for value in space]
        if all(c is None for c in items):
            return None
        return lambda x: tuple(v if c is None else c(v) for v, c in zip(x, items))
    return None


def checked_action(space: gymnasium.spaces.Space, action: Any, where: str) -> Any:
    """`action`, unless `space` does not hold it: then `gymnasium.error.InvalidAction` naming the action and the space.

    Integer spaces take integers only (a bool only in `MultiBinary`), inside their range; a `Box` takes a
    number array of its shape, whose values outside the bounds the env clips (docs/protocol.md).
    """
    if isinstance(space, gymnasium.spaces.Discrete) and (type(action) is int or isinstance(action, np.integer)):
        if space.start <= action < space.start + space.n:  # the common case, without `contains`' conversions
            return action
    if isinstance(space, gymnasium.spaces.Dict) and isinstance(action, dict) and action.keys() == space.spaces.keys():
        return {key: checked_action(space[key], action[key], f"{where}[{key!r}]") for key in space.spaces}
    if isinstance(space, gymnasium.spaces.Tuple) and isinstance(action, (tuple, list)) and len(action) == len(space):
        return tuple(checked_action(part, value, f"{where}[{i}]") for i, (part, value) in enumerate(zip(space, action)))
    value = np.asarray(action) if not isinstance(action, (dict, tuple)) else np.asarray(None)
    kind = value.dtype.kind
    if isinstance(space, gymnasium.spaces.Box):
        held = value.shape == space.shape and (kind in "iuf" or kind == space.dtype.kind == "b")
    elif isinstance(space, (gymnasium.spaces.Discrete, gymnasium.spaces.MultiDiscrete, gymnasium.spaces.MultiBinary)):
        integral = kind in "iu" or (kind == "b" and isinstance(space, gymnasium.spaces.MultiBinary))
        held = integral and bool(space.contains(value))
    else:
        held = bool(space.contains(action))
    if not held:
        raise gymnasium.error.InvalidAction(
            f"{where}: action {action!r} ({type(action).__name__}) is not in the action space {space}; "
            "give an action the space holds (an integer space takes integers, never bools or floats)"
        )
    return action
