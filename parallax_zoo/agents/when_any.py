"""A conditional that stays a skip under `vmap`: work done only on the steps that need it (docs/baselines.md).

The rollout runs the critic for truncated episodes and resets finished envs only on steps where some env
needs it. With `lax.cond` that skip vanishes when the whole training is vmapped over seeds: a batched
predicate turns the cond into a select that runs both branches on every step. `when_any` asks whether any
entry needs the work across the whole batch, vmapped axes included, and runs one branch, vmapped.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import jax
import jax.numpy as jnp
from jax.custom_batching import custom_vmap
from jaxtyping import Array

from parallax_zoo.agents.array_leaves import join_arrays, split_arrays

Out = TypeVar("Out")


def when_any(pred: Array, compute: Callable[..., Out], otherwise: Callable[..., Out], *operands: Any) -> Out:
    """`compute(*operands)` if any entry of `pred` is true, else `otherwise(*operands)`.

    Both must agree wherever `pred` is false (the result may come from either there): under `vmap`, every
    batch member gets `compute` as soon as one needs it. `compute` and `otherwise` must not close over traced
    values; pass those in `operands` (their leaves that are not arrays, such as a player that is not a pytree,
    pass through as they are).
    """
    arrays, structure = split_arrays(operands)

    def rebuilt(branch: Callable[..., Out]) -> Callable[..., Out]:
        """`branch` taking only the operands' arrays, the other leaves filled back in."""
        return lambda *arrays: branch(*join_arrays(arrays, structure))

    return _when_any(pred, rebuilt(compute), rebuilt(otherwise), *arrays)


def _when_any(pred: Array, compute: Callable[..., Out], otherwise: Callable[..., Out], *arrays: Array) -> Out:
    """`when_any` on operands that are all arrays."""

    @custom_vmap
    def run(pred: Array, *arrays: Array) -> Out:
        return jax.lax.cond(jnp.any(pred), compute, otherwise, *arrays)

    @run.def_vmap
    def run_batched(axis_size: int, in_batched: list[bool], pred: Array, *arrays: Array) -> tuple[Out, Any]:
        in_axes = tuple(0 if batched else None for batched in in_batched[1:])
        batched_compute, batched_otherwise = (
            jax.vmap(branch, in_axes=in_axes, axis_size=axis_size) for branch in (compute, otherwise)
        )
        out = _when_any(pred, batched_compute, batched_otherwise, *arrays)
        return out, jax.tree_util.tree_map(lambda _: True, out)

    return run(pred, *arrays)
