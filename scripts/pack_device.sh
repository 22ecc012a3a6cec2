#!/usr/bin/env bash
# Builds the binaries for the GPU machine (build-device/: OpenCV off, since that machine has none) and packs
# them, with the shared libraries that machine lacks and the commit they were built from, into
# .device/pack.tar.xz (git-ignored; ~4 MB, where the binaries themselves are ~25 MB and the device tool carries
# at most 64 MiB with the tree). experiments/gpu_check.sh unpacks it into .device/ there.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-device -DCMAKE_BUILD_TYPE=Release -DBATCHSCOPE_WITH_OPENCV=OFF >/dev/null
cmake --build build-device -j"$(nproc)" --target batchscope batchscope-weights test_gpu >/dev/null
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/lib"
cp build-device/app/batchscope build-device/weights_tools/batchscope-weights build-device/tests/test_gpu "$stage/"
for lib in libzip.so.4; do  # the GPU machine has OpenBLAS, CUDA and cuDNN
  cp -L "$(ldconfig -p | awk -v l=$lib '$1 == l {print $NF; exit}')" "$stage/lib/"
done
git log -1 --format='commit %H %s' >"$stage/COMMIT"
git status --porcelain --untracked-files=no | grep -q . && echo "(built with uncommitted changes)" >>"$stage/COMMIT"
rm -rf .device && mkdir -p .device
tar -C "$stage" -cJf .device/pack.tar.xz .
cp "$stage/COMMIT" .device/COMMIT
du -sh .device/pack.tar.xz
