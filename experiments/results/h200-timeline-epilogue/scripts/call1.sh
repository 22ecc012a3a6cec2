# Call 1: (a) the prepared v64 rule (experiments/results/prepared-v64-rule/: auto with the rule = new, main = base),
# AlexNet FP32 at 1, 2, 4 and 16 images, 3 rounds alternating; (b) the GEMM engine's per-block timeline (a -DBS_TIMELINE
# build of main in .device/tl/: kernels/cuda/engine/timeline.hpp) at 1-16 images, fp16 and FP32; (c) the whole test_gpu
# on the rule's binaries, memcheck over v64's op-table cases.
set -uo pipefail
. experiments/device_env.sh
record_device; alexnet_model
cat .device/base/COMMIT .device/tl/COMMIT >> $OUT/device.txt 2>/dev/null
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
mkdir -p tl
for p in fp16 fp32; do
  BS_TIMELINE_OUT=$OUT/tl-$p.csv LD_LIBRARY_PATH=$PWD/.device/tl/lib:$LD_LIBRARY_PATH .device/tl/batchscope sweep --model data/models/alexnet \
    --backend cuda --precision $p --batches 1,4,16 --reps 10 --warmup 2 --profiled-passes timed --host-memory pinned --check-images 1 --check-backend cpu \
    --out tl/alexnet-tl-$p.csv > tl/$p.log 2>&1 || echo "tl $p exit $?"
  python3 experiments/timeline_table.py $OUT/tl-$p.csv > $OUT/tl-$p.md; echo "== timeline $p ($SECONDS s)"; cat $OUT/tl-$p.md
done
python3 experiments/layer_table.py tl conv1,norm1,conv2,norm2,conv3,conv4,conv5,pool5,fc6,fc7,fc8 > $OUT/tl-layers.md 2>&1; cat $OUT/tl-layers.md
tar czf $OUT/tl.tgz tl/*.csv $OUT/tl-*.csv 2>/dev/null && rm -f $OUT/tl-fp16.csv $OUT/tl-fp32.csv
timeout 200 $bin/test_gpu --gtest_brief=1 > $OUT/test_gpu.log 2>&1
echo "test_gpu exit $? ($SECONDS s)"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests from" $OUT/test_gpu.log | head -5; grep -E "FAILED|Failure" -A3 $OUT/test_gpu.log | head -30
timeout 60 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 $bin/test_gpu --gtest_brief=1 --gtest_filter='*cuda_conv64' > $OUT/memcheck.log 2>&1
echo "memcheck exit $? ($SECONDS s)"; grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/memcheck.log | head -3
cd $OUT && tar czf logs.tgz *.log 2>/dev/null && rm -f *.log
