"""Spaces: what an environment accepts and emits.

Every space has `shape`, `dtype`, `sample(*, key)` and a jit-safe `contains(x)`
that returns a boolean array. Spaces are immutable, hashable and comparable,
so they can be static arguments to `jax.jit`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, PRNGKeyArray

Shape = tuple[int, ...]


@runtime_checkable
class Space(Protocol):
    """The interface every space implements."""

    @property
    def shape(self) -> Any: ...

    @property
    def dtype(self) -> Any: ...

    def sample(self, *, key: PRNGKeyArray) -> Any: ...

    def contains(self, x: Any) -> Bool[Array, ""]: ...


def _as_shape(shape: int | Sequence[int]) -> Shape:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(d) for d in shape)


def _static_false() -> Bool[Array, ""]:
    return jnp.asarray(False)


def _shape_matches(x: Any, shape: Shape) -> bool:
    return tuple(getattr(x, "shape", np.shape(x))) == shape


class Discrete:
    """Integers `0 .. n - 1`; with `shape`, an array of them (a stacked `Discrete`)."""

    def __init__(self, n: int, shape: int | Sequence[int] = (), dtype: Any = jnp.int32):
        if int(n) < 1:
            raise ValueError(f"Discrete needs n >= 1, got n={n}")
        self.n = int(n)
        self._shape = _as_shape(shape)
        self._dtype = jnp.dtype(dtype)

    @property
    def shape(self) -> Shape:
        return self._shape

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    def sample(self, key: PRNGKeyArray) -> Array:
        return jax.random.randint(key, self.shape, 0, self.n, dtype=self.dtype)

    def contains(self, x: Any) -> Bool[Array, ""]:
        if not _shape_matches(x, self.shape):
            return _static_false()
        x = jnp.asarray(x)
        if not jnp.issubdtype(x.dtype, jnp.integer):
            return _static_false()
        return jnp.all((x >= 0) & (x < self.n))

    def _key(self) -> tuple:
        return (Discrete, self.n, self.shape, self.dtype)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Discrete) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        shape = f", shape={self.shape}" if self.shape else ""
        return f"Discrete({self.n}{shape})"


class Box:
    """A box in R^n: `low <= x <= high` elementwise, bounds broadcast to `shape`.

    Infinite bounds are allowed; `sample` still returns finite values (a normal
    draw where both sides are open, an exponential one where one side is).
    """

    def __init__(self, low: Any, high: Any, shape: int | Sequence[int] | None = None, dtype: Any = jnp.float32):
        self._dtype = jnp.dtype(dtype)
        if shape is None:
            shape = np.broadcast_shapes(np.shape(low), np.shape(high))
        self._shape = _as_shape(shape)
        np_dtype = np.dtype(self._dtype)
        self.low = np.array(np.broadcast_to(np.asarray(low, dtype=np_dtype), self._shape))
        self.high = np.array(np.broadcast_to(np.asarray(high, dtype=np_dtype), self._shape))
        if np.any(self.low > self.high):
            raise ValueError(f"Box needs low <= high everywhere, got low={self.low} high={self.high}")
        self.low.setflags(write=False)
        self.high.setflags(write=False)

    @property
    def shape(self) -> Shape:
        return self._shape

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    def sample(self, key: PRNGKeyArray) -> Array:
        if jnp.issubdtype(self.dtype, jnp.integer):
            info = jnp.iinfo(self.dtype)
            low = np.clip(self.low, info.min, info.max - 1)
            high = np.clip(self.high, info.min, info.max - 1)
            return jax.random.randint(key, self.shape, low, high + 1, dtype=self.dtype)
        low = jnp.asarray(self.low, jnp.float32)
        high = jnp.asarray(self.high, jnp.float32)
        bounded_low, bounded_high = jnp.isfinite(low), jnp.isfinite(high)
        k_uniform, k_normal, k_exp = jax.random.split(key, 3)
        u = jax.random.uniform(k_uniform, self.shape)
        finite_max = jnp.finfo(jnp.float32).max
        clipped_low = jnp.clip(low, -finite_max, finite_max)
        clipped_high = jnp.clip(high, -finite_max, finite_max)
        uniform = clipped_low * (1.0 - u) + clipped_high * u
        normal = jax.random.normal(k_normal, self.shape)
        exponential = jax.random.exponential(k_exp, self.shape)
        value = jnp.where(
            bounded_low & bounded_high,
            uniform,
            jnp.where(
                bounded_low, clipped_low + exponential, jnp.where(bounded_high, clipped_high - exponential, normal)
            ),
        )
        return value.astype(self.dtype)

    def contains(self, x: Any) -> Bool[Array, ""]:
        if not _shape_matches(x, self.shape):
            return _static_false()
        x = jnp.asarray(x)
        if jnp.issubdtype(self.dtype, jnp.integer) and not jnp.issubdtype(x.dtype, jnp.integer):
            return _static_false()
        if x.dtype == jnp.bool_:
            return _static_false()
        return jnp.all((x >= self.low) & (x <= self.high))

    def _key(self) -> tuple:
        return (Box, self.shape, self.dtype, self.low.tobytes(), self.high.tobytes())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Box) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        def bound(a: np.ndarray) -> str:
            flat = np.unique(a)
            return repr(float(flat[0])) if flat.size == 1 else np.array2string(a, threshold=8)

        return f"Box({bound(self.low)}, {bound(self.high)}, {self.shape}, {self.dtype.name})"


class MultiDiscrete:
    """An array of integers, element `i` in `0 .. nvec[i] - 1`.

    `actions_per_dim` is another name for `nvec`, as a keyword and as an
    attribute, for code written against parallax-rl 0.4.0 (docs/compatibility.md).
    """

    def __init__(self, nvec: Any = None, dtype: Any = jnp.int32, *, actions_per_dim: Any = None):
        if (nvec is None) == (actions_per_dim is None):
            raise TypeError(
                "MultiDiscrete needs the number of values of each element, as nvec (or its other name, "
                f"actions_per_dim), exactly once; got nvec={nvec!r} and actions_per_dim={actions_per_dim!r}."
            )
        nvec_array = np.asarray(nvec if actions_per_dim is None else actions_per_dim, dtype=np.int64)
        if nvec_array.size == 0 or np.any(nvec_array < 1):
            raise ValueError(f"MultiDiscrete needs every nvec entry >= 1, got {nvec_array.tolist()}")
        self.nvec = nvec_array
        self.nvec.setflags(write=False)
        self._dtype = jnp.dtype(dtype)

    @property
    def actions_per_dim(self) -> np.ndarray:
        """`nvec` under parallax-rl 0.4.0's name."""
        return self.nvec

    @property
    def shape(self) -> Shape:
        return tuple(self.nvec.shape)

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    def sample(self, key: PRNGKeyArray) -> Array:
        return jax.random.randint(key, self.shape, 0, jnp.asarray(self.nvec), dtype=self.dtype)

    def contains(self, x: Any) -> Bool[Array, ""]:
        if not _shape_matches(x, self.shape):
            return _static_false()
        x = jnp.asarray(x)
        if not jnp.issubdtype(x.dtype, jnp.integer):
            return _static_false()
        return jnp.all((x >= 0) & (x < jnp.asarray(self.nvec)))

    def _key(self) -> tuple:
        return (MultiDiscrete, self.shape, self.dtype, self.nvec.tobytes())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MultiDiscrete) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"MultiDiscrete({self.nvec.tolist()})"


