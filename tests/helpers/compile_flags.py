"""How the test processes compile: XLA for the CPU at LLVM's lowest optimization level, set by tests/conftest.py.

Compiling is most of the suite's time on a CPU; at this level the suite takes a third less time (docs/development.md),
and the programs run the same operations, so every behaviour a test checks is the same. Their floating-point results
may differ in the last bits: at this level LLVM does not fuse a multiply and an add into one FMA instruction, which
rounds once (an earlier Acrobot-v1 baseline scored -81.82 instead of its pinned -81.46, as it does on a CPU without
FMA). So a test that compares a result with one pinned from a run at XLA's default level (a shipped baseline's
reference score) computes it in a process that compiles as users do: `default_compile_environment`.
"""

from __future__ import annotations

import os

FAST_COMPILE_XLA_FLAGS = ("--xla_backend_optimization_level=0", "--xla_llvm_disable_expensive_passes=true")


def with_fast_compile(xla_flags: str) -> str:
    """`XLA_FLAGS` with the test processes' flags added."""
    flags = xla_flags.split()
    return " ".join(flags + [flag for flag in FAST_COMPILE_XLA_FLAGS if flag not in flags])


def default_compile_environment() -> dict[str, str]:
    """This process's environment without the test processes' flags: a process started with it compiles as users do."""
    environment = dict(os.environ)
    flags = [flag for flag in environment.get("XLA_FLAGS", "").split() if flag not in FAST_COMPILE_XLA_FLAGS]
    environment["XLA_FLAGS"] = " ".join(flags)
    return environment


def cpu_devices_environment(devices: int) -> dict[str, str]:
    """This process's environment for a process that sees `devices` CPU devices (XLA splits the host), compiling as
    the tests do: the sharding and multi-process tests start theirs with it."""
    xla_flags = f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count={devices}".strip()
    return {**os.environ, "XLA_FLAGS": xla_flags, "JAX_PLATFORMS": "cpu"}


DEFAULT_COMPILE_OPTIONS = {"xla_backend_optimization_level": 2, "xla_llvm_disable_expensive_passes": False}
"""Compiler options for one program (`jax.jit(f, compiler_options=...)`) that compile it as users do inside a test
process: for a program that runs far longer than it compiles, such as a search that tries every line six plies deep
(ConnectFour's, about 100 times slower at the lowest level)."""
