# Call 3. Binaries: call 2's (base = main 1b2c2a6, new = fe6065b), and the same two commits built with
# -DBATCHSCOPE_TIMELINE=ON (in the same pack, test_gpu left out: tl-base/, tl-new/). (a) end to end at 1 image, fp16 and FP32,
# --cuda-graph --copies kernel, 5 rounds alternating (call 2's 2 rounds spread by 2-3 %); (b) the per-block timeline of
# both at 1 and 2 images, fp16 and FP32: does the cluster reduction's stores step shrink as PREDICTION-call1.md said?
set -uo pipefail
. experiments/device_env.sh
record_device; alexnet_model
cat .device/base/COMMIT >> $OUT/device.txt 2>/dev/null
cat .device/tl-base/COMMIT .device/tl-new/COMMIT >> $OUT/device.txt
SECONDS=0
mkdir -p e2e tl
E2E="--model data/models/alexnet --backend cuda --reps 50 --warmup 5 --host-memory pinned --check-images 1 --check-backend cpu --batches 1 --cuda-graph --copies kernel"
e2e() {
  local r=$1 w=$2 p
  for p in fp16 fp32; do bs_of $w sweep $E2E --precision $p --out e2e/$w-$p-r$r.csv > e2e/$w-$p-r$r.log 2>&1 || echo "$w $p exit $?"; done
  echo "e2e round $r $w ($SECONDS s)"
}
ROUNDS=5 ab_rounds e2e
{ echo "## end to end at 1 image, --cuda-graph --copies kernel, 5 rounds"; python3 experiments/results/h200-timeline-epilogue/scripts/e2e_compare.py e2e base,new; } > $OUT/summary.md 2>&1
tlrun() {  # tlrun WHO PRECISION
  BS_TIMELINE_OUT=$PWD/tl/$1-$2.csv LD_LIBRARY_PATH=$PWD/.device/lib:$LD_LIBRARY_PATH .device/tl-$1/batchscope sweep \
    --model data/models/alexnet --backend cuda --precision $2 --batches 1,2 --reps 10 --warmup 2 --profiled-passes timed \
    --host-memory pinned --check-images 1 --check-backend cpu --out tl/alexnet-$1-$2.csv > tl/$1-$2.log 2>&1 || echo "tl $1 $2 exit $?"
  { echo; echo "## timeline $1 $2"; python3 experiments/timeline_table.py tl/$1-$2.csv; } >> $OUT/summary.md 2>&1
}
for p in fp16 fp32; do tlrun base $p; tlrun new $p; done
echo "timeline done ($SECONDS s)"
tar czf $OUT/raw.tgz e2e tl 2>/dev/null
cat $OUT/summary.md