class MultiBinary:
    """An array of 0/1 flags: `n` of them, or an array of shape `n` when `n` is a tuple (as in Gymnasium)."""

    def __init__(self, n: int | Sequence[int], dtype: Any = jnp.int8):
        self._shape = _as_shape(n)
        self.n: int | Shape = int(n) if isinstance(n, (int, np.integer)) else self._shape
        self._dtype = jnp.dtype(dtype)

    @property
    def shape(self) -> Shape:
        return self._shape

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    def sample(self, key: PRNGKeyArray) -> Array:
        return jax.random.bernoulli(key, 0.5, self.shape).astype(self.dtype)

    def contains(self, x: Any) -> Bool[Array, ""]:
        if not _shape_matches(x, self.shape):
            return _static_false()
        x = jnp.asarray(x)
        if not (jnp.issubdtype(x.dtype, jnp.integer) or x.dtype == jnp.bool_):
            return _static_false()
        return jnp.all((x == 0) | (x == 1))

    def _key(self) -> tuple:
        return (MultiBinary, self.shape, self.dtype)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MultiBinary) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"MultiBinary({self.shape})"


class PyTreeSpace:
    """A pytree (dict, tuple, ...) of spaces: for dict or nested observations.

    `shape` and `dtype` are pytrees of the leaves' shapes and dtypes.
    """

    def __init__(self, spaces: Any):
        leaves, self._treedef = jax.tree_util.tree_flatten(spaces, is_leaf=_is_space)
        if not leaves:
            raise ValueError("PyTreeSpace needs at least one space")
        for leaf in leaves:
            if not _is_space(leaf):
                raise TypeError(f"PyTreeSpace leaves must be spaces, got {type(leaf).__name__}: {leaf!r}")
        self._leaves = tuple(leaves)
        self.spaces = spaces

    @property
    def shape(self) -> Any:
        return self._treedef.unflatten([s.shape for s in self._leaves])

    @property
    def dtype(self) -> Any:
        return self._treedef.unflatten([s.dtype for s in self._leaves])

    def sample(self, key: PRNGKeyArray) -> Any:
        keys = jax.random.split(key, len(self._leaves))
        return self._treedef.unflatten([s.sample(key=k) for s, k in zip(self._leaves, keys)])

    def contains(self, x: Any) -> Bool[Array, ""]:
        try:
            x_leaves = self._treedef.flatten_up_to(x)
        except (ValueError, TypeError):
            return _static_false()
        result = jnp.asarray(True)
        for space, leaf in zip(self._leaves, x_leaves):
            result = result & space.contains(leaf)
        return result

    def _key(self) -> tuple:
        return (PyTreeSpace, self._treedef, self._leaves)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PyTreeSpace) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"PyTreeSpace({self.spaces!r})"


