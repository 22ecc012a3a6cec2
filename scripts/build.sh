#!/usr/bin/env bash
# Configures and builds batchscope into ./build (one build folder). Extra arguments go to CMake's
# configure step, e.g. -DCMAKE_CUDA_ARCHITECTURES=80.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build build -j"$(nproc)"
