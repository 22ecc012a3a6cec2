# Call 3: the landing binaries (new) against main d4359cd (base), and a probe. 1) the whole test_gpu (new); 2) AlexNet
# fp16 / bf16 kernels, 2 rounds alternating; 3) probe (exp/: new + probe-s2d-ct.patch): conv1's space-to-depth tensor
# with 4 channels a tap block (64 a pixel, K = 576: one 64-channel TMA box a stage) where main has 3 (48, K = 432), its
# inner version auto's (v68), v67 or v65; 4) memcheck over the TMA and s2d tests (new).
set -uo pipefail
. experiments/device_env.sh
record_device; python3 experiments/results/h200-pdl-probe/scripts/gen_weights.py data/models/alexnet
SECONDS=0
T=$bin/test_gpu
timeout 330 $T --gtest_brief=1 > test_gpu.log 2>&1; echo "test_gpu exit $? ($SECONDS s): $(grep -E '^\[  (PASSED|FAILED)|tests? ran' test_gpu.log | tr '\n' ' ')" > $OUT/summary.md
grep -A3 'FAILED' test_gpu.log | head -20 >> $OUT/summary.md
mkdir -p ab
COMMON="--model data/models/alexnet --backend cuda --reps 20 --warmup 3 --host-memory pinned --check-images 1 --check-backend cpu"
point() {
  local r=$1 w=$2 p
  for p in fp16 bf16; do bs_of $w sweep $COMMON --batches 16,128,1024 --precision $p --out ab/$w-$p-r$r.csv > ab/$w-$p-r$r.log 2>&1 || echo "$w $p exit $?" >> $OUT/summary.md; done
  echo "round $r $w ($SECONDS s)"
}
ROUNDS=2 ab_rounds point
{ echo "## main d4359cd (base) -> landing (new), kernels"; python3 experiments/ab_compare.py ab | grep -v missing
  for L in conv1 conv2 conv3 conv4 conv5; do echo; echo "### $L"; python3 experiments/ab_compare.py ab $L | tail -n 6; done
} >> $OUT/summary.md 2>&1
mkdir -p pr
cp ab/new-fp16-r1.csv pr/base-fp16-r1.csv
for cfg in "4 auto" "4 67" "4 65"; do
  set -- $cfg
  inner=""; [ "$2" != auto ] && inner="BS_S2D_INNER=$2"
  env BS_S2D_CT=$1 $inner LD_LIBRARY_PATH=$PWD/.device/lib:$LD_LIBRARY_PATH .device/exp/batchscope sweep $COMMON --batches 16,128,1024 --precision fp16 --out pr/new-fp16-r1.csv > pr/ct$1-$2.log 2>&1 || echo "probe $cfg exit $?" >> $OUT/summary.md
  { echo; echo "### probe: conv1 with BS_S2D_CT=$1, inner $2 (base: the landing binary, round 1)"; python3 experiments/ab_compare.py pr conv1 | tail -n 4; python3 experiments/ab_compare.py pr | tail -n 3; } >> $OUT/summary.md 2>&1
done
F2='*WgmmaTma*:GpuS2d.*'
timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 $T --gtest_brief=1 --gtest_filter="$F2" > memcheck.log 2>&1; echo "memcheck exit $?: $(grep -E 'ERROR SUMMARY|PASSED|FAILED' memcheck.log | tr '\n' ' ')" >> $OUT/summary.md
echo "total $SECONDS s" >> $OUT/summary.md
tar cJf $OUT/raw.tar.xz ab pr test_gpu.log memcheck.log 2>/dev/null
cat $OUT/summary.md
