"""The tree is ruff-formatted and lint-clean with the settings in pyproject.toml (`make lint` runs the same)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
RUFF = Path(sys.executable).parent / "ruff"


@pytest.mark.parametrize("command", [["format", "--check"], ["check"]], ids=["format", "lint"])
def test_ruff_finds_nothing_to_change(command: list[str]) -> None:
    result = subprocess.run([str(RUFF), *command, "."], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
