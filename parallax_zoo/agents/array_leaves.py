"""A pytree's array leaves apart from the rest: what crosses a `jit` or `custom_vmap` boundary as arguments, and the
structure and other leaves (a player that is not a pytree, a Python number) that stay behind as they are."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import jax
import numpy as np
from jaxtyping import Array

_ARRAY = object()
"""Marks where an array leaf goes back in `join_arrays`."""


def split_arrays(tree: Any) -> tuple[list[Array], Hashable]:
    """The tree's array leaves, and the rest (tree structure and other leaves) as one structure for `join_arrays`
    (hashable where the other leaves are)."""
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    is_array = [isinstance(leaf, (jax.Array, np.ndarray, np.generic)) for leaf in leaves]
    arrays = [leaf for leaf, array in zip(leaves, is_array) if array]
    static = tuple(_ARRAY if array else leaf for leaf, array in zip(leaves, is_array))
    return arrays, (treedef, static)


def join_arrays(arrays: list[Array] | tuple[Array, ...], structure: Any) -> Any:
    """The tree `split_arrays` took apart, with `arrays` in its array leaves' places."""
    treedef, static = structure
    remaining = iter(arrays)
    return jax.tree_util.tree_unflatten(treedef, [next(remaining) if leaf is _ARRAY else leaf for leaf in static])
