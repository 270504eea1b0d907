"""Every notebook in notebooks/ runs top to bottom without error, in under two minutes, leaving no files behind."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = REPO / "notebooks"
EXPECTED = ["01_quickstart.ipynb", "02_training.ipynb", "03_custom_env.ipynb", "04_leaderboard.ipynb"]
BUDGET_S = 120.0
KERNEL_NAME = "parallax-zoo-test"
IGNORED_DIRS = {".git", "__pycache__", ".pytest_cache", ".hypothesis", ".venv"}


def repo_files() -> set[Path]:
    """Every file in the checkout outside caches, to spot anything a notebook writes."""
    found = set()
    for folder, subfolders, files in os.walk(REPO):
        subfolders[:] = [name for name in subfolders if name not in IGNORED_DIRS]
        found.update(Path(folder, name) for name in files)
    return found


@pytest.fixture(scope="module")
def kernel_specs(tmp_path_factory: pytest.TempPathFactory) -> KernelSpecManager:
    """A kernelspec that runs this interpreter (pytest's venv) with the checkout importable."""
    kernels = tmp_path_factory.mktemp("kernels")
    spec_dir = kernels / KERNEL_NAME
    spec_dir.mkdir()
    python_path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": f"Python ({sys.executable})",
        "language": "python",
        "env": {"PYTHONPATH": python_path},
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    return KernelSpecManager(kernel_dirs=[str(kernels)], ensure_native_kernel=False)


def test_the_four_notebooks_are_there_and_committed_without_outputs():
    found = sorted(path.name for path in NOTEBOOKS.glob("*.ipynb"))
    assert found == EXPECTED
    for name in found:
        notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
        nbformat.validate(notebook)
        code = [cell for cell in notebook.cells if cell.cell_type == "code"]
        assert code, f"{name} has no code cells"
        stale = [index for index, cell in enumerate(notebook.cells) if cell.cell_type == "code" and (cell.outputs or cell.execution_count)]
        assert not stale, f"{name}: cells {stale} carry outputs; clear them before committing"


@pytest.mark.parametrize("name", sorted(path.name for path in NOTEBOOKS.glob("*.ipynb")))
def test_notebook_runs_without_error(name: str, kernel_specs: KernelSpecManager, tmp_path: Path):
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    before = repo_files()
    kernel = KernelManager(
        kernel_name=KERNEL_NAME, kernel_spec_manager=kernel_specs, connection_file=str(tmp_path / "kernel.json")
    )
    client = NotebookClient(
        notebook, km=kernel, timeout=int(BUDGET_S), allow_errors=False, resources={"metadata": {"path": str(tmp_path)}}
    )
    start = time.perf_counter()
    try:
        client.execute()
    finally:
        if kernel.has_kernel:
            kernel.shutdown_kernel(now=True)
    elapsed = time.perf_counter() - start
    print(f"{name}: {elapsed:.1f} s")
    assert elapsed < BUDGET_S, f"{name} took {elapsed:.0f} s; notebooks must run in under {BUDGET_S:.0f} s on a CPU"
    ran = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert all(cell.execution_count for cell in ran), "every code cell ran"
    assert not any(output.output_type == "error" for cell in ran for output in cell.outputs)
    assert repo_files() == before, f"{name} wrote into the checkout: {sorted(map(str, repo_files() - before))}"
