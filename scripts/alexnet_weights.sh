#!/usr/bin/env bash
# Makes data/models/alexnet usable: with bvlc_alexnet.npy given (the real weights), imports it; without,
# synthesizes deterministic He-initialised weights in the same format (seed 1) and imports those.
# Usage: scripts/alexnet_weights.sh [path/to/bvlc_alexnet.npy]
set -euo pipefail
[ $# -ge 1 ] && set -- "$(realpath "$1")"  # the file given, before moving to the repository root
cd "$(dirname "$0")/.."
[ -x build/weights_tools/batchscope-weights ] || scripts/build.sh
w=build/weights_tools/batchscope-weights
if [ $# -ge 1 ]; then
  $w import-bvlc "$1" --out data/models/alexnet
elif [ ! -f data/models/alexnet/conv1_weight.npy ]; then
  mkdir -p build/weights
  [ -f build/weights/alexnet-synthetic-seed1.npy ] || $w synthesize --model alexnet --seed 1 --out build/weights/alexnet-synthetic-seed1.npy
  $w import-bvlc build/weights/alexnet-synthetic-seed1.npy --out data/models/alexnet
fi
