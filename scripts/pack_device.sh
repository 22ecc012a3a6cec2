#!/usr/bin/env bash
# Builds the binaries for the GPU machine (build-device/: OpenCV off, since that machine has none) and packs
# them, with the shared libraries that machine lacks and the commit they were built from, into
# .device/pack.tar.xz (git-ignored; batchscope + test_gpu ~13 MB at the end of 2026-11, and the device tool carries
# at most 64 MiB with the tree, itself ~42 MB). experiments/gpu_check.sh unpacks it into .device/ there.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-device -DCMAKE_BUILD_TYPE=Release -DBATCHSCOPE_WITH_OPENCV=OFF >/dev/null
# PACK: which binaries travel (default all three); fewer where the tree and the pack would pass the 64 MiB.
PACK=${PACK:-batchscope batchscope-weights test_gpu}
cmake --build build-device -j"$(nproc)" --target $PACK >/dev/null
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/lib"
for t in $PACK; do
  case $t in
    batchscope) cp build-device/app/batchscope "$stage/" ;;
    batchscope-weights) cp build-device/weights_tools/batchscope-weights "$stage/" ;;
    test_gpu) cp build-device/tests/test_gpu "$stage/" ;;
    *) echo "pack_device.sh: PACK: unknown binary '$t' (batchscope, batchscope-weights, test_gpu)" >&2; exit 2 ;;
  esac
done
for lib in libzip.so.4 libonnx_proto.so.1 libprotobuf.so.32; do  # the GPU machine has OpenBLAS, CUDA and cuDNN, no ONNX or protobuf
  cp -L "$(ldconfig -p | awk -v l=$lib '$1 == l {print $NF; exit}')" "$stage/lib/"
done
git log -1 --format='commit %H %s' >"$stage/COMMIT"
git status --porcelain --untracked-files=no | grep -q . && echo "(built with uncommitted changes)" >>"$stage/COMMIT"
rm -rf .device && mkdir -p .device
# xz with a 192 MiB dictionary, which spans the binaries (they share most of their kernels): batchscope + test_gpu
# pack into ~13 MB, where -9e's 64 MiB dictionary, smaller than one binary since late 2026-11, left 22 MB (the default
# -6 took 25 MB when all three were ~55 MB). Unpacking needs ~200 MB of memory.
XZ_OPT=${XZ_OPT:---lzma2=preset=9,dict=192MiB -T2} tar -C "$stage" -cJf .device/pack.tar.xz .
cp "$stage/COMMIT" .device/COMMIT
du -sh .device/pack.tar.xz
