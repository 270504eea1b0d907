"""The benchmarks' shared timing (benchmarks/timing.py): what a reported compile time is made of."""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from timing import compare_compiled  # noqa: E402


def test_compile_time_is_the_median_of_compiles_in_turns_whose_order_reverses_each_round():
    traced: list[str] = []

    def candidate(name: str):
        def run(key: jax.Array) -> jax.Array:
            traced.append(name)  # once per trace: every compile starts from cold caches
            return jnp.sum(jax.random.normal(key, (8,)))

        return run

    timings = compare_compiled(
        {"ours": candidate("ours"), "peer": candidate("peer")}, jax.random.key, repeats=2, compile_repeats=3
    )
    # The process's first compile pays one-time costs; reversing the order spreads them over both sides.
    assert traced == ["ours", "peer", "peer", "ours", "ours", "peer"]
    for timing in timings.values():
        assert len(timing.compiles_s) == 3
        assert timing.compile_s == statistics.median(timing.compiles_s)
        assert len(timing.runs_s) == 2
    expected = float(jnp.sum(jax.random.normal(jax.random.key(1), (8,))))
    assert float(timings["peer"].outputs[0]) == pytest.approx(expected)


def test_compile_repeats_below_one_is_refused():
    with pytest.raises(ValueError, match="compile_repeats must be at least 1"):
        compare_compiled({"ours": lambda key: key}, jax.random.key, compile_repeats=0)
