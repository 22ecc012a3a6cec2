# The five calls as they ran, one function each (run: bash calls.sh N from the repository root on the GPU machine; the
# bodies are the call scripts unchanged, folded into one file in the twenty-seventh session).

call1() {
# Call 1: (a) the prepared v64 rule (experiments/results/prepared-v64-rule/: auto with the rule = new, main = base),
# AlexNet FP32 at 1, 2, 4 and 16 images, 3 rounds alternating; (b) the GEMM engine's per-block timeline (a -DBS_TIMELINE
# build of main in .device/tl/: kernels/cuda/engine/timeline.hpp) at 1-16 images, fp16 and FP32; (c) the whole test_gpu
# on the rule's binaries, memcheck over v64's op-table cases.
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
}

call2() {
# Call 2 (binaries: base = main f1c677f, new = s18: the epilogue's bias prefetched into L1, and the PDL probe off unless
# BS_PDL=1; tl = new built with -DBS_TIMELINE and the cluster reduction's step stamps):
# (a) kernels, base against new (PDL off), fp16 / bf16 / FP32 at 1, 2, 4 and 16 images, 3 rounds alternating;
# (b) end to end with --cuda-graph --copies kernel: base, new, new with BS_PDL=1 (pdl), fp16 and FP32 at 1, 2, 4, 16;
# (c) the timeline of tl at 1, 4, 16 images in fp16 and FP32, and at 1 image with BS_PDL=1;
# (d) the whole test_gpu on new; the engine / pipeline tests with BS_PDL=1; memcheck over v48 / v49 cases.
. experiments/device_env.sh
S=experiments/results/h200-timeline-epilogue/scripts
record_device; alexnet_model
cat .device/base/COMMIT .device/tl/COMMIT >> $OUT/device.txt 2>/dev/null
SECONDS=0
mkdir -p ab e2e tl
COMMON="--model data/models/alexnet --backend cuda --batches 1,2,4,16 --reps 20 --warmup 3 --host-memory pinned --check-images 1 --check-backend cpu"
sweeps() {
  local r=$1 w=$2 p
  for p in fp16 bf16 fp32; do
    bs_of $w sweep $COMMON --precision $p --out ab/$w-$p-r$r.csv > ab/$w-$p-r$r.log 2>&1 || echo "$w $p r$r exit $?"
  done
  echo "round $r $w ($SECONDS s)"
}
ROUNDS=3 ab_rounds sweeps
{ python3 experiments/ab_compare.py ab conv1,conv2,conv3,conv4,conv5
  for l in conv1 conv2 conv3 conv4 conv5; do python3 experiments/ab_compare.py ab $l | sed -n '/^| config | batch | base ms, conv/,$p' | tail -n +3 | sed "s/^/$l /"; done
} > $OUT/summary.md 2>&1
e2e() {
  local r=$1 p
  for p in fp16 fp32; do
    bs_of base sweep $COMMON --precision $p --cuda-graph --copies kernel --out e2e/base-$p-r$r.csv > e2e/base-$p-r$r.log 2>&1 || echo "e2e base exit $?"
    bs_of new sweep $COMMON --precision $p --cuda-graph --copies kernel --out e2e/new-$p-r$r.csv > e2e/new-$p-r$r.log 2>&1 || echo "e2e new exit $?"
    BS_PDL=1 bs_of new sweep $COMMON --precision $p --cuda-graph --copies kernel --out e2e/pdl-$p-r$r.csv > e2e/pdl-$p-r$r.log 2>&1 || echo "e2e pdl exit $?"
    BS_PDL=1 bs_of new sweep $COMMON --precision $p --out e2e/pdleager-$p-r$r.csv > e2e/pdleager-$p-r$r.log 2>&1 || echo "e2e pdleager exit $?"
  done
  echo "e2e round $r ($SECONDS s)"
}
for r in 1 2 3; do e2e $r; done
{ echo; echo "## end to end, --cuda-graph --copies kernel (pdleager: BS_PDL=1 without a graph)"; python3 $S/e2e_compare.py e2e base,new,pdl,pdleager; } >> $OUT/summary.md 2>&1
tlrun() {  # tlrun NAME PRECISION BATCHES [env]
  env ${4:-BS_PDL=0} BS_TIMELINE_OUT=$PWD/tl/$1.csv LD_LIBRARY_PATH=$PWD/.device/tl/lib:$LD_LIBRARY_PATH .device/tl/batchscope sweep \
    --model data/models/alexnet --backend cuda --precision $2 --batches $3 --reps 10 --warmup 2 --profiled-passes timed \
    --host-memory pinned --check-images 1 --check-backend cpu --out tl/alexnet-$1.csv > tl/$1.log 2>&1 || echo "tl $1 exit $?"
  { echo; echo "## timeline $1"; python3 experiments/timeline_table.py tl/$1.csv; } >> $OUT/summary.md 2>&1
}
tlrun fp16 fp16 1,4,16; tlrun fp32 fp32 1,4,16; tlrun fp16pdl fp16 1 BS_PDL=1; tlrun fp32pdl fp32 1 BS_PDL=1
{ echo; python3 experiments/layer_table.py tl conv1,norm1,conv2,norm2,conv3,conv4,conv5,pool5,fc6,fc7,fc8; } >> $OUT/summary.md 2>&1
echo "timeline done ($SECONDS s)"
timeout 200 $bin/test_gpu --gtest_brief=1 > test_gpu.log 2>&1
echo "test_gpu exit $? ($SECONDS s)" | tee -a $OUT/summary.md; grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests from" test_gpu.log | tee -a $OUT/summary.md | head -5
grep -E "FAILED|Failure" -A3 test_gpu.log | head -30
BS_PDL=1 timeout 120 $bin/test_gpu --gtest_brief=1 --gtest_filter='*cuda_conv48*:*cuda_conv49*:*cuda_conv64*:GpuEngine*:GpuPipeline*:GpuGraph*:*Graph*' > test_gpu_pdl.log 2>&1
echo "test_gpu BS_PDL=1 exit $? ($SECONDS s)" | tee -a $OUT/summary.md; grep -E "^\[  (PASSED|FAILED|SKIPPED) " test_gpu_pdl.log | tee -a $OUT/summary.md
grep -E "FAILED|Failure" -A3 test_gpu_pdl.log | head -20
timeout 90 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 $bin/test_gpu --gtest_brief=1 --gtest_filter='*cuda_conv48*:*cuda_conv49' > memcheck.log 2>&1
echo "memcheck exit $? ($SECONDS s)" | tee -a $OUT/summary.md; grep -E "ERROR SUMMARY|PASSED|FAILED" memcheck.log | tee -a $OUT/summary.md | head -3
tar czf $OUT/raw.tgz ab e2e tl *.log 2>/dev/null
cat $OUT/summary.md | head -120
}

