#!/usr/bin/env bash
# The wheels the GPU check needs and the GPU machine lacks, for CPython 3.12 on
# manylinux x86-64, downloaded into one folder that travels with the repository.
# Run it where the package index is reachable; the GPU machine reaches none.
# docs/development.md ("The GPU check") says how the folder is used there.
#
#   bash benchmarks/gpu_wheels.sh [FOLDER]     # default .whl/ (git-ignored)
#
# The GPU machine already has jax/jaxlib 0.11.2 with its CUDA plugin, flax,
# optax, chex, safetensors, huggingface_hub, jaxtyping, numpy, pyyaml, pillow,
# matplotlib, seaborn, pandas, cloudpickle, typing-extensions, tqdm, rich, pytest
# and hypothesis. What the check imports beyond that, with every requirement
# followed down to a package the machine has:
#   gymnax    gymnax/CartPole-v1 (needs gymnasium, seaborn, matplotlib, flax, jax)
#   gymnasium gymnax's spaces and registration (needs farama-notifications,
#             cloudpickle, numpy, typing-extensions)
#   farama-notifications  imported by gymnasium at import time
#   six       in the project's gymnax extra; carried although the machine's list names it (11 kB)
#   pgx       the board-game peer (needs svgwrite, jax, typing-extensions)
#   svgwrite  imported by pgx at import time
# Every one is pure Python (py3-none-any); the versions are the ones the project is tested with.
set -euo pipefail
cd "$(dirname "$0")/.."

FOLDER=${1:-.whl}
LIMIT_MIB=60
WHEELS=(
  gymnax==1.0.1
  gymnasium==1.3.0
  farama-notifications==0.0.6
  six==1.17.0
  pgx==2.6.0
  svgwrite==1.4.3
)

mkdir -p "$FOLDER"
python3 -m pip download --quiet --no-deps --only-binary=:all: \
  --python-version 3.12 --implementation cp --abi cp312 \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64 \
  --dest "$FOLDER" "${WHEELS[@]}"

# One version of each package: a second one makes `pip install --no-deps` of the folder fail.
names=$(for wheel in "$FOLDER"/*.whl; do basename "$wheel" | cut -d- -f1 | tr 'A-Z-' 'a-z_'; done | sort)
duplicates=$(uniq -d <<<"$names")
if [[ -n "$duplicates" ]]; then
  echo "gpu_wheels: $FOLDER holds more than one version of: $duplicates; empty the folder and run again" >&2
  exit 1
fi

ls -l "$FOLDER"/*.whl | awk '{printf "%10d  %s\n", $5, $NF}'
bytes=$(du -cb "$FOLDER"/*.whl | tail -1 | cut -f1)
mib=$(awk -v b="$bytes" 'BEGIN {printf "%.2f", b / 1048576}')
echo "$(ls "$FOLDER"/*.whl | wc -l) wheels, $mib MiB in $FOLDER"
if (( bytes > LIMIT_MIB * 1048576 )); then
  echo "gpu_wheels: $mib MiB is over the $LIMIT_MIB MiB that may travel with the repository" >&2
  exit 1
fi
