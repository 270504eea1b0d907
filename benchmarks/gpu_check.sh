#!/usr/bin/env bash
# The GPU check (docs/development.md, "The GPU check"): with the GPU machine's own python and jax, and
# nothing from the network,
#   1. install the wheels carried in WHEELS (benchmarks/gpu_wheels.sh makes them) into a
#      temporary folder, with --no-index --no-deps, and put it and this tree on PYTHONPATH;
#   2. run benchmarks/gpu_check.py: print every version, stop if a package is missing or jax
#      sees no GPU, re-train and check two baselines, time the envs, the boards against Pgx
#      and PPO, and write results.json, the curves and check.log to GPU_CHECK_OUT.
#
#   bash benchmarks/gpu_check.sh                   # on the GPU machine, from the repo root
#   GPU_CHECK_DRY=1 bash benchmarks/gpu_check.sh   # anywhere: the same steps, tiny sizes, any backend
#
# PYTHON (default python3) is the interpreter whose jax is used, WHEELS (default .whl) the carried
# wheels, GPU_CHECK_OUT (default gpu-check) the results folder, GPU_CHECK_ARGS more arguments for
# gpu_check.py (e.g. "--sections envs,boards"). A dry run with no wheels in WHEELS
# builds one small probe wheel here and installs that instead, so the install step and the path
# order are still exercised.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
WHEELS=${WHEELS:-.whl}
RESULTS=${GPU_CHECK_OUT:-gpu-check}
DRY=${GPU_CHECK_DRY:-}
SITE=$(mktemp -d)
trap 'rm -rf "$SITE"' EXIT

shopt -s nullglob
wheels=("$WHEELS"/*.whl)
if (( ${#wheels[@]} == 0 )); then
  if [[ -z "$DRY" ]]; then
    echo "gpu_check: no wheels in $WHEELS/; run 'bash benchmarks/gpu_wheels.sh' where the package index is reachable and bring that folder (or set WHEELS)" >&2
    exit 2
  fi
  "$PYTHON" - "$SITE/probe" <<'PY'
"""A minimal pure-Python wheel, gpu_check_probe 1.0, written with zipfile: nothing to download, nothing to build."""
import base64
import hashlib
import sys
import zipfile
from pathlib import Path

folder = Path(sys.argv[1])
folder.mkdir()
info = "gpu_check_probe-1.0.dist-info"
files = {
    "gpu_check_probe.py": '"""Installed by the GPU check\'s dry run in place of the carried wheels."""\n',
    f"{info}/METADATA": "Metadata-Version: 2.1\nName: gpu-check-probe\nVersion: 1.0\n",
    f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: gpu_check.sh\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
record = [
    f"{name},sha256={base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b'=').decode()},{len(text.encode())}"
    for name, text in files.items()
]
files[f"{info}/RECORD"] = "\n".join([*record, f"{info}/RECORD,,"]) + "\n"
with zipfile.ZipFile(folder / "gpu_check_probe-1.0-py3-none-any.whl", "w") as wheel:
    for name, text in files.items():
        wheel.writestr(name, text)
PY
  wheels=("$SITE"/probe/*.whl)
fi

echo "gpu_check: installing ${#wheels[@]} carried wheel(s) with --no-index --no-deps: ${wheels[*]##*/}"
"$PYTHON" -m pip install --quiet --disable-pip-version-check --no-index --no-deps --no-compile --no-cache-dir \
  --target "$SITE/lib" "${wheels[@]}"
export PYTHONPATH="$SITE/lib:$PWD${PYTHONPATH:+:$PYTHONPATH}"
export GPU_CHECK_SITE="$SITE/lib"

mkdir -p "$RESULTS"
"$PYTHON" -u benchmarks/gpu_check.py --out "$RESULTS" ${DRY:+--dry} ${GPU_CHECK_ARGS:-} 2>&1 | tee "$RESULTS/check.log"