call3() {
# Call 3. Binaries: base = main f1c677f; new = s18 d437ebf (the cluster reduction stores a quad at once, v48's set-up
# divides in 32 bits; no prefetch, no PDL); pdl = new with the PDL probe (0c12e15 cherry-picked; BS_PDL=1 turns it on);
# tl = new built with -DBS_TIMELINE.
# (a) kernels, base against new, fp16 / bf16 / FP32 at 1, 2, 4, 8, 16 images and INT8 weights (fp16) at 1, 3 rounds alternating;
# (b) end to end with --cuda-graph --copies kernel: base, new, pdl (BS_PDL=1), fp16 and FP32 at 1, 2, 4, 16, 3 rounds;
# (c) the timeline of tl at 1, 4, 16 images in fp16 and FP32;
# (d) the whole test_gpu on new; memcheck and racecheck over v48 / v49 / v64 cases; pdl's engine tests with BS_PDL=1.
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
}

call4() {
# Call 4. Binaries: base = main f1c677f; mid = s18 d437ebf (call 3's new: store4 in the direct-engine cluster
# reduction, v48's set-up in 32 bits); new = s18 94fe471 (also: the cluster reduction's loads all before its sums, and
# store4 for the wgmma cluster versions).
# (a) kernels, base / mid / new, fp16 / bf16 / FP32 at 1, 2, 4, 8, 16 images, INT8 weights (fp16 and FP32) at 1, 3 rounds;
# (b) end to end with --cuda-graph --copies kernel, base and new, fp16 and FP32 at 1 and 16, 2 rounds;
# (c) the whole test_gpu on new; memcheck over the cluster versions' op-table cases; racecheck over v48's and v61's.
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
}

call5() {
# Call 5 (call 4's binaries: base = main f1c677f, new = s18 94fe471): end to end at 1 image with --cuda-graph
# --copies kernel, fp16 and FP32, 5 rounds alternating (call 4 had 2 rounds, whose spread was +-2 %).
. experiments/device_env.sh
S=experiments/results/h200-timeline-epilogue/scripts
record_device; alexnet_model
cat .device/base/COMMIT >> $OUT/device.txt 2>/dev/null
SECONDS=0
mkdir -p e2e
COMMON="--model data/models/alexnet --backend cuda --reps 50 --warmup 5 --host-memory pinned --check-images 1 --check-backend cpu"
e2e() {
  local r=$1 w=$2 p
  for p in fp16 fp32; do
    bs_of $w sweep $COMMON --batches 1 --precision $p --cuda-graph --copies kernel --out e2e/$w-$p-r$r.csv > e2e/$w-$p-r$r.log 2>&1 || echo "$w $p exit $?"
  done
  echo "round $r $w ($SECONDS s)"
}
ROUNDS=5 ab_rounds e2e
{ echo "## end to end at 1 image, --cuda-graph --copies kernel, 5 rounds"; python3 $S/e2e_compare.py e2e base,new; } > $OUT/summary.md 2>&1
tar czf $OUT/raw.tgz e2e 2>/dev/null
cat $OUT/summary.md
}

set -uo pipefail
"call$1"
