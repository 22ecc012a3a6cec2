# Prepared (twenty-fifth session), not run: main (e1fcae7 or later) as base/ against the same tree with
# 0001-PROBE-runtime-activation-epilogue.patch (new: the 16-bit wgmma epilogue's run-time activation of before 44aa0a0,
# "form B"), to settle whether the compile-time activation (44aa0a0, and 929b8da before it) costs at 1,024 images on top
# of FastDiv, v65 and the one-wave repack. Also the sanitizers the final repack change (bcb2992) did not get.
# Pack: build base with LINEINFO=0 PACK=batchscope, move .device/pack.tar.xz aside, apply the patch, then
# LINEINFO=0 PACK="batchscope test_gpu" BASE_PACK=<that file> scripts/pack_device.sh (the sanitizers run the new
# test_gpu: the patch changes only the epilogue, so the repack and FastDiv code under them is main's). Run: bash <this file> (carry .device/pack.tar.xz,
# .device/COMMIT). About 4 minutes.
set -uo pipefail
. experiments/device_env.sh
record_device; python3 experiments/results/h200-pdl-probe/scripts/gen_weights.py data/models/alexnet
SECONDS=0
mkdir -p ab
COMMON="--model data/models/alexnet --backend cuda --reps 20 --warmup 3 --host-memory pinned --check-images 1 --check-backend cpu"
point() {
  local r=$1 w=$2 p
  for p in fp16 bf16; do bs_of $w sweep $COMMON --batches 16,128,1024 --precision $p --out ab/$w-$p-r$r.csv > ab/$w-$p-r$r.log 2>&1 || echo "$w $p exit $?"; done
  echo "round $r $w ($SECONDS s)"
}
ROUNDS=3 ab_rounds point
{ echo "## main (base: compile-time activation) -> form B (new: run-time activation), kernels"; python3 experiments/ab_compare.py ab | grep -v missing
  echo; echo "### conv1"; python3 experiments/ab_compare.py ab conv1 | awk '/base ms, conv1 /{p=1} p' | grep -v missing | tail -n +3
  echo; echo "### conv2-conv5"; python3 experiments/ab_compare.py ab conv2,conv3,conv4,conv5 | tail -n 6
} > $OUT/summary.md 2>&1
T=$bin/test_gpu
F='GpuS2d.*:*WgmmaHalf*'
timeout 90 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 $T --gtest_brief=1 --gtest_filter="$F" > memcheck.log 2>&1; echo "memcheck ($T) exit $?: $(grep -E 'ERROR SUMMARY|PASSED|FAILED' memcheck.log | tr '\n' ' ')" >> $OUT/summary.md
timeout 90 /usr/local/cuda/bin/compute-sanitizer --tool racecheck --print-limit 5 $T --gtest_brief=1 --gtest_filter="$F" > racecheck.log 2>&1; echo "racecheck ($T) exit $?: $(grep -E 'RACECHECK SUMMARY|PASSED|FAILED' racecheck.log | tr '\n' ' ')" >> $OUT/summary.md
echo "total $SECONDS s" >> $OUT/summary.md
tar cJf $OUT/raw.tar.xz ab memcheck.log racecheck.log 2>/dev/null
cat $OUT/summary.md
