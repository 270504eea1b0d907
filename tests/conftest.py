"""Shared pytest options: `--run-slow` enables the GPU-sized checks marked `slow`."""

import pytest

from parallax_zoo.catalogue import registry


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-slow", action="store_true", default=False, help="run checks marked slow (GPU-sized)")


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
