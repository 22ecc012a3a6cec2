#!/usr/bin/env bash
# Copies the built binaries and the shared libraries the GPU machine lacks into .device/ (git-ignored),
# for experiments/gpu_check.sh to run there. Build first with OpenCV off: scripts/build.sh -DBATCHSCOPE_WITH_OPENCV=OFF
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .device && mkdir -p .device/lib
cp build/app/batchscope build/weights_tools/batchscope-weights build/tests/test_gpu .device/
for lib in libzip.so.4; do  # the GPU machine has OpenBLAS, CUDA and cuDNN
  cp -L "$(ldconfig -p | awk -v l=$lib '$1 == l {print $NF; exit}')" .device/lib/
done
git log -1 --format='commit %H %s' >.device/COMMIT
du -sh .device
