# Call 1. Binaries: base = main 8ac9a3a; new = the pooling windows loaded as one batch (pool_gather.cuh) in the
# FP32 and 16-bit pool kernels and the 16-bit LRN + pooling kernel's pooling. (a) the pooling / LRN tests on new,
# memcheck and racecheck over them; (b) AlexNet kernels at 1-16 and 256 images, fp16 / bf16 / FP32, INT8 at 1,
# 2 rounds alternating; (c) ncu on norm1 / norm2 / pool5 at 1 image (fp16 and FP32) in both binaries.
set -uo pipefail
. experiments/device_env.sh
record_device; alexnet_model
SECONDS=0
F='*Pool*:*pool*:*Lrn*:*lrn*'
timeout 120 $bin/test_gpu --gtest_brief=1 --gtest_filter="$F" > test_gpu.log 2>&1
echo "test_gpu ($F) exit $? ($SECONDS s)" | tee $OUT/summary.md; grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests from" test_gpu.log | tee -a $OUT/summary.md | head -5
grep -E "FAILED|Failure" -A4 test_gpu.log | head -30 | tee -a $OUT/summary.md
mkdir -p ab
COMMON="--model data/models/alexnet --backend cuda --reps 20 --warmup 3 --host-memory pinned --check-images 1 --check-backend cpu"
sweeps() {
  local r=$1 w=$2 p
  for p in fp16 bf16 fp32; do bs_of $w sweep $COMMON --batches 1,2,4,8,16,256 --precision $p --out ab/$w-$p-r$r.csv > ab/$w-$p-r$r.log 2>&1 || echo "$w $p exit $?"; done
  for p in fp16 fp32; do bs_of $w sweep $COMMON --batches 1 --precision $p --weights int8 --out ab/$w-int8$p-r$r.csv > ab/$w-int8$p-r$r.log 2>&1 || echo "$w int8 $p exit $?"; done
  echo "round $r $w ($SECONDS s)"
}
ROUNDS=2 ab_rounds sweeps
{ echo; echo "## base (main) against new"; python3 experiments/ab_compare.py ab
  for l in norm1 norm2 pool5; do python3 experiments/ab_compare.py ab $l | awk '/base ms, '$l' /{p=1} p' | tail -n +3 | grep -v missing | sed "s/^/$l /"; done
} >> $OUT/summary.md 2>&1
timeout 120 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 $bin/test_gpu --gtest_brief=1 --gtest_filter="$F" > memcheck.log 2>&1
echo "memcheck exit $? ($SECONDS s)" | tee -a $OUT/summary.md; grep -E "ERROR SUMMARY|PASSED|FAILED" memcheck.log | tee -a $OUT/summary.md | head -3
timeout 90 /usr/local/cuda/bin/compute-sanitizer --tool racecheck --print-limit 5 $bin/test_gpu --gtest_brief=1 --gtest_filter="$F" > racecheck.log 2>&1
echo "racecheck exit $? ($SECONDS s)" | tee -a $OUT/summary.md; grep -E "RACECHECK SUMMARY|PASSED|FAILED" racecheck.log | tee -a $OUT/summary.md | head -3
mkdir -p ncu
for w in base new; do for p in fp16 fp32; do
  b=$bin; [ $w = base ] && b=.device/base
  LD_LIBRARY_PATH=$PWD/$b/lib:$LD_LIBRARY_PATH timeout 100 ncu --clock-control none --kernel-name 'regex:lrn|pool' --launch-count 3 \
    --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section SchedulerStats --section SourceCounters \
    $b/batchscope sweep --model data/models/alexnet --backend cuda --batches 1 --reps 1 --warmup 0 --precision $p \
    --no-profile --check-images 0 --out /tmp/ncu-sweep.csv > ncu/$w-$p.txt 2>&1
  echo "ncu $w $p exit $? ($SECONDS s)"
  { echo "### ncu $w $p"; grep -E "^  [a-zA-Z_].*\(|Duration|Elapsed Cycles|Grid Size|Registers Per|Issue Slots Busy|Warp Cycles Per Issued|Stall|Achieved Occupancy" ncu/$w-$p.txt | head -60; } >> $OUT/summary.md
done; done
tar czf $OUT/raw.tgz ab ncu *.log 2>/dev/null
head -70 $OUT/summary.md
