# Call 1. Binaries: base = main abbbeec; new = the 16-bit LRN + pooling kernel's direct form (uncommitted on abbbeec).
# (a) the pooling / LRN tests on new; (b) AlexNet kernels at 1-256 images in fp16 / bf16, INT8 (fp16) at 1, 2 rounds
# alternating; (c) memcheck and racecheck over the 16-bit LRN + pooling tests; (d) ncu on norm1 / norm2 at 1 image (new,
# fp16); (e) the whole test_gpu on new.
set -uo pipefail
. experiments/device_env.sh
record_device; alexnet_model
SECONDS=0
F='*Pool*:*pool*:*Lrn*:*lrn*'
timeout 120 $bin/test_gpu --gtest_brief=1 --gtest_filter="$F" > test_pool.log 2>&1
echo "test_gpu ($F) exit $? ($SECONDS s)" | tee $OUT/summary.md; grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests from" test_pool.log | tee -a $OUT/summary.md | head -5
grep -E "FAILED|Failure" -A4 test_pool.log | head -30 | tee -a $OUT/summary.md
mkdir -p ab
COMMON="--model data/models/alexnet --backend cuda --reps 20 --warmup 3 --host-memory pinned --check-images 1 --check-backend cpu"
sweeps() {
  local r=$1 w=$2 p
  for p in fp16 bf16; do bs_of $w sweep $COMMON --batches 1,2,4,8,16,32,64,256 --precision $p --out ab/$w-$p-r$r.csv > ab/$w-$p-r$r.log 2>&1 || echo "$w $p exit $?"; done
  bs_of $w sweep $COMMON --batches 1 --precision fp16 --weights int8 --out ab/$w-int8fp16-r$r.csv > ab/$w-int8fp16-r$r.log 2>&1 || echo "$w int8 exit $?"
  echo "round $r $w ($SECONDS s)"
}
ROUNDS=2 ab_rounds sweeps
{ echo; echo "## base (main) against new"; python3 experiments/ab_compare.py ab
  for l in norm1 norm2; do python3 experiments/ab_compare.py ab $l | awk '/base ms, '$l' /{p=1} p' | tail -n +3 | grep -v missing | sed "s/^/$l /"; done
} >> $OUT/summary.md 2>&1
H='GpuLrnPoolHalf*'
timeout 100 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 $bin/test_gpu --gtest_brief=1 --gtest_filter="$H" > memcheck.log 2>&1
echo "memcheck exit $? ($SECONDS s)" | tee -a $OUT/summary.md; grep -E "ERROR SUMMARY|PASSED|FAILED" memcheck.log | tee -a $OUT/summary.md | head -3
timeout 100 /usr/local/cuda/bin/compute-sanitizer --tool racecheck --print-limit 5 $bin/test_gpu --gtest_brief=1 --gtest_filter="$H" > racecheck.log 2>&1
echo "racecheck exit $? ($SECONDS s)" | tee -a $OUT/summary.md; grep -E "RACECHECK SUMMARY|PASSED|FAILED" racecheck.log | tee -a $OUT/summary.md | head -3
mkdir -p ncu
timeout 80 ncu --clock-control none --kernel-name 'regex:lrn' --launch-count 2 \
  --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section SchedulerStats \
  $bin/batchscope sweep --model data/models/alexnet --backend cuda --batches 1 --reps 1 --warmup 0 --precision fp16 \
  --no-profile --check-images 0 --out /tmp/ncu-sweep.csv > ncu/new-fp16.txt 2>&1
echo "ncu exit $? ($SECONDS s)"
{ echo "### ncu new fp16, 1 image"; grep -E "^  [a-zA-Z_].*\(|Duration|Elapsed Cycles|Grid Size|Registers Per|Issue Slots Busy|Warp Cycles Per Issued|Stall|Achieved Occupancy" ncu/new-fp16.txt | head -40; } >> $OUT/summary.md
left=$((560 - SECONDS))
if [ $left -gt 60 ]; then
  timeout $left $bin/test_gpu --gtest_brief=1 > test_gpu.log 2>&1
  echo "test_gpu (whole) exit $? ($SECONDS s)" | tee -a $OUT/summary.md; grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests from" test_gpu.log | tee -a $OUT/summary.md | head -5
  grep -E "FAILED|Failure" -A4 test_gpu.log | head -20 | tee -a $OUT/summary.md
fi
tar czf $OUT/raw.tgz ab ncu *.log 2>/dev/null
head -60 $OUT/summary.md
