# Call 5 (call 4's binaries: base = main f1c677f, new = s18 94fe471): end to end at 1 image with --cuda-graph
# --copies kernel, fp16 and FP32, 5 rounds alternating (call 4 had 2 rounds, whose spread was +-2 %).
set -uo pipefail
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
