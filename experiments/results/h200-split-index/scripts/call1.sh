# Call 1 (seventeenth session): the split walks by constants (prepared-split-index) against main 336b64d (base): AlexNet FP32 A/B at 1-128 images, 3 rounds; the probe's launch shapes; the whole test_gpu; memcheck and racecheck over the split tests; then ncu on the batch-1 convolutions (fp16 v48, FP32 v49). Carry .device/pack.tar.xz (BASE_PACK of 336b64d), .device/COMMIT, .probe.
set -uo pipefail
. experiments/device_env.sh
record_device; alexnet_model
cat .device/base/COMMIT >> $OUT/device.txt 2>/dev/null
SECONDS=0
mkdir -p ab
sweeps() {
  local r=$1 w=$2 p
  for p in fp32; do
    bs_of $w sweep --model data/models/alexnet --backend cuda --precision $p --batches 1,2,4,8,16,32,128 --reps 20 \
      --warmup 3 --host-memory pinned --check-images 1 --check-backend cpu --out ab/$w-$p-r$r.csv > ab/$w-$p-r$r.log 2>&1 || echo "$p $w r$r exit $?"
  done
  echo "round $r $w ($SECONDS s)"
}
ROUNDS=3 ab_rounds sweeps
python3 experiments/ab_compare.py ab conv1,conv2,conv3,conv4,conv5 > $OUT/ab.md; cat $OUT/ab.md
tar czf $OUT/ab.tgz ab/*.csv
.probe/f16_split_rate --variants=1,2,4,8,16,32 > $OUT/variants.md 2>&1; echo "probe exit $? ($SECONDS s)"; grep -E "conv|EQUAL|DIFFER" $OUT/variants.md
timeout 200 $bin/test_gpu --gtest_brief=1 > $OUT/test_gpu.log 2>&1
echo "test_gpu exit $? ($SECONDS s)"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests from" $OUT/test_gpu.log | head -5; grep -E "FAILED|Failure" -A3 $OUT/test_gpu.log | head -30
timeout 130 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 $bin/test_gpu --gtest_brief=1 --gtest_filter='GpuF16Scales.*' > $OUT/memcheck.log 2>&1
echo "memcheck exit $? ($SECONDS s)"; grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/memcheck.log | head -3
timeout 100 /usr/local/cuda/bin/compute-sanitizer --tool racecheck --print-limit 5 $bin/test_gpu --gtest_brief=1 --gtest_filter='GpuF16Scales.FusedAndTwoPass*:GpuF16Scales.ThreeFp16*' > $OUT/racecheck.log 2>&1
echo "racecheck exit $? ($SECONDS s)"; grep -E "RACECHECK SUMMARY|PASSED|FAILED" $OUT/racecheck.log | head -3
# ncu on the batch-1 convolutions: the first five engine kernels of a cold sweep pass (conv1-conv5), raw metrics.
for p in fp16 fp32; do
  timeout 120 /usr/local/cuda/bin/ncu --clock-control none --set full --page raw --csv --kernel-name regex:engine_kernel --launch-count 5 \
    $bin/batchscope sweep --model data/models/alexnet --backend cuda --precision $p --batches 1 --reps 1 --warmup 0 --out ncu-$p.csv > $OUT/ncu-b1-$p.csv 2> ncu-$p.err
  echo "ncu $p exit $? ($SECONDS s)"; tail -2 ncu-$p.err
done
cd $OUT && tar czf logs.tgz *.log 2>/dev/null && rm -f *.log
