#!/usr/bin/env bash
# Configures and builds batchscope into ./build (one build folder). Extra arguments go to CMake's
# configure step, e.g. -DCMAKE_CUDA_ARCHITECTURES=80. C++ files are compiled in unity batches of 8 (the header-only
# libraries' templates instantiated once per batch, not once per file: a 2-core build 3:05 -> 2:19);
# -DCMAKE_UNITY_BUILD=OFF compiles file by file (what checks that each file includes what it uses).
# On a machine without a GPU (no nvidia-smi, or it lists none), with no architecture given now or when ./build was
# configured before, the CUDA code is compiled to PTX only (-DCMAKE_CUDA_ARCHITECTURES=90-virtual): every kernel still
# goes through the front end and the device compiler, but ptxas, a third of nvcc's time, is skipped, since no machine
# code can run there (experiments/ci-time.md, "PTX only where no GPU can run the kernels"). The binary still runs its
# CPU backends, and on a Hopper GPU the driver would compile the PTX at load. -DCMAKE_CUDA_ARCHITECTURES=90 builds the
# machine code anyway.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/ninja_dir.sh
ninja_dir build build
# The architectures: as given, else as this folder was configured before, else by whether a GPU is here.
arch=()
if ! printf '%s\n' "$@" | grep -q '^-DCMAKE_CUDA_ARCHITECTURES=' &&
   ! grep -q '^CMAKE_CUDA_ARCHITECTURES:' build/CMakeCache.txt 2>/dev/null; then
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    arch=(-DCMAKE_CUDA_ARCHITECTURES=90)
  else
    arch=(-DCMAKE_CUDA_ARCHITECTURES=90-virtual)
    echo "build: no GPU here: the CUDA code is compiled to PTX only (-DCMAKE_CUDA_ARCHITECTURES=90 builds machine code)" >&2
  fi
fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=8 ${arch[@]+"${arch[@]}"} "$@" >/dev/null
cmake --build build -j"$(nproc)"
