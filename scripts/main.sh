#!/usr/bin/env bash
# The main job on the shipped data: installs what is missing, builds, and runs the ECE 408 network over
# the 10,000 Fashion-MNIST test images (on the GPU where one exists, else on the cpu backend).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
backend=cpu
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 && ./build/app/batchscope infer --help | grep -q cuda; then
  backend=cuda
fi
./build/app/batchscope infer --model data/models/ece408 --backend "$backend" --layer-times
