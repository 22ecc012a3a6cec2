# Call 5 (call 4's binaries: base = main 58d8ead (94fe471's pack), new = a38cd97): end to end at 1 image with
# --cuda-graph --copies kernel, fp16 only, 3 rounds alternating (the device time left allowed no more).
set -uo pipefail
. experiments/device_env.sh
S=experiments/results/h200-timeline-epilogue/scripts  # its e2e_compare.py
record_device; alexnet_model
cat .device/base/COMMIT >> $OUT/device.txt 2>/dev/null
SECONDS=0
mkdir -p e2e
COMMON="--model data/models/alexnet --backend cuda --reps 50 --warmup 5 --host-memory pinned --check-images 1 --check-backend cpu"
e2e() {
  local r=$1 w=$2
  bs_of $w sweep $COMMON --batches 1 --precision fp16 --cuda-graph --copies kernel --out e2e/$w-fp16-r$r.csv > e2e/$w-fp16-r$r.log 2>&1 || echo "$w exit $?"
  echo "round $r $w ($SECONDS s)"
}
ROUNDS=3 ab_rounds e2e
{ echo "## end to end at 1 image, --cuda-graph --copies kernel, 3 rounds"; python3 $S/e2e_compare.py e2e base,new; } > $OUT/summary.md 2>&1
tar czf $OUT/raw.tgz e2e 2>/dev/null
cat $OUT/summary.md
