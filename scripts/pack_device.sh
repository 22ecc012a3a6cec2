#!/usr/bin/env bash
# Builds the binaries for the GPU machine (build-device/: OpenCV off, since that machine has none) and
# copies them, with the shared libraries that machine lacks, into .device/ (git-ignored), for
# experiments/gpu_check.sh to run there.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-device -DCMAKE_BUILD_TYPE=Release -DBATCHSCOPE_WITH_OPENCV=OFF >/dev/null
cmake --build build-device -j"$(nproc)" --target batchscope batchscope-weights test_gpu >/dev/null
rm -rf .device && mkdir -p .device/lib
cp build-device/app/batchscope build-device/weights_tools/batchscope-weights build-device/tests/test_gpu .device/
for lib in libzip.so.4; do  # the GPU machine has OpenBLAS, CUDA and cuDNN
  cp -L "$(ldconfig -p | awk -v l=$lib '$1 == l {print $NF; exit}')" .device/lib/
done
git log -1 --format='commit %H %s' >.device/COMMIT
du -sh .device
