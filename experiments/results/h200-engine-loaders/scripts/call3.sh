# Call 3 (seventeenth session): the GEMM engine's loaders (the im2col gather from a window-origin pointer, load_dense_tile
# walking one pointer) against 4c970d0 (base): AlexNet fp16 / FP32 / tf32 at 1-16 and 128 images, 3 rounds alternating; the
# whole test_gpu; memcheck and racecheck over the engine's op cases; ncu on FP32's batch-1 convolutions.
# Carry .device/pack.tar.xz (BASE_PACK of 4c970d0's tree), .device/COMMIT.
set -uo pipefail
. experiments/device_env.sh
record_device; alexnet_model
cat .device/base/COMMIT >> $OUT/device.txt 2>/dev/null
SECONDS=0
mkdir -p ab
sweeps() {
  local r=$1 w=$2 p
  for p in fp16 fp32 tf32; do
    bs_of $w sweep --model data/models/alexnet --backend cuda --precision $p --batches 1,2,4,8,16,128 --reps 20 \
      --warmup 3 --host-memory pinned --check-images 1 --check-backend cpu --out ab/$w-$p-r$r.csv > ab/$w-$p-r$r.log 2>&1 || echo "$p $w r$r exit $?"
  done
  echo "round $r $w ($SECONDS s)"
}
ROUNDS=3 ab_rounds sweeps
python3 experiments/ab_compare.py ab conv1,conv2,conv3,conv4,conv5 > $OUT/ab.md; cat $OUT/ab.md
tar czf $OUT/ab.tgz ab/*.csv
timeout 200 $bin/test_gpu --gtest_brief=1 > $OUT/test_gpu.log 2>&1
echo "test_gpu exit $? ($SECONDS s)"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests from" $OUT/test_gpu.log | head -5; grep -E "FAILED|Failure" -A3 $OUT/test_gpu.log | head -30
MF='*cuda_conv49:*cuda_conv50:*cuda_conv48_fp16:*cuda_conv13:*cuda_fc6:GpuEngine.AlexNetShapedModelEndToEnd'
timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 $bin/test_gpu --gtest_brief=1 --gtest_filter="$MF" > $OUT/memcheck.log 2>&1
echo "memcheck exit $? ($SECONDS s)"; grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/memcheck.log | head -3
timeout 100 /usr/local/cuda/bin/compute-sanitizer --tool racecheck --print-limit 5 $bin/test_gpu --gtest_brief=1 --gtest_filter='*cuda_conv49:*cuda_conv48_fp16' > $OUT/racecheck.log 2>&1
echo "racecheck exit $? ($SECONDS s)"; grep -E "RACECHECK SUMMARY|PASSED|FAILED" $OUT/racecheck.log | head -3
timeout 60 /usr/local/cuda/bin/ncu --clock-control none --set full --page raw --csv --kernel-name regex:engine_kernel --launch-count 5 \
  $bin/batchscope sweep --model data/models/alexnet --backend cuda --precision fp32 --batches 1 --reps 1 --warmup 0 --no-profile --check-images 0 --out ncu.csv > $OUT/ncu-b1-fp32.csv 2> ncu.err
echo "ncu exit $? ($SECONDS s)"
cd $OUT && tar czf logs.tgz *.log 2>/dev/null && rm -f *.log
