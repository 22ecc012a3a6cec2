# The prepared split-pass walks on the GPU (../README.md: how to build and carry): AlexNet FP32 base against new at 1-128
# images, 3 rounds alternating; the probe's launch shapes (bit for bit against the two passes); the whole test_gpu; memcheck
# over GpuF16Scales.* and racecheck over its two small cases. About 150 s of commands on a warm H200.
# Carry: .device/pack.tar.xz (LINEINFO=0 BASE_PACK=<main's pack> scripts/pack_device.sh), .device/COMMIT, .probe.
set -uo pipefail
. experiments/device_env.sh
record_device; alexnet_model
cat .device/base/COMMIT >> $OUT/device.txt 2>/dev/null
SECONDS=0
mkdir -p ab
sweeps() {
  bs_of $2 sweep --model data/models/alexnet --backend cuda --precision fp32 --batches 1,2,4,8,16,32,128 --reps 20 --warmup 3 \
    --host-memory pinned --check-images 1 --check-backend cpu --out ab/$2-fp32-r$1.csv > ab/$2-fp32-r$1.log 2>&1 || echo "$2 r$1 exit $?"
  echo "round $1 $2 ($SECONDS s)"
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
cd $OUT && tar czf logs.tgz *.log 2>/dev/null && rm -f *.log
