# The prepared changes on the GPU (../README.md: how to build and carry them; base: the binaries before them, in the
# pack's base/): the GPU suite, the sanitizers over the wgmma versions' and split-K op cases, and AlexNet base against new
# in every precision at 1-1,024 images, rounds alternating.
# Switches: TESTS=0, SAN=0, AB=0 skip a part (all three take about 4 + 6 + 4 minutes: two calls); AB_PRECISIONS,
# AB_BATCHES, ROUNDS narrow the A/B; SAN_FILTER the sanitizers' cases (default: 419 engine edge cases).
set -uo pipefail
. experiments/device_env.sh
record_device; alexnet_model
cat .device/base/COMMIT >> $OUT/device.txt 2>/dev/null
SECONDS=0
if [ "${TESTS:-1}" = 1 ]; then
  timeout 260 $bin/test_gpu --gtest_brief=1 > $OUT/test_gpu.log 2>&1
  echo "test_gpu exit $? ($SECONDS s)"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests from" $OUT/test_gpu.log | head -5; grep -E "^\[  FAILED" $OUT/test_gpu.log | head -20
fi
if [ "${SAN:-1}" = 1 ]; then
  # the engine's edge cases (odd sizes, padding, groups, split-K; 7 shapes a version and precision) on every wgmma version
  # (v23-v47, v51-v56, v60-v63) and on the FP32 split-K reduction's (v12-v18), and fc v16's cases; gtest filters know * and ?
  # only, so the versions are listed. SAN_FILTER replaces it.
  F=${SAN_FILTER:-$(for v in $(seq 12 18) $(seq 23 47) $(seq 51 56) $(seq 60 63); do printf '*engine_conv*cuda_conv%s_*:*engine_conv*cuda_conv%s:' $v $v; done)'*cuda_fc16*'}
  for tool in memcheck racecheck; do
    timeout 200 /usr/local/cuda/bin/compute-sanitizer --tool $tool --print-limit 5 $bin/test_gpu --gtest_brief=1 --gtest_filter="$F" > $OUT/$tool.log 2>&1
    echo "$tool exit $? ($SECONDS s)"; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED" $OUT/$tool.log | head -3
  done
fi
if [ "${AB:-1}" = 1 ]; then
  mkdir -p ab
  # one round of one binary (device_env.sh's ab_rounds alternates them, bs_of runs them with their libraries)
  sweeps() {
    local r=$1 w=$2 p
    for p in ${AB_PRECISIONS:-fp16 bf16 fp32 tf32}; do
      bs_of $w sweep --model data/models/alexnet --backend cuda --precision $p --batches ${AB_BATCHES:-1,2,4,8,16,32,128,1024} --reps 20 \
        --warmup 3 --host-memory pinned --check-images 1 --check-backend cpu --out ab/$w-$p-r$r.csv > ab/$w-$p-r$r.log 2>&1 || echo "$p $w r$r exit $?"
    done
    echo "round $r $w ($SECONDS s)"
  }
  ab_rounds sweeps
  python3 experiments/ab_compare.py ab conv1,conv2,conv3,conv4,conv5 > $OUT/ab.md; cat $OUT/ab.md
  tar czf $OUT/ab.tgz ab/*.csv
fi
cd $OUT && tar czf logs.tgz *.log 2>/dev/null && rm -f *.log
