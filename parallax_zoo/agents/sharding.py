"""Device meshes and shardings for training and evaluation on several devices (docs/scaling.md).

JAX's own SPMD does the work: a 1-D mesh with axis `"envs"` over the devices,
the env batch (the leading axis of a `VmapWrapper` state, the second axis of
a time-major trajectory) split across it, and everything else (params,
optimizer state) replicated. Inside a jitted function the shardings are
`jax.lax.with_sharding_constraint`s, so the same code runs on one CPU when no
mesh is given: every helper here returns its input unchanged for `mesh=None`.
After `jax.distributed.initialize()`, `jax.devices()` lists every host's
devices, so `default_mesh()` spans all hosts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

ENV_AXIS = "envs"
"""The mesh axis the env batch is split along."""

Tree = TypeVar("Tree")


def default_mesh(devices: Sequence[Any] | None = None) -> Mesh:
    """A 1-D mesh with axis `"envs"` over the `jax.Device`s given (default `jax.devices()`: every process's devices)."""
    devices = list(jax.devices() if devices is None else devices)
    if not devices:
        raise ValueError("default_mesh: got an empty device list; pass at least one device or None for all.")
    return Mesh(np.array(devices), (ENV_AXIS,))


def check_divisible(count: int, mesh: Mesh | None, where: str, what: str = "envs") -> None:
    """Raise unless `count` rows (envs, episodes, minibatch rows) split evenly across the mesh's `"envs"` axis."""
    if mesh is None:
        return
    if ENV_AXIS not in mesh.shape:
        raise ValueError(
            f"{where}: the mesh needs an axis named {ENV_AXIS!r} to split envs along, got axes "
            f"{tuple(mesh.shape)}; build it with parallax_zoo.agents.sharding.default_mesh()."
        )
    devices = mesh.shape[ENV_AXIS]
    if count % devices != 0:
        raise ValueError(
            f"{where}: {count} {what} cannot be split evenly across {devices} devices; "
            f"use a multiple of {devices} (e.g. {devices * max(1, -(-count // devices))})."
        )


def env_batch_sharding(mesh: Mesh, env_axis: int = 0) -> NamedSharding:
    """The sharding that splits axis `env_axis` across the mesh's `"envs"` axis and keeps the rest whole."""
    return NamedSharding(mesh, PartitionSpec(*([None] * env_axis), ENV_AXIS))


def replicated(mesh: Mesh) -> NamedSharding:
    """The sharding that keeps a full copy on every device (params, optimizer state)."""
    return NamedSharding(mesh, PartitionSpec())


def shard_env_batch(tree: Tree, mesh: Mesh | None, env_axis: int = 0) -> Tree:
    """Constrain every leaf of `tree` to be split along `env_axis` across the mesh (inside `jit`)."""
    if mesh is None:
        return tree
    return jax.lax.with_sharding_constraint(tree, env_batch_sharding(mesh, env_axis))


def replicate(tree: Tree, mesh: Mesh | None) -> Tree:
    """Constrain every leaf of `tree` to be whole on every device (inside `jit`)."""
    if mesh is None:
        return tree
    return jax.lax.with_sharding_constraint(tree, replicated(mesh))


def local_copy(tree: Tree) -> Tree:
    """Every leaf as an array of this process alone, so one process can save and evaluate what all trained: a
    leaf whole on every device (params, metrics) is read from this process's copy, any other is gathered from
    every process (a collective: every process calls it, in the same order). Single-process leaves pass as they are."""

    def one(leaf: Any) -> Any:
        if not isinstance(leaf, jax.Array) or leaf.is_fully_addressable:
            return leaf
        if leaf.sharding.is_fully_replicated:
            return leaf.addressable_data(0)
        from jax.experimental import multihost_utils

        return multihost_utils.process_allgather(leaf, tiled=True)

    return jax.tree_util.tree_map(one, tree)


def device_rows(array: jax.Array) -> dict[Any, int]:
    """How many rows of `array`'s leading axis each device holds: a way to see that a batch really is split."""
    return {shard.device: shard.data.shape[0] for shard in array.addressable_shards}
