# Call 4 (seventeenth session): conv v64 / v65 (v49 / v50's tiles on 8 warps) forced against v49 / v50 forced, the same
# binaries (b is base = the 4-warp version, new = the 8-warp one): AlexNet FP32 and tf32 at 1, 2, 4 and 8 images, 3 rounds
# alternating; the op-table tests of v64 / v65 with memcheck and racecheck; ncu on v64's batch-1 convolutions.
# Carry .device/pack.tar.xz, .device/COMMIT.
set -uo pipefail
. experiments/device_env.sh
record_device; alexnet_model
SECONDS=0
mkdir -p ab
one() {  # round, who
  local r=$1 w=$2 p v
  for p in fp32 tf32; do
    case $p-$w in fp32-base) v=49 ;; fp32-new) v=64 ;; tf32-base) v=50 ;; tf32-new) v=65 ;; esac
    bs_of new sweep --model data/models/alexnet --backend cuda --precision $p --conv-variant $v --batches 1,2,4,8 --reps 20 \
      --warmup 3 --host-memory pinned --check-images 1 --check-backend cpu --out ab/$w-$p-r$r.csv > ab/$w-$p-r$r.log 2>&1 || echo "$p $w r$r exit $?"
  done
  echo "round $r $w ($SECONDS s)"
}
for r in 1 2 3; do if [ $((r % 2)) = 1 ]; then one $r base; one $r new; else one $r new; one $r base; fi; done
python3 experiments/ab_compare.py ab conv1,conv2,conv3,conv4,conv5 > $OUT/ab.md; cat $OUT/ab.md
for l in conv1 conv2 conv3 conv4 conv5; do python3 experiments/ab_compare.py ab $l | sed -n '/^| config | batch | base ms, conv/,$p' | tail -n +3 | sed "s/^/$l /"; done > $OUT/ab-layers.md
tar czf $OUT/ab.tgz ab/*.csv
F='*cuda_conv64:*cuda_conv65'
timeout 100 $bin/test_gpu --gtest_brief=1 --gtest_filter="$F:GpuHeuristic.*" > $OUT/test_gpu.log 2>&1
echo "test_gpu exit $? ($SECONDS s)"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests from" $OUT/test_gpu.log | head -5; grep -E "FAILED|Failure" -A3 $OUT/test_gpu.log | head -20
timeout 120 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 $bin/test_gpu --gtest_brief=1 --gtest_filter="$F" > $OUT/memcheck.log 2>&1
echo "memcheck exit $? ($SECONDS s)"; grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/memcheck.log | head -3
timeout 120 /usr/local/cuda/bin/compute-sanitizer --tool racecheck --print-limit 5 $bin/test_gpu --gtest_brief=1 --gtest_filter="$F" > $OUT/racecheck.log 2>&1
echo "racecheck exit $? ($SECONDS s)"; grep -E "RACECHECK SUMMARY|PASSED|FAILED" $OUT/racecheck.log | head -3
timeout 60 /usr/local/cuda/bin/ncu --clock-control none --set full --page raw --csv --kernel-name regex:engine_kernel --launch-count 5 \
  $bin/batchscope sweep --model data/models/alexnet --backend cuda --precision fp32 --conv-variant 64 --batches 1 --reps 1 --warmup 0 --no-profile --check-images 0 --out ncu.csv > $OUT/ncu-b1-fp32-v64.csv 2> ncu.err
echo "ncu exit $? ($SECONDS s)"
cd $OUT && tar czf logs.tgz *.log 2>/dev/null && rm -f *.log
