#!/usr/bin/env bash
# Configures and builds batchscope into ./build (one build folder). Extra arguments go to CMake's
# configure step, e.g. -DCMAKE_CUDA_ARCHITECTURES=80. C++ files are compiled in unity batches of 8 (the header-only
# libraries' templates instantiated once per batch, not once per file: a 2-core build 3:05 -> 2:19);
# -DCMAKE_UNITY_BUILD=OFF compiles file by file (what checks that each file includes what it uses).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=8 "$@" >/dev/null
cmake --build build -j"$(nproc)"
