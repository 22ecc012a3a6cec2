#!/usr/bin/env bash
# The main job on the shipped data: installs what is missing, builds, sweeps the ECE 408 network over batch
# sizes 1-1024 with the execution-time breakdown (on the GPU where one exists, else on the cpu backend), and
# draws the figures and the report. Results: experiments/results/latest/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
out=experiments/results/latest
mkdir -p "$out"
backend=cpu
if ./build/app/batchscope sweep --help >/dev/null 2>&1 && command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  backend=cuda
fi
./build/app/batchscope sweep --model data/models/ece408 --backend "$backend" --out "$out/ece408-$backend.csv"
./build/app/batchscope report "$out/ece408-$backend.csv" --out "$out/report"
echo
echo "Results: $out/ece408-$backend.csv (+ .layers.csv, .json)"
echo "Figures and report: $out/report/report.html and $out/report/report.md"
