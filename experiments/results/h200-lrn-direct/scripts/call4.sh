# Call 4 (the landing binaries). Binaries: base = main abbbeec; new = the direct form in 1-word tasks where its tasks are at
# most 768 a multiprocessor (4-word and 1-channel tasks and the probes removed). (a) the whole test_gpu on new; (b) AlexNet
# kernels at 1-16 and 256 images in fp16 / bf16, INT8 (fp16) at 1, 2 rounds alternating; (c) memcheck and racecheck over
# the pooling / LRN tests.
set -uo pipefail
. experiments/device_env.sh
record_device; alexnet_model
SECONDS=0
timeout 200 $bin/test_gpu --gtest_brief=1 > test_gpu.log 2>&1
echo "test_gpu exit $? ($SECONDS s)" | tee $OUT/summary.md; grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests from" test_gpu.log | tee -a $OUT/summary.md | head -5
grep -E "Failure" -A4 test_gpu.log | head -30 | tee -a $OUT/summary.md
mkdir -p ab
COMMON="--model data/models/alexnet --backend cuda --reps 20 --warmup 3 --host-memory pinned --check-images 1 --check-backend cpu"
sweeps() {
  local r=$1 w=$2 p
  for p in fp16 bf16; do bs_of $w sweep $COMMON --batches 1,2,4,8,16,256 --precision $p --out ab/$w-$p-r$r.csv > ab/$w-$p-r$r.log 2>&1 || echo "$w $p exit $?"; done
  bs_of $w sweep $COMMON --batches 1 --precision fp16 --weights int8 --out ab/$w-int8fp16-r$r.csv > ab/$w-int8fp16-r$r.log 2>&1 || echo "$w int8 exit $?"
  echo "round $r $w ($SECONDS s)"
}
ROUNDS=2 ab_rounds sweeps
{ echo; echo "## base (main) against new"; python3 experiments/ab_compare.py ab | grep -v missing
  for l in norm1 norm2; do echo; echo "### $l"; python3 experiments/ab_compare.py ab $l | awk '/base ms, '$l' /{p=1} p' | grep -v missing; done
} >> $OUT/summary.md 2>&1
F='*Pool*:*pool*:*Lrn*:*lrn*'
timeout 120 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 $bin/test_gpu --gtest_brief=1 --gtest_filter="$F" > memcheck.log 2>&1
echo "memcheck exit $? ($SECONDS s)" | tee -a $OUT/summary.md; grep -E "ERROR SUMMARY|PASSED|FAILED" memcheck.log | tee -a $OUT/summary.md | head -3
timeout 100 /usr/local/cuda/bin/compute-sanitizer --tool racecheck --print-limit 5 $bin/test_gpu --gtest_brief=1 --gtest_filter="$F" > racecheck.log 2>&1
echo "racecheck exit $? ($SECONDS s)" | tee -a $OUT/summary.md; grep -E "RACECHECK SUMMARY|PASSED|FAILED" racecheck.log | tee -a $OUT/summary.md | head -3
tar czf $OUT/raw.tgz ab *.log 2>/dev/null
cat $OUT/summary.md | head -80