def _is_space(x: Any) -> bool:
    return isinstance(x, (Discrete, Box, MultiDiscrete, MultiBinary, PyTreeSpace))


def stack_space(space: Space, num: int) -> Space:
    """The space of `num` stacked values of `space`: a new leading axis of size `num`.

    This is how multi-agent envs describe their per-agent slots (docs/protocol.md).
    """
    if int(num) < 1:
        raise ValueError(f"stack_space needs num >= 1, got {num}")
    if isinstance(space, Discrete):
        return Discrete(space.n, shape=(num, *space.shape), dtype=space.dtype)
    if isinstance(space, Box):
        return Box(
            np.broadcast_to(space.low, (num, *space.shape)),
            np.broadcast_to(space.high, (num, *space.shape)),
            (num, *space.shape),
            space.dtype,
        )
    if isinstance(space, MultiDiscrete):
        return MultiDiscrete(np.broadcast_to(space.nvec, (num, *space.shape)), space.dtype)
    if isinstance(space, MultiBinary):
        return MultiBinary((num, *space.shape), space.dtype)
    if isinstance(space, PyTreeSpace):
        return PyTreeSpace(jax.tree_util.tree_map(lambda s: stack_space(s, num), space.spaces, is_leaf=_is_space))
    raise TypeError(
        f"stack_space does not know how to stack {type(space).__name__}; "
        "it supports Discrete, Box, MultiDiscrete, MultiBinary and PyTreeSpace."
    )


def sample_legal(space: Space, *, key: PRNGKeyArray, mask: Array | None = None) -> Any:
    """A uniformly random action; with a boolean `mask` (`[..., n]`) over a `Discrete` space, a legal one."""
    if mask is None or not isinstance(space, Discrete):
        return space.sample(key=key)
    return jax.random.categorical(key, jnp.where(mask, 0.0, -jnp.inf)).astype(space.dtype)


def check_action(space: Space, action: Any, batch_shape: Shape = (), where: str = "step") -> None:
    """Raise a `ValueError` unless `action` has the shape and dtype kind `space` expects.

    Integer spaces (`Discrete`, `MultiDiscrete`, integer `Box`) take integer
    actions, never floats or bools; `MultiBinary` also takes bools; a float
    `Box` takes floats or integers, never bools. Shapes and dtypes are static,
    so this costs nothing inside `jit`.
    """
    if isinstance(space, PyTreeSpace):
        try:
            leaves = space._treedef.flatten_up_to(action)
        except (ValueError, TypeError) as error:
            raise ValueError(f"{where}: expected an action with the structure of {space!r}: {error}") from None
        for leaf_space, leaf in zip(space._leaves, leaves):
            check_action(leaf_space, leaf, batch_shape, where)
        return
    expected_shape = tuple(batch_shape) + tuple(space.shape)
    got_shape = tuple(getattr(action, "shape", np.shape(action)))
    got_dtype = jnp.result_type(action)
    if getattr(space, "dtype", None) is None:  # a space with only `shape` and `sample`, as parallax-rl 0.4.0 allows
        if got_shape != expected_shape:
            raise ValueError(
                f"{where}: expected an action of shape {expected_shape} for {space!r}, got shape {got_shape}."
            )
        return
    expected_dtype = jnp.dtype(space.dtype)
    if got_shape != expected_shape or not _dtype_accepted(space, expected_dtype, got_dtype):
        raise ValueError(
            f"{where}: expected an action of shape {expected_shape} and dtype {expected_dtype.name} "
            f"for {space!r}, got shape {got_shape} and dtype {got_dtype.name}." + _dtype_hint(expected_dtype, got_dtype)
        )


