"""Shared pytest options: `--run-slow` enables the GPU-sized checks marked `slow`; one JAX compilation cache, in a
temporary folder removed at the end, serves the whole session: its workers and every process they start; and
every one of those processes compiles fast (helpers.compile_flags)."""

import itertools
import os
import shutil
import tempfile
from typing import Any

import jax
import pytest
from helpers.compile_flags import with_fast_compile
from helpers.memory_maps import memory_map_count, memory_map_limit

from parallax.adapters.frames import mujoco_renderer_problem
from parallax_zoo.catalogue import registry
from parallax_zoo.judging.programs import release_programs

CACHE_BYTES = 4 * 2**30
"""The cache's bound; with one set, JAX also locks its entries, so that no process reads one half-written."""
_CACHE_FOLDER = pytest.StashKey[str]()
MUJOCO_LOG = "MUJOCO_LOG.TXT"
"""Where MuJoCo appends a warning that no handler took: the working folder, which for the tests is the checkout."""
_MUJOCO_LOG_BEFORE = pytest.StashKey[bool]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-slow", action="store_true", default=False, help="run checks marked slow (GPU-sized)")


def pytest_configure(config: pytest.Config) -> None:
    """The session's first process (xdist's controller, or the only one) makes the cache folder and puts it in the
    environment; the workers and the processes the tests start inherit it, so a program compiled once loads after."""
    os.environ["XLA_FLAGS"] = with_fast_compile(os.environ.get("XLA_FLAGS", ""))
    if not (hasattr(config, "workerinput") and "JAX_COMPILATION_CACHE_DIR" in os.environ):
        folder = tempfile.mkdtemp(prefix="parallax-zoo-tests-jax-cache-")
        config.stash[_CACHE_FOLDER] = folder
        os.environ["JAX_COMPILATION_CACHE_DIR"] = folder
        os.environ["JAX_COMPILATION_CACHE_MAX_SIZE"] = str(CACHE_BYTES)
        config.stash[_MUJOCO_LOG_BEFORE] = (config.rootpath / MUJOCO_LOG).exists()
    jax.config.update("jax_compilation_cache_dir", os.environ["JAX_COMPILATION_CACHE_DIR"])
    jax.config.update("jax_compilation_cache_max_size", int(os.environ["JAX_COMPILATION_CACHE_MAX_SIZE"]))
    # The zoo points MUJOCO_GL at a headless OpenGL before it imports MuJoCo, which reads it once; tests that import
    # Brax or MuJoCo themselves share the worker with tests that draw, so they get the same choice first.
    mujoco_renderer_problem()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the session if some test let MuJoCo write its log into the checkout: the notebook test sees that only
    when the write falls inside a notebook's run, so without this check the leak fails CI now and then."""
    config = session.config
    if _MUJOCO_LOG_BEFORE not in config.stash or config.stash[_MUJOCO_LOG_BEFORE]:
        return
    if (config.rootpath / MUJOCO_LOG).exists():
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        message = (
            f"a test let MuJoCo write {config.rootpath / MUJOCO_LOG}: build MuJoCo models inside "
            "parallax.adapters.mujoco_warnings.mujoco_warnings_as_python_warnings()"
        )
        if reporter is not None:
            reporter.write_line(f"ERROR: {message}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_unconfigure(config: pytest.Config) -> None:
    if _CACHE_FOLDER in config.stash:
        shutil.rmtree(config.stash[_CACHE_FOLDER], ignore_errors=True)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`--dist loadfile` (as `make test` runs) hands out the longest files first; other modes are xdist's own."""
    from helpers.scheduling import LongestFilesFirst  # xdist's, imported only where xdist runs the session

    return LongestFilesFirst(config, log) if config.getoption("dist") == "loadfile" else None


MAP_LIMIT = memory_map_limit()
"""The most memory maps a process may hold (None where the system does not say); read once."""
TESTS_BETWEEN_MAP_CHECKS = 5
"""Listing a worker's maps takes tens of ms at 20k of them; a test adds at most a few thousand (a Playground id about
2,500), so checking every fifth test still lets go well before the limit."""
_teardowns = itertools.count(1)


def pytest_runtest_teardown(item: pytest.Item) -> None:
    """Let go of every compiled program once a worker holds half the memory maps a process may: the slow per-id
    checks compile a few thousand maps' worth per Playground id and keep them, and a worker past the limit dies
    inside XLA's compiler (docs/development.md)."""
    if MAP_LIMIT is None or next(_teardowns) % TESTS_BETWEEN_MAP_CHECKS:
        return
    count = memory_map_count()
    if count is not None and count > MAP_LIMIT // 2:
        release_programs()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--run-slow"):
        return
    skip_slow = pytest.mark.skip(reason="slow: run with --run-slow (or `make test-slow`)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip_slow)


@pytest.fixture
def scratch_registry(monkeypatch: pytest.MonkeyPatch) -> registry.Registry:
    """A copy of the package registry in its place, so that what a test registers does not outlive the test."""
    copy = registry.default_registry().copy()
    monkeypatch.setattr(registry, "_default_registry", copy)
    return copy
