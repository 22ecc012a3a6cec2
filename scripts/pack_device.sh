#!/usr/bin/env bash
# Builds the binaries for the GPU machine (build-device/: OpenCV off, since that machine has none) and packs
# them, with the shared libraries that machine lacks and the commit they were built from, into
# .device/pack.tar.xz (git-ignored; all three 14.2 MB in 2026-12, and the device tool carries at most 64 MiB with the
# tree, itself 51.6 MB). experiments/gpu_check.sh unpacks it into .device/ there.
#
# LINEINFO=0: the CUDA code without source lines (no -lineinfo, in build-device-noline/): kernel objects about a quarter
# of the bytes, so that two sets of binaries fit one call (ncu then shows no source view). BASE_PACK=FILE: an earlier
# pack.tar.xz whose batchscope and libraries go into the new pack's base/ (experiments/device_env.sh's ab_rounds and
# bs_of run them): build the base commit first with LINEINFO=0, move its pack aside, then the new commit with LINEINFO=0
# BASE_PACK=that file (the same build folder, so only what changed is compiled again).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build-device lines=ON
if [ "${LINEINFO:-1}" = 0 ]; then dir=build-device-noline lines=OFF; fi
cmake -S . -B $dir -DCMAKE_BUILD_TYPE=Release -DBATCHSCOPE_WITH_OPENCV=OFF -DBATCHSCOPE_CUDA_LINEINFO=$lines >/dev/null
# PACK: which binaries travel (default all three); fewer where the tree and the pack would pass the 64 MiB.
PACK=${PACK:-batchscope batchscope-weights test_gpu}
cmake --build $dir -j"$(nproc)" --target $PACK >/dev/null
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/lib"
for t in $PACK; do
  case $t in
    batchscope) cp $dir/app/batchscope "$stage/" ;;
    batchscope-weights) cp $dir/weights_tools/batchscope-weights "$stage/" ;;
    test_gpu) cp $dir/tests/test_gpu "$stage/" ;;
    *) echo "pack_device.sh: PACK: unknown binary '$t' (batchscope, batchscope-weights, test_gpu)" >&2; exit 2 ;;
  esac
done
for lib in libzip.so.4 libonnx_proto.so.1 libprotobuf.so.32; do  # the GPU machine has OpenBLAS, CUDA and cuDNN, no ONNX or protobuf
  cp -L "$(ldconfig -p | awk -v l=$lib '$1 == l {print $NF; exit}')" "$stage/lib/"
done
git log -1 --format='commit %H %s' >"$stage/COMMIT"
git status --porcelain --untracked-files=no | grep -q . && echo "(built with uncommitted changes)" >>"$stage/COMMIT"
[ "$lines" = OFF ] && echo "(built without -lineinfo)" >>"$stage/COMMIT"
if [ -n "${BASE_PACK:-}" ]; then
  [ -f "$BASE_PACK" ] || { echo "pack_device.sh: BASE_PACK: $BASE_PACK: no such file" >&2; exit 2; }
  mkdir -p "$stage/base"
  tar -C "$stage/base" -xJf "$BASE_PACK" ./batchscope ./lib ./COMMIT
fi
rm -rf .device && mkdir -p .device
# xz with a 192 MiB dictionary, which spans the binaries (they share most of their kernels): batchscope + test_gpu
# pack into ~13 MB, where -9e's 64 MiB dictionary, smaller than one binary since late 2026-11, left 22 MB (the default
# -6 took 25 MB when all three were ~55 MB). Unpacking needs ~200 MB of memory.
# With a base the dictionary spans both sets (512 MiB; unpacking then needs ~520 MB of memory).
dict=192MiB; [ -n "${BASE_PACK:-}" ] && dict=512MiB
XZ_OPT=${XZ_OPT:---lzma2=preset=9,dict=$dict -T2} tar -C "$stage" -cJf .device/pack.tar.xz .
cp "$stage/COMMIT" .device/COMMIT
du -sh .device/pack.tar.xz
