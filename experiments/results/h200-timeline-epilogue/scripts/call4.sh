# Call 4. Binaries: base = main f1c677f; mid = s18 d437ebf (call 3's new: store4 in the direct-engine cluster
# reduction, v48's set-up in 32 bits); new = s18 94fe471 (also: the cluster reduction's loads all before its sums, and
# store4 for the wgmma cluster versions).
# (a) kernels, base / mid / new, fp16 / bf16 / FP32 at 1, 2, 4, 8, 16 images, INT8 weights (fp16 and FP32) at 1, 3 rounds;
# (b) end to end with --cuda-graph --copies kernel, base and new, fp16 and FP32 at 1 and 16, 2 rounds;
# (c) the whole test_gpu on new; memcheck over the cluster versions' op-table cases; racecheck over v48's and v61's.
set -uo pipefail
. experiments/device_env.sh
S=experiments/results/h200-timeline-epilogue/scripts
record_device; alexnet_model
cat .device/base/COMMIT .device/mid/COMMIT >> $OUT/device.txt 2>/dev/null
SECONDS=0
mkdir -p ab abm e2e
COMMON="--model data/models/alexnet --backend cuda --reps 20 --warmup 3 --host-memory pinned --check-images 1 --check-backend cpu"
mid() { LD_LIBRARY_PATH=$PWD/.device/mid/lib:$LD_LIBRARY_PATH .device/mid/batchscope "$@"; }
one() {  # one WHO DIR NAME ARGS...
  local w=$1 d=$2 n=$3; shift 3
  if [ $w = mid ]; then mid sweep $COMMON "$@" --out $d/$n.csv > $d/$n.log 2>&1 || echo "$n exit $?"
  else bs_of $w sweep $COMMON "$@" --out $d/$n.csv > $d/$n.log 2>&1 || echo "$n exit $?"; fi
}
sweeps() {
  local r=$1 w=$2 p d=ab n=$2
  for who in $w $([ $w = new ] && echo mid); do
    d=ab; n=$who; [ $who = mid ] && { d=abm; n=base; }
    for p in fp16 bf16 fp32; do one $who $d $n-$p-r$r --batches 1,2,4,8,16 --precision $p; done
    one $who $d $n-int8fp16-r$r --batches 1 --precision fp16 --weights int8
    one $who $d $n-int8fp32-r$r --batches 1 --precision fp32 --weights int8
  done
  echo "round $r $w ($SECONDS s)"
}
ROUNDS=3 ab_rounds sweeps
for f in ab/new-*; do ln -s ../$f abm/$(basename $f); done
{ echo "## base (main) against new"; python3 experiments/ab_compare.py ab conv1,conv2,conv3,conv4,conv5
  for l in conv1 conv2 conv3 conv4 conv5; do python3 experiments/ab_compare.py ab $l | sed -n '/^| config | batch | base ms, conv/,$p' | tail -n +3 | sed "s/^/$l /"; done
  echo; echo "## mid (d437ebf) against new"; python3 experiments/ab_compare.py abm conv1,conv2,conv3,conv4,conv5
} > $OUT/summary.md 2>&1
for r in 1 2; do
  for p in fp16 fp32; do
    for w in base new; do one $w e2e $w-$p-r$r --batches 1,16 --precision $p --cuda-graph --copies kernel; done
  done
  echo "e2e round $r ($SECONDS s)"
done
{ echo; echo "## end to end, --cuda-graph --copies kernel"; python3 $S/e2e_compare.py e2e base,new; } >> $OUT/summary.md 2>&1
timeout 200 $bin/test_gpu --gtest_brief=1 > test_gpu.log 2>&1
echo "test_gpu exit $? ($SECONDS s)" | tee -a $OUT/summary.md; grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests from" test_gpu.log | tee -a $OUT/summary.md | head -5
grep -E "FAILED|Failure" -A3 test_gpu.log | head -30
F='*cuda_conv48*:*cuda_conv49*:*cuda_conv64*:*cuda_conv60*:*cuda_conv61*:*cuda_conv62*:*cuda_conv63*'
timeout 110 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 $bin/test_gpu --gtest_brief=1 --gtest_filter="$F" > memcheck.log 2>&1
echo "memcheck exit $? ($SECONDS s)" | tee -a $OUT/summary.md; grep -E "ERROR SUMMARY|PASSED|FAILED" memcheck.log | tee -a $OUT/summary.md | head -3
timeout 90 /usr/local/cuda/bin/compute-sanitizer --tool racecheck --print-limit 5 $bin/test_gpu --gtest_brief=1 --gtest_filter='*cuda_conv48*:*cuda_conv61*' > racecheck.log 2>&1
echo "racecheck exit $? ($SECONDS s)" | tee -a $OUT/summary.md; grep -E "RACECHECK SUMMARY|PASSED|FAILED" racecheck.log | tee -a $OUT/summary.md | head -3
tar czf $OUT/raw.tgz ab abm e2e *.log 2>/dev/null
head -60 $OUT/summary.md; grep -A8 "mid (d437ebf)" $OUT/summary.md | head -30; grep -A8 "## end to end" $OUT/summary.md
