"""How many memory maps this process holds, against the kernel's limit (Linux): XLA maps every compiled program's
code for as long as JAX caches the program, and a process past the limit crashes inside the compiler."""

from __future__ import annotations

from pathlib import Path

LIMIT_FILE = Path("/proc/sys/vm/max_map_count")
MAPS_FILE = Path("/proc/self/maps")


def memory_map_count() -> int | None:
    """This process's memory maps, or None where the system does not list them."""
    try:
        with MAPS_FILE.open("rb") as maps:
            return sum(1 for _ in maps)
    except OSError:
        return None


def memory_map_limit() -> int | None:
    """The most memory maps a process may hold, or None where the system does not say."""
    try:
        return int(LIMIT_FILE.read_text())
    except (OSError, ValueError):
        return None
