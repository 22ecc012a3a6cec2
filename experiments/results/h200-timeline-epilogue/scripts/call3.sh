# Call 3. Binaries: base = main f1c677f; new = s18 d437ebf (the cluster reduction stores a quad at once, v48's set-up
# divides in 32 bits; no prefetch, no PDL); pdl = new with the PDL probe (0c12e15 cherry-picked; BS_PDL=1 turns it on);
# tl = new built with -DBS_TIMELINE.
# (a) kernels, base against new, fp16 / bf16 / FP32 at 1, 2, 4, 8, 16 images and INT8 weights (fp16) at 1, 3 rounds alternating;
# (b) end to end with --cuda-graph --copies kernel: base, new, pdl (BS_PDL=1), fp16 and FP32 at 1, 2, 4, 16, 3 rounds;
# (c) the timeline of tl at 1, 4, 16 images in fp16 and FP32;
# (d) the whole test_gpu on new; memcheck and racecheck over v48 / v49 / v64 cases; pdl's engine tests with BS_PDL=1.
set -uo pipefail
. experiments/device_env.sh
S=experiments/results/h200-timeline-epilogue/scripts
record_device; alexnet_model
cat .device/base/COMMIT .device/pdl/COMMIT .device/tl/COMMIT >> $OUT/device.txt 2>/dev/null
SECONDS=0
mkdir -p ab e2e tl
COMMON="--model data/models/alexnet --backend cuda --reps 20 --warmup 3 --host-memory pinned --check-images 1 --check-backend cpu"
sweeps() {
  local r=$1 w=$2 p
  for p in fp16 bf16 fp32; do
    bs_of $w sweep $COMMON --batches 1,2,4,8,16 --precision $p --out ab/$w-$p-r$r.csv > ab/$w-$p-r$r.log 2>&1 || echo "$w $p r$r exit $?"
  done
  bs_of $w sweep $COMMON --batches 1 --precision fp16 --weights int8 --out ab/$w-int8fp16-r$r.csv > ab/$w-int8-r$r.log 2>&1 || echo "$w int8 r$r exit $?"
  echo "round $r $w ($SECONDS s)"
}
ROUNDS=3 ab_rounds sweeps
{ python3 experiments/ab_compare.py ab conv1,conv2,conv3,conv4,conv5
  for l in conv1 conv2 conv3 conv4 conv5; do python3 experiments/ab_compare.py ab $l | sed -n '/^| config | batch | base ms, conv/,$p' | tail -n +3 | sed "s/^/$l /"; done
} > $OUT/summary.md 2>&1
pdl() { BS_PDL=1 LD_LIBRARY_PATH=$PWD/.device/pdl/lib:$LD_LIBRARY_PATH .device/pdl/batchscope "$@"; }
e2e() {
  local r=$1 p
  for p in fp16 fp32; do
    bs_of base sweep $COMMON --batches 1,2,4,16 --precision $p --cuda-graph --copies kernel --out e2e/base-$p-r$r.csv > e2e/base-$p-r$r.log 2>&1 || echo "e2e base exit $?"
    bs_of new sweep $COMMON --batches 1,2,4,16 --precision $p --cuda-graph --copies kernel --out e2e/new-$p-r$r.csv > e2e/new-$p-r$r.log 2>&1 || echo "e2e new exit $?"
    pdl sweep $COMMON --batches 1,2,4,16 --precision $p --cuda-graph --copies kernel --out e2e/pdl-$p-r$r.csv > e2e/pdl-$p-r$r.log 2>&1 || echo "e2e pdl exit $?"
  done
  echo "e2e round $r ($SECONDS s)"
}
for r in 1 2 3; do e2e $r; done
{ echo; echo "## end to end, --cuda-graph --copies kernel"; python3 $S/e2e_compare.py e2e base,new,pdl; } >> $OUT/summary.md 2>&1
tlrun() {  # tlrun NAME PRECISION BATCHES
  BS_TIMELINE_OUT=$PWD/tl/$1.csv LD_LIBRARY_PATH=$PWD/.device/tl/lib:$LD_LIBRARY_PATH .device/tl/batchscope sweep \
    --model data/models/alexnet --backend cuda --precision $2 --batches $3 --reps 10 --warmup 2 --profiled-passes timed \
    --host-memory pinned --check-images 1 --check-backend cpu --out tl/alexnet-$1.csv > tl/$1.log 2>&1 || echo "tl $1 exit $?"
  { echo; echo "## timeline $1"; python3 experiments/timeline_table.py tl/$1.csv; } >> $OUT/summary.md 2>&1
}
tlrun fp16 fp16 1,4,16; tlrun fp32 fp32 1,4,16
echo "timeline done ($SECONDS s)"
timeout 200 $bin/test_gpu --gtest_brief=1 > test_gpu.log 2>&1
echo "test_gpu exit $? ($SECONDS s)" | tee -a $OUT/summary.md; grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests from" test_gpu.log | tee -a $OUT/summary.md | head -5
grep -E "FAILED|Failure" -A3 test_gpu.log | head -30
F='*cuda_conv48*:*cuda_conv49*:*cuda_conv64*'
timeout 80 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 $bin/test_gpu --gtest_brief=1 --gtest_filter="$F" > memcheck.log 2>&1
echo "memcheck exit $? ($SECONDS s)" | tee -a $OUT/summary.md; grep -E "ERROR SUMMARY|PASSED|FAILED" memcheck.log | tee -a $OUT/summary.md | head -3
timeout 80 /usr/local/cuda/bin/compute-sanitizer --tool racecheck --print-limit 5 $bin/test_gpu --gtest_brief=1 --gtest_filter='*cuda_conv48*' > racecheck.log 2>&1
echo "racecheck exit $? ($SECONDS s)" | tee -a $OUT/summary.md; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" racecheck.log | tee -a $OUT/summary.md | head -3
tar czf $OUT/raw.tgz ab e2e tl *.log 2>/dev/null
cat $OUT/summary.md | head -150
