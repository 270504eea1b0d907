"""Shared timing for the benchmark scripts: compile once, then interleaved medians.

Each candidate is a jitted function of a key returning a pytree; its first
call (compile plus run) is timed separately, then the candidates are run in
turns so that machine noise hits them alike, and the median is reported.
`compare_compiled` compiles ahead of time instead, so compile time excludes
the first run, and keeps each run's output for the caller to read. It clears
JAX's caches before each compile, so every candidate compiles as a fresh
process would, whichever goes first (what one traced first, such as jnp's
own small jitted helpers, would otherwise be free for the next), and it
records CPU seconds beside wall seconds, of the compile and of each run: on
a loaded machine a program's wall time depends on the share of the cores it
got, its CPU seconds much less. Compile time is the median of
`compile_repeats` compiles per candidate, in turns whose order reverses each
round: the process's first compile pays one-time costs (4.3 s against 6.5 s
for PPO's CartPole program here), which a single compile each would charge
to whichever candidate went first.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax


@dataclass(frozen=True)
class Timing:
    name: str
    compile_s: float
    median_s: float
    runs_s: tuple[float, ...]
    outputs: tuple[Any, ...] = ()
    compile_cpu_s: float = 0.0
    runs_cpu_s: tuple[float, ...] = ()
    compiles_s: tuple[float, ...] = ()
    """`compare_compiled`: the wall seconds of each compile, in the order they ran; `compile_s` is their median."""

    @property
    def median_cpu_s(self) -> float:
        """The median run's CPU seconds (all of the process's threads)."""
        return statistics.median(self.runs_cpu_s)

    @property
    def range_s(self) -> tuple[float, float]:
        """Fastest and slowest run."""
        return min(self.runs_s), max(self.runs_s)


def _block(tree: Any) -> None:
    jax.tree_util.tree_map(lambda x: x.block_until_ready() if hasattr(x, "block_until_ready") else x, tree)


def compare(candidates: dict[str, Callable[[jax.Array], Any]], repeats: int = 5, seed: int = 0) -> dict[str, Timing]:
    """Time each jitted candidate: first call separately, then `repeats` interleaved runs."""
    compile_s: dict[str, float] = {}
    for name, fn in candidates.items():
        start = time.perf_counter()
        _block(fn(jax.random.key(seed)))
        compile_s[name] = time.perf_counter() - start
    runs: dict[str, list[float]] = {name: [] for name in candidates}
    for repeat in range(repeats):
        for name, fn in candidates.items():
            key = jax.random.key(seed + repeat + 1)
            start = time.perf_counter()
            _block(fn(key))
            runs[name].append(time.perf_counter() - start)
    return {
        name: Timing(name, compile_s[name], statistics.median(runs[name]), tuple(runs[name])) for name in candidates
    }


def compare_compiled(
    candidates: dict[str, Callable[[Any], Any]],
    key_of_run: Callable[[int], Any],
    repeats: int = 5,
    compile_repeats: int = 3,
) -> dict[str, Timing]:
    """Compile each candidate ahead of time from cold caches (timed: trace, lower, compile), then run them in turns.

    Each candidate compiles `compile_repeats` times, in turns whose order reverses every round; its
    compile time is the median. Run `i` of every candidate gets the key `key_of_run(i + 1)`
    (`key_of_run(0)` is only traced); each run's output is kept, as numpy arrays, in `Timing.outputs`.
    """
    if compile_repeats < 1:
        raise ValueError(f"compile_repeats must be at least 1, got {compile_repeats}")
    compiled: dict[str, Any] = {}
    compiles: dict[str, list[tuple[float, float]]] = {name: [] for name in candidates}
    for round_index in range(compile_repeats):
        order = list(candidates) if round_index % 2 == 0 else list(reversed(candidates))
        for name in order:
            jax.clear_caches()
            start, cpu_start = time.perf_counter(), time.process_time()
            compiled[name] = jax.jit(candidates[name]).lower(key_of_run(0)).compile()
            compiles[name].append((time.perf_counter() - start, time.process_time() - cpu_start))
    compile_s = {name: statistics.median(wall for wall, _ in times) for name, times in compiles.items()}
    compile_cpu_s = {name: statistics.median(cpu for _, cpu in times) for name, times in compiles.items()}
    runs: dict[str, list[float]] = {name: [] for name in candidates}
    runs_cpu: dict[str, list[float]] = {name: [] for name in candidates}
    outputs: dict[str, list[Any]] = {name: [] for name in candidates}
    for repeat in range(repeats):
        for name in candidates:
            key = key_of_run(repeat + 1)
            start, cpu_start = time.perf_counter(), time.process_time()
            out = compiled[name](key)
            _block(out)
            runs[name].append(time.perf_counter() - start)
            runs_cpu[name].append(time.process_time() - cpu_start)
            outputs[name].append(jax.device_get(out))
    return {
        name: Timing(
            name,
            compile_s[name],
            statistics.median(runs[name]),
            tuple(runs[name]),
            tuple(outputs[name]),
            compile_cpu_s[name],
            tuple(runs_cpu[name]),
            tuple(wall for wall, _ in compiles[name]),
        )
        for name in candidates
    }


def print_table(title: str, rows: list[tuple[str, ...]], header: tuple[str, ...]) -> None:
    """A plain aligned table for the terminal."""
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    print(f"\n{title}")
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)))
