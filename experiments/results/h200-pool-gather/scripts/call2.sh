# Call 2. Binaries: base = main 8ac9a3a; new = call 1's pool kernels (FP32 and 16-bit: the whole window's loads as one
# batch) with the 16-bit LRN + pooling kernel's pooling reading a window row's values together for tasks of up to 4
# words only (call 1's whole-window form took its 8-word tasks 57 -> 116 registers: norm1 fp16 at 256 images 1.35x).
# (a) the whole test_gpu on new; (b) AlexNet kernels at 1-16 and 256 images, fp16 / bf16 / FP32, INT8 at 1, and
# VGG-16 (synthetic) at 1 and 64 images fp16 / FP32, 2 rounds alternating; (c) memcheck and racecheck over the
# pooling / LRN tests.
set -uo pipefail
. experiments/device_env.sh
record_device; alexnet_model
SECONDS=0
timeout 200 $bin/test_gpu --gtest_brief=1 > test_gpu.log 2>&1
echo "test_gpu exit $? ($SECONDS s)" | tee $OUT/summary.md; grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests from" test_gpu.log | tee -a $OUT/summary.md | head -5
grep -E "FAILED|Failure" -A4 test_gpu.log | head -30 | tee -a $OUT/summary.md
mkdir -p ab vgg zoo/models
$bin/batchscope-weights synthesize --model vgg16 --seed 1 --out zoo/models/vgg16 > /dev/null 2>&1 || echo "synthesize vgg16 FAILED"
COMMON="--backend cuda --reps 20 --warmup 3 --host-memory pinned --check-images 1 --check-backend cpu"
sweeps() {
  local r=$1 w=$2 p
  for p in fp16 bf16 fp32; do bs_of $w sweep --model data/models/alexnet $COMMON --batches 1,2,4,8,16,256 --precision $p --out ab/$w-$p-r$r.csv > ab/$w-$p-r$r.log 2>&1 || echo "$w $p exit $?"; done
  for p in fp16 fp32; do bs_of $w sweep --model data/models/alexnet $COMMON --batches 1 --precision $p --weights int8 --out ab/$w-int8$p-r$r.csv > ab/$w-int8$p-r$r.log 2>&1 || echo "$w int8 $p exit $?"; done
  for p in fp16 fp32; do bs_of $w sweep --model zoo/models/vgg16 $COMMON --reps 10 --batches 1,64 --precision $p --out vgg/$w-$p-r$r.csv > vgg/$w-$p-r$r.log 2>&1 || echo "$w vgg $p exit $?"; done
  echo "round $r $w ($SECONDS s)"
}
ROUNDS=2 ab_rounds sweeps
{ echo; echo "## AlexNet, base (main) against new"; python3 experiments/ab_compare.py ab
  for l in norm1 norm2 pool5; do python3 experiments/ab_compare.py ab $l | awk '/base ms, '$l' /{p=1} p' | tail -n +3 | grep -v missing | sed "s/^/$l /"; done
  echo; echo "## VGG-16 (synthetic), base against new"; python3 experiments/ab_compare.py vgg
} >> $OUT/summary.md 2>&1
F='*Pool*:*pool*:*Lrn*:*lrn*'
timeout 120 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 $bin/test_gpu --gtest_brief=1 --gtest_filter="$F" > memcheck.log 2>&1
echo "memcheck exit $? ($SECONDS s)" | tee -a $OUT/summary.md; grep -E "ERROR SUMMARY|PASSED|FAILED" memcheck.log | tee -a $OUT/summary.md | head -3
timeout 90 /usr/local/cuda/bin/compute-sanitizer --tool racecheck --print-limit 5 $bin/test_gpu --gtest_brief=1 --gtest_filter="$F" > racecheck.log 2>&1
echo "racecheck exit $? ($SECONDS s)" | tee -a $OUT/summary.md; grep -E "RACECHECK SUMMARY|PASSED|FAILED" racecheck.log | tee -a $OUT/summary.md | head -3
tar czf $OUT/raw.tgz ab vgg *.log 2>/dev/null
head -45 $OUT/summary.md
