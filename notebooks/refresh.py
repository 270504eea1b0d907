"""Execute every notebook in place, so that they are committed with their outputs (`make notebooks`).

Each runs top to bottom in a scratch folder on this interpreter with the checkout importable; what a cell writes
to stderr (progress bars, library warnings) is dropped, so the committed outputs are the results and the plots.
tests/test_notebooks.py runs the same `execute` on a copy and checks the committed outputs.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import nbformat
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parent
CHECKOUT = NOTEBOOKS.parent
KERNEL_NAME = "parallax-zoo-notebooks"
TIMEOUT_S = 120


def kernel_specs(folder: Path) -> KernelSpecManager:
    """A kernelspec in `folder` that runs this interpreter with the checkout on PYTHONPATH."""
    spec_dir = folder / KERNEL_NAME
    spec_dir.mkdir(parents=True, exist_ok=True)
    python_path = os.pathsep.join(filter(None, [str(CHECKOUT), os.environ.get("PYTHONPATH")]))
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3",
        "language": "python",
        "env": {"PYTHONPATH": python_path, "JAX_PLATFORMS": "cpu"},
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    return KernelSpecManager(kernel_dirs=[str(folder)], ensure_native_kernel=False)


def execute(notebook: nbformat.NotebookNode, workdir: Path, specs: KernelSpecManager) -> nbformat.NotebookNode:
    """Run `notebook` top to bottom in `workdir` (an error stops it and raises); its outputs, stderr dropped."""
    kernel = KernelManager(kernel_name=KERNEL_NAME, kernel_spec_manager=specs,
                           connection_file=str(workdir / "kernel.json"))
    client = NotebookClient(notebook, km=kernel, timeout=TIMEOUT_S, allow_errors=False,
                            resources={"metadata": {"path": str(workdir)}})
    try:
        client.execute()
    finally:
        if kernel.has_kernel:
            kernel.shutdown_kernel(now=True)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = [output for output in cell.outputs
                            if not (output.output_type == "stream" and output.get("name") == "stderr")]
            cell.metadata.pop("execution", None)
    notebook.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    return notebook


def refresh(path: Path) -> None:
    """Execute the notebook at `path` and write it back with its outputs (whole, through a temporary file)."""
    notebook = nbformat.read(path, as_version=4)
    with tempfile.TemporaryDirectory() as scratch:
        executed = execute(notebook, Path(scratch), kernel_specs(Path(scratch) / "kernels"))
    temporary = path.with_suffix(".ipynb.tmp")
    nbformat.write(executed, temporary)
    temporary.replace(path)
    print(f"{path.name}: executed, {path.stat().st_size / 1024:.0f} KiB")


if __name__ == "__main__":
    for notebook_path in sorted(NOTEBOOKS.glob("*.ipynb")):
        refresh(notebook_path)
