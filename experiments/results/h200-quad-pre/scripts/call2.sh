# Call 2. Binaries: base = main 1b2c2a6; new = fe6065b (call 1 with the wgmma cluster versions v60-v63 as in main:
# their quads load after the barrier again). (a) the whole test_gpu on new; (b) AlexNet kernels as call 1, 3 rounds
# alternating; (c) memcheck over the cluster versions' op cases, racecheck over v48's and fc v17's; (d) end to end at
# 1 image, fp16 and FP32, --cuda-graph --copies kernel, 2 rounds.
set -uo pipefail
. experiments/device_env.sh
record_device; alexnet_model
cat .device/base/COMMIT >> $OUT/device.txt 2>/dev/null
SECONDS=0
timeout 200 $bin/test_gpu --gtest_brief=1 > test_gpu.log 2>&1
echo "test_gpu exit $? ($SECONDS s)" | tee $OUT/summary.md; grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests from" test_gpu.log | tee -a $OUT/summary.md | head -5
grep -E "FAILED|Failure" -A3 test_gpu.log | head -30 | tee -a $OUT/summary.md
mkdir -p ab
COMMON="--model data/models/alexnet --backend cuda --reps 20 --warmup 3 --host-memory pinned --check-images 1 --check-backend cpu"
sweeps() {
  local r=$1 w=$2 p
  for p in fp16 bf16 fp32; do bs_of $w sweep $COMMON --batches 1,2,4,8,16 --precision $p --out ab/$w-$p-r$r.csv > ab/$w-$p-r$r.log 2>&1 || echo "$w $p exit $?"; done
  for p in fp16 fp32; do bs_of $w sweep $COMMON --batches 1 --precision $p --weights int8 --out ab/$w-int8$p-r$r.csv > ab/$w-int8$p-r$r.log 2>&1 || echo "$w int8 $p exit $?"; done
  echo "round $r $w ($SECONDS s)"
}
ROUNDS=3 ab_rounds sweeps
{ echo; echo "## base (main) against new"; python3 experiments/ab_compare.py ab conv1,conv2,conv3,conv4,conv5
  for l in conv1 conv2 conv3 conv4 conv5 fc6 fc7 fc8; do python3 experiments/ab_compare.py ab $l | awk '/base ms, '$l' /{p=1} p' | tail -n +3 | grep -v missing | sed "s/^/$l /"; done
} >> $OUT/summary.md 2>&1
F='*cuda_conv48*:*cuda_conv49*:*cuda_conv50*:*cuda_conv60*:*cuda_conv61*:*cuda_conv62*:*cuda_conv63*:*cuda_fc17*'
timeout 100 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 $bin/test_gpu --gtest_brief=1 --gtest_filter="$F" > memcheck.log 2>&1
echo "memcheck exit $? ($SECONDS s)" | tee -a $OUT/summary.md; grep -E "ERROR SUMMARY|PASSED|FAILED" memcheck.log | tee -a $OUT/summary.md | head -3
timeout 90 /usr/local/cuda/bin/compute-sanitizer --tool racecheck --print-limit 5 $bin/test_gpu --gtest_brief=1 --gtest_filter='*cuda_conv48*:*cuda_fc17*' > racecheck.log 2>&1
echo "racecheck exit $? ($SECONDS s)" | tee -a $OUT/summary.md; grep -E "RACECHECK SUMMARY|PASSED|FAILED" racecheck.log | tee -a $OUT/summary.md | head -3
mkdir -p e2e
E2E="--model data/models/alexnet --backend cuda --reps 50 --warmup 5 --host-memory pinned --check-images 1 --check-backend cpu --batches 1 --cuda-graph --copies kernel"
e2e() {
  local r=$1 w=$2 p
  for p in fp16 fp32; do bs_of $w sweep $E2E --precision $p --out e2e/$w-$p-r$r.csv > e2e/$w-$p-r$r.log 2>&1 || echo "$w $p exit $?"; done
  echo "e2e round $r $w ($SECONDS s)"
}
ROUNDS=2 ab_rounds e2e
{ echo; echo "## end to end at 1 image, --cuda-graph --copies kernel, 2 rounds"; python3 experiments/results/h200-timeline-epilogue/scripts/e2e_compare.py e2e base,new; } >> $OUT/summary.md 2>&1
tar czf $OUT/raw.tgz ab e2e *.log 2>/dev/null
head -60 $OUT/summary.md
