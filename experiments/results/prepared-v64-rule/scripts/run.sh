# Runs the prepared v64 rule (patches/0001 on main db9c8e3 or later): auto with the rule (new) against auto without it
# (base: BASE_PACK of main), AlexNet FP32 at 1-4 and 16 images, 3 rounds alternating; the whole test_gpu (the rule's
# GpuHeuristic expectations included); memcheck over v64's op-table cases. About 200 s of commands.
# Build: LINEINFO=0 scripts/pack_device.sh && mv .device/pack.tar.xz /tmp/base.tar.xz (main), then
# git checkout -b try && git am experiments/results/prepared-v64-rule/patches/*.patch &&
# LINEINFO=0 BASE_PACK=/tmp/base.tar.xz scripts/pack_device.sh; carry .device/pack.tar.xz and .device/COMMIT.
set -uo pipefail
. experiments/device_env.sh
record_device; alexnet_model
cat .device/base/COMMIT >> $OUT/device.txt 2>/dev/null
SECONDS=0
mkdir -p ab
sweeps() {
  local r=$1 w=$2
  bs_of $w sweep --model data/models/alexnet --backend cuda --precision fp32 --batches 1,2,4,16 --reps 20 --warmup 3 \
    --host-memory pinned --check-images 1 --check-backend cpu --out ab/$w-fp32-r$r.csv > ab/$w-fp32-r$r.log 2>&1 || echo "$w r$r exit $?"
  echo "round $r $w ($SECONDS s)"
}
ROUNDS=3 ab_rounds sweeps
python3 experiments/ab_compare.py ab conv1,conv2,conv3,conv4,conv5 > $OUT/ab.md; cat $OUT/ab.md
for l in conv1 conv2 conv3 conv4 conv5; do python3 experiments/ab_compare.py ab $l | sed -n '/^| config | batch | base ms, conv/,$p' | tail -n +3 | sed "s/^/$l /"; done > $OUT/ab-layers.md
tar czf $OUT/ab.tgz ab/*.csv
timeout 200 $bin/test_gpu --gtest_brief=1 > $OUT/test_gpu.log 2>&1
echo "test_gpu exit $? ($SECONDS s)"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests from" $OUT/test_gpu.log | head -5; grep -E "FAILED|Failure" -A3 $OUT/test_gpu.log | head -30
timeout 60 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 $bin/test_gpu --gtest_brief=1 --gtest_filter='*cuda_conv64' > $OUT/memcheck.log 2>&1
echo "memcheck exit $? ($SECONDS s)"; grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/memcheck.log | head -3
cd $OUT && tar czf logs.tgz *.log 2>/dev/null && rm -f *.log
