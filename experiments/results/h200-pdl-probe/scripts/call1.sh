# Call 1 (probe; one binary, main 0f11632 + the probe patch): base = BS_PDL=0 (every kernel launched as on main),
# new = BS_PDL=1 (the 16-bit batch-1 path's kernels launched with programmatic dependent launch: to_half_nhwc, the GEMM
# engine's kernel, the 16-bit LRN + pooling and pooling kernels, fc v14 / v15, softmax and the output conversion; each
# waits with griddepcontrol.wait before its first global access and then releases the next launch).
# (a) AlexNet kernels (the breakdown's kernel time: overlapping kernels counted once) at 1-16 images, fp16 / bf16, INT8
# (fp16) at 1, 3 rounds alternating; (b) end to end at 1 and 16 images with --cuda-graph --copies kernel, 3 rounds.
# After the call: the end-to-end listing reads the sweep CSVs only (not .layers.csv) and their total_ms_median column; as
# run, it read neither, and call1/summary.md's end-to-end table was made from raw.tar.xz by hand.
set -uo pipefail
. experiments/device_env.sh
record_device; python3 experiments/results/h200-pdl-probe/scripts/gen_weights.py data/models/alexnet
SECONDS=0
mkdir -p ab e2e
COMMON="--model data/models/alexnet --backend cuda --reps 20 --warmup 3 --host-memory pinned --check-images 1 --check-backend cpu"
run_who() { local w=$1; shift; if [ "$w" = base ]; then BS_PDL=0 $bin/batchscope "$@"; else BS_PDL=1 $bin/batchscope "$@"; fi; }
sweeps() {
  local r=$1 w=$2 p
  for p in fp16 bf16; do run_who $w sweep $COMMON --batches 1,2,4,8,16 --precision $p --out ab/$w-$p-r$r.csv > ab/$w-$p-r$r.log 2>&1 || echo "$w $p exit $?"; done
  run_who $w sweep $COMMON --batches 1 --precision fp16 --weights int8 --out ab/$w-int8fp16-r$r.csv > ab/$w-int8fp16-r$r.log 2>&1 || echo "$w int8 exit $?"
  run_who $w sweep $COMMON --batches 1,16 --precision fp16 --cuda-graph --copies kernel --out e2e/$w-fp16-r$r.csv > e2e/$w-fp16-r$r.log 2>&1 || echo "$w e2e exit $?"
  echo "round $r $w ($SECONDS s)"
}
for r in 1 2 3; do order="base new"; [ $((r % 2)) = 0 ] && order="new base"; for w in $order; do sweeps $r $w; done; done
{ echo "## BS_PDL=0 (base) against BS_PDL=1 (new), kernels"; python3 experiments/ab_compare.py ab | grep -v missing
  for l in conv1 conv2 fc6 fc8; do echo; echo "### $l"; python3 experiments/ab_compare.py ab $l | awk '/base ms, '$l' /{p=1} p' | grep -v missing; done
  echo; echo "## end to end, --cuda-graph --copies kernel (total_ms column per round)"
  for f in $(ls e2e/*.csv | grep -v layers); do echo "$f: $(python3 - "$f" <<'PY'
import csv,sys
rows=[r for r in csv.DictReader(open(sys.argv[1])) if r.get('run')=='warm']
print('; '.join(f"b{r['batch']} total {r['total_ms_median']} check {r['check']}" for r in rows))
PY
)"; done
} >> $OUT/summary.md 2>&1
tar czf $OUT/raw.tgz ab e2e 2>/dev/null
cat $OUT/summary.md | head -80
