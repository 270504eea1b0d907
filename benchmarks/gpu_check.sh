#!/usr/bin/env bash
# The GPU check: on a machine with an NVIDIA GPU, in under 8 minutes,
#   1. install the project from this repo with CUDA jax,
#   2. re-train the CartPole and Race baselines from their shipped config.yaml,
#   3. evaluate the re-trained policies under the fixed protocol,
#   4. compare their scores with the reference scores in registry.yaml,
#   5. print the training throughput.
# Nothing else in the project depends on a GPU; CI never runs this.
#
#   bash benchmarks/gpu_check.sh            # from the repo root
#   WHEELS=/path/to/wheels bash ...         # install offline from a folder of wheels
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${VENV:-/tmp/parallax-zoo-gpu}
OUT=${OUT:-/tmp/parallax-zoo-gpu-check}
PIP_ARGS=(--quiet)
if [[ -n "${WHEELS:-}" ]]; then PIP_ARGS+=(--no-index --find-links "$WHEELS"); fi

python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install "${PIP_ARGS[@]}" -e ".[train,hub,gymnax]" "jax[cuda12]>=0.10.2,<0.11"
"$VENV/bin/python" -c "import jax; d = jax.devices(); print('devices:', d); assert d[0].platform == 'gpu', 'no GPU visible to jax'"

status=0
for env_id in gymnax/CartPole-v1 Race-v0; do
  folder="baselines/${env_id//\//-}"
  out="$OUT/${env_id//\//-}"
  rm -rf "$out"
  start=$(date +%s.%N)
  "$VENV/bin/parallax-zoo" train "$env_id" --config "$folder/config.yaml" --out "$out" --seed 0
  end=$(date +%s.%N)
  "$VENV/bin/python" - "$env_id" "$out" "$start" "$end" <<'PY' || status=1
import sys

import yaml

import parallax_zoo
from parallax_zoo.scoring.checkpoint import load_config
from parallax_zoo.scoring.evaluation import evaluate
from parallax_zoo.scoring.loading import load_folder

env_id, out, start, end = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
config = load_config(f"{out}/config.yaml")
policy = load_folder(out, parallax_zoo.make(env_id))
result = evaluate(env_id, policy, name="gpu re-train")
reference = parallax_zoo.spec(env_id).reference_score
seconds = end - start
steps = config.total_timesteps
print(f"{env_id}: re-trained score {result.mean:.3f} +/- {result.std:.3f} (reference {reference:.3f}); "
      f"{steps:,} env steps per seed in {seconds:.1f} s including compile and evaluation "
      f"= {steps / seconds:,.0f} steps/s")
low, high = result.ci95
tolerance = max(0.05 * abs(reference), 0.05)
if abs(result.mean - reference) > tolerance and not (low <= reference <= high):
    sys.exit(f"{env_id}: the re-trained score {result.mean:.3f} is not within {tolerance:.3f} of the reference {reference:.3f}")
PY
done
exit $status
