"""Pyright checks the package and the typing examples, and does catch a wrong field."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _pyright(*args: str, cwd: Path = ROOT) -> dict:
    executable = shutil.which("pyright", path=str(Path(sys.executable).parent)) or shutil.which("pyright")
    if executable is None:
        pytest.fail("pyright is not installed; it is part of the dev extra (pip install -e '.[dev]')")
    result = subprocess.run(
        [executable, "--outputjson", "--pythonpath", sys.executable, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return json.loads(result.stdout)


def _errors(report: dict) -> list[str]:
    return [
        f"{d['file']}:{d['range']['start']['line'] + 1}: {d['message']}"
        for d in report["generalDiagnostics"]
        if d["severity"] == "error"
    ]


def test_pyright_sees_a_missing_field_through_a_wrapper_stack(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import jax\n"
        "from helpers.example_envs import MaskedGridWorld\n"
        "from parallax import TimeLimit, VmapWrapper\n"
        "state = VmapWrapper(TimeLimit(MaskedGridWorld(), 5), num_envs=2).reset(key=jax.random.key(0))\n"
        "state.action_mask\n"
        "state.not_a_field\n"
    )
    config = tmp_path / "pyrightconfig.json"
    config.write_text(json.dumps({"extraPaths": [str(ROOT), str(ROOT / "tests")], "pythonVersion": "3.11"}))
    errors = _errors(_pyright("--project", str(config), str(bad), cwd=tmp_path))
    assert len(errors) == 1 and "not_a_field" in errors[0]


def test_make_typecheck_passes_on_the_package_and_typing_examples_without_the_venv_on_path():
    """`make typecheck` from a fresh shell, where the venv's python is not the one on PATH, sees the installed
    packages and finds no error in the package and the typing examples."""
    venv = Path(sys.executable).parent.parent
    path = [entry for entry in os.environ.get("PATH", "").split(os.pathsep) if not entry.startswith(str(venv))]
    result = subprocess.run(
        ["make", "-s", "-o", f"{venv}/.dev-installed", "typecheck", f"VENV={venv}", "PYRIGHT_FLAGS=--outputjson"],
        cwd=ROOT,
        env={**os.environ, "PATH": os.pathsep.join(path)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    report = json.loads(result.stdout)
    assert _errors(report) == []
    assert result.returncode == 0, result.stderr[-2000:]
    assert report["summary"]["filesAnalyzed"] >= 6
