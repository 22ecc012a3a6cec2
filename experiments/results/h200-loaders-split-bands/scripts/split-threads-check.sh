# Call 4: the first form of band_for (the most bands in blocks of 1,024 threads: slower, replaced): the probe's launch shapes, test_gpu, sanitizers (racecheck over all GpuF16Scales timed out at 150 s), A/B FP32 and TF32 at 1-128 images.
set -uo pipefail
. experiments/device_env.sh
record_device; alexnet_model
cat .device/base/COMMIT >> $OUT/device.txt 2>/dev/null
SECONDS=0
.probe/f16_split_rate --variants=1,2,4,8,16,32 > $OUT/variants.md 2>&1; echo "probe exit $? ($SECONDS s)"; cat $OUT/variants.md
timeout 200 $bin/test_gpu --gtest_brief=1 > $OUT/test_gpu.log 2>&1
echo "test_gpu exit $? ($SECONDS s)"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests from" $OUT/test_gpu.log | head -5; grep -E "FAILED|Failure" -A3 $OUT/test_gpu.log | head -30
for tool in memcheck racecheck; do
  timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool $tool --print-limit 5 $bin/test_gpu --gtest_brief=1 --gtest_filter='GpuF16Scales.*' > $OUT/$tool.log 2>&1
  echo "$tool exit $? ($SECONDS s)"; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED" $OUT/$tool.log | head -3
done
mkdir -p ab
sweeps() {
  local r=$1 w=$2 p
  for p in fp32 tf32; do
    bs_of $w sweep --model data/models/alexnet --backend cuda --precision $p --batches 1,2,4,8,16,32,128 --reps 20 \
      --warmup 3 --host-memory pinned --check-images 1 --check-backend cpu --out ab/$w-$p-r$r.csv > ab/$w-$p-r$r.log 2>&1 || echo "$p $w r$r exit $?"
  done
  echo "round $r $w ($SECONDS s)"
}
ab_rounds sweeps
python3 experiments/ab_compare.py ab conv1,conv2,conv3,conv4,conv5 > $OUT/ab.md; cat $OUT/ab.md
tar czf $OUT/ab.tgz ab/*.csv
cd $OUT && tar czf logs.tgz *.log 2>/dev/null && rm -f *.log