def _dtype_accepted(space: Space, expected: np.dtype, got: np.dtype) -> bool:
    """Whether an action of dtype `got` is the kind `space` (of dtype `expected`) takes; see `check_action`."""
    got_bool = got == jnp.bool_
    if isinstance(space, MultiBinary) or expected == jnp.bool_:
        return got_bool or jnp.issubdtype(got, jnp.integer)
    if got_bool:
        return False
    if jnp.issubdtype(expected, jnp.integer):
        return bool(jnp.issubdtype(got, jnp.integer))
    return True


def _dtype_hint(expected: np.dtype, got: np.dtype) -> str:
    if got == expected or not jnp.issubdtype(expected, jnp.number):
        return ""
    return f" Cast it first, e.g. action.astype(jnp.{expected.name})."


def clip_action(space: Space, action: Any) -> Any:
    """`action` moved into `space`: each entry clipped to the nearest value the space allows.

    This is what an out-of-range action means in the zoo's envs and adapters
    (docs/protocol.md, "Out-of-range actions"): a `Discrete` or `MultiDiscrete` entry
    below 0 becomes 0 and one above the top becomes the top action; a `Box`
    entry is clipped to `[low, high]`, and a NaN entry counts as 0 (then
    clipped), so it applies no force; a `MultiBinary` entry is clipped to 0..1.
    Actions already in the space come back unchanged. Other spaces are left alone.
    """
    if isinstance(space, PyTreeSpace):
        leaves = space._treedef.flatten_up_to(action)
        return space._treedef.unflatten([clip_action(s, leaf) for s, leaf in zip(space._leaves, leaves)])
    action = jnp.asarray(action)
    if isinstance(space, Discrete):
        return jnp.clip(action, 0, space.n - 1).astype(action.dtype)
    if isinstance(space, MultiDiscrete):
        return jnp.clip(action, 0, jnp.asarray(space.nvec - 1)).astype(action.dtype)
    if isinstance(space, MultiBinary):
        return action if action.dtype == jnp.bool_ else jnp.clip(action, 0, 1).astype(action.dtype)
    if isinstance(space, Box):
        if jnp.issubdtype(action.dtype, jnp.inexact):
            action = jnp.where(jnp.isnan(action), jnp.zeros_like(action), action)
        return jnp.clip(action, space.low, space.high).astype(action.dtype)
    return action


def out_of_range_actions(space: Space) -> list[Any]:
    """A few actions of the right shape and dtype that `space` does not contain (none where there are none).

    Integers: `n` for a `Discrete(n)`, `-1` and the dtype's largest value;
    floats: NaN, +inf, -inf and the dtype's extremes. `check_env` steps envs with them.
    """
    if isinstance(space, PyTreeSpace):
        per_leaf = [out_of_range_actions(s) for s in space._leaves]
        fallback = [s.sample(key=jax.random.key(0)) for s in space._leaves]
        count = max(len(actions) for actions in per_leaf)
        return [
            space._treedef.unflatten([a[i] if i < len(a) else f for a, f in zip(per_leaf, fallback)])
            for i in range(count)
        ]
    dtype = jnp.dtype(space.dtype)
    if jnp.issubdtype(dtype, jnp.integer):
        info = jnp.iinfo(dtype)
        values: list[Any] = [*([space.n] if isinstance(space, Discrete) else []), int(info.max), int(info.min)]
        if info.min < 0:
            values.append(-1)
    elif jnp.issubdtype(dtype, jnp.floating):
        info = jnp.finfo(dtype)
        values = [np.nan, np.inf, -np.inf, float(info.max), float(info.min)]
    else:
        return []
    actions = [jnp.full(space.shape, value, dtype) for value in values]
    return [action for action in actions if not bool(space.contains(action))]
