# Call 4: fc v16 on the TMA versions. Pack: base = a5bc1b1 (the landing binaries of call 3), new = this commit. 1) fc
# v16's op cases (the two new TMA ones), auto's fp16 / bf16 fc cases, the TMA tests; 2) AlexNet fp16 / bf16 at 128 and
# 1,024 images, base against new, 2 rounds; 3) memcheck over fc v16's op cases.
set -uo pipefail
. experiments/device_env.sh
record_device; python3 experiments/results/h200-pdl-probe/scripts/gen_weights.py data/models/alexnet
SECONDS=0
T=$bin/test_gpu
F='*cuda_fc16_*:*fc*_cuda_fp16:*fc*_cuda_bf16:*WgmmaTma*'
timeout 200 $T --gtest_brief=1 --gtest_filter="$F" > $OUT/tests.log 2>&1; echo "tests exit $? ($SECONDS s): $(grep -E '^\[  PASSED|^\[  FAILED|tests ran' $OUT/tests.log | tr '\n' ' ')" > $OUT/summary.md
grep -E "FAILED|Failure" $OUT/tests.log | head -20 >> $OUT/summary.md
mkdir -p ab
COMMON="--model data/models/alexnet --backend cuda --reps 20 --warmup 3 --host-memory pinned --check-images 1 --check-backend cpu"
point() {
  local r=$1 w=$2 p
  for p in fp16 bf16; do bs_of $w sweep $COMMON --batches 128,1024 --precision $p --out ab/$w-$p-r$r.csv > ab/$w-$p-r$r.log 2>&1 || echo "$w $p exit $?" >> $OUT/summary.md; done
  echo "round $r $w ($SECONDS s)"
}
ROUNDS=2 ab_rounds point
{ echo "## a5bc1b1 (base) -> fc v16 on the TMA versions (new), kernels"; python3 experiments/ab_compare.py ab | grep -v missing
  for L in fc6 fc7 fc8; do echo; echo "### $L"; python3 experiments/ab_compare.py ab $L | tail -n 4; done
} >> $OUT/summary.md 2>&1
timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 $T --gtest_brief=1 --gtest_filter='*fc_1024__200_n192*cuda_fc16*:*fc_512__1024_n2200*cuda_fc16*' > memcheck.log 2>&1; echo "memcheck exit $?: $(grep -E 'ERROR SUMMARY|PASSED|FAILED' memcheck.log | tr '\n' ' ')" >> $OUT/summary.md
echo "total $SECONDS s" >> $OUT/summary.md
tar cJf $OUT/raw.tar.xz ab memcheck.log 2>/dev/null
cat $OUT/summary.md
