# Call 2: TMA with 64-channel boxes where a group's channels allow (conv3-conv5), auto's TMA twins only there. Pack: base =
# main d4359cd, new = this commit (LINEINFO=0 PACK="batchscope test_gpu" BASE_PACK=...). 1) the TMA and heuristic tests
# and the op cases; 2) AlexNet fp16 / bf16, base against new, 2 rounds; 3) tune over each twin pair, fp16; 4) sanitizers.
set -uo pipefail
. experiments/device_env.sh
record_device; python3 experiments/results/h200-pdl-probe/scripts/gen_weights.py data/models/alexnet
SECONDS=0
T=$bin/test_gpu
F='*cuda_conv66_*:*cuda_conv67_*:*cuda_conv68_*:*cuda_conv69_*:*cuda_conv70_*:*cuda_conv71_*:*cuda_conv38_*:*conv*_cuda_fp16:*conv*_cuda_bf16:*Wgmma*:GpuHeuristic.*:GpuS2d.*'
timeout 240 $T --gtest_brief=1 --gtest_filter="$F" > $OUT/tests.log 2>&1; echo "tests exit $? ($SECONDS s): $(grep -E '^\[  PASSED|^\[  FAILED|tests ran' $OUT/tests.log | tr '\n' ' ')" > $OUT/summary.md
grep -E "FAILED|Failure|error" $OUT/tests.log | head -40 >> $OUT/summary.md
mkdir -p ab
COMMON="--model data/models/alexnet --backend cuda --reps 20 --warmup 3 --host-memory pinned --check-images 1 --check-backend cpu"
point() {
  local r=$1 w=$2 p
  for p in fp16 bf16; do bs_of $w sweep $COMMON --batches 16,128,1024 --precision $p --out ab/$w-$p-r$r.csv > ab/$w-$p-r$r.log 2>&1 || echo "$w $p exit $?" >> $OUT/summary.md; done
  echo "round $r $w ($SECONDS s)"
}
ROUNDS=2 ab_rounds point
{ echo "## main d4359cd (base) -> wide TMA on conv3-conv5 (new), kernels"; python3 experiments/ab_compare.py ab | grep -v missing
  for L in conv1 conv2 conv3 conv4 conv5; do echo; echo "### $L"; python3 experiments/ab_compare.py ab $L | tail -n 6; done
} >> $OUT/summary.md 2>&1
timeout 150 $bin/batchscope tune --model data/models/alexnet --precision fp16 --batches 16,128,1024 --reps 5 --warmup 2 \
  --conv-variants 38,45,66,41,71,42,68,61,69,60,70 --fc-variants 17 --out $OUT/tune-fp16.json > $OUT/tune-fp16.log 2>&1; echo "tune exit $?" >> $OUT/summary.md
F2='*WgmmaTma*:*WgmmaHalfWholeTile*'
timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 $T --gtest_brief=1 --gtest_filter="$F2" > memcheck.log 2>&1; echo "memcheck exit $?: $(grep -E 'ERROR SUMMARY|PASSED|FAILED' memcheck.log | tr '\n' ' ')" >> $OUT/summary.md
timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool racecheck --print-limit 5 $T --gtest_brief=1 --gtest_filter="$F2" > racecheck.log 2>&1; echo "racecheck exit $?: $(grep -E 'RACECHECK SUMMARY|PASSED|FAILED' racecheck.log | tr '\n' ' ')" >> $OUT/summary.md
echo "total $SECONDS s" >> $OUT/summary.md
tar cJf $OUT/raw.tar.xz ab memcheck.log racecheck.log 2>/dev/null
cat $OUT/summary.md
