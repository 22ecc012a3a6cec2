# Call 1 (probe; main 656a5f9 as base/, the same commit + the probe patch as new, one binary switched by BS_PDL):
# the 16-bit fully connected stream kernels at 1 image (fc v14 fp16/bf16, fc v15 INT8 weights with fp16 activations)
# launched with programmatic dependent launch, the 16-bit pooling kernel (pool5) releasing them at its top.
# BS_PDL=0: as main (the kernels' extra argument and a wait that is a no-op); 1: wait at the top, no prefetch;
# 2: the block's first turn of weight rows asked of the L2 before the wait; 3: its first two turns.
# (a) kernels at 1 image (the breakdown's kernel time; overlapping kernels counted once) and fc6-fc8, 3 rounds rotating;
# (b) end to end at 1 image with --cuda-graph --copies kernel; (c) memcheck over one sweep point with BS_PDL=2.
set -uo pipefail
. experiments/device_env.sh
record_device; python3 experiments/results/h200-pdl-probe/scripts/gen_weights.py data/models/alexnet
mkdir -p .device/base && tar -C .device/base -xJf .device/base.tar.xz 2>/dev/null || true
SECONDS=0
mkdir -p raw
COMMON="--model data/models/alexnet --backend cuda --reps 30 --warmup 5 --host-memory pinned --check-images 1 --check-backend cpu"
run_who() {  # WHO: main (the base binary) or m0..m3 (BS_PDL of the new one)
  local w=$1; shift
  if [ "$w" = main ]; then bs_of base "$@"; else BS_PDL=${w#m} $bin/batchscope "$@"; fi
}
point() {
  local r=$1 w=$2
  run_who $w sweep $COMMON --batches 1 --precision fp16 --out raw/$w-fp16-r$r.csv > raw/$w-fp16-r$r.log 2>&1 || echo "$w fp16 exit $?"
  run_who $w sweep $COMMON --batches 1 --precision bf16 --out raw/$w-bf16-r$r.csv > raw/$w-bf16-r$r.log 2>&1 || echo "$w bf16 exit $?"
  run_who $w sweep $COMMON --batches 1 --precision fp16 --weights int8 --out raw/$w-int8fp16-r$r.csv > raw/$w-int8fp16-r$r.log 2>&1 || echo "$w int8 exit $?"
  run_who $w sweep $COMMON --batches 1 --precision fp16 --cuda-graph --copies kernel --out raw/$w-e2e-r$r.csv > raw/$w-e2e-r$r.log 2>&1 || echo "$w e2e exit $?"
}
W="main m0 m1 m2 m3"
for r in 1 2 3; do
  set -- $W; order=""; for i in $(seq 0 4); do j=$(( (i + r - 1) % 5 + 1 )); order="$order ${!j}"; done
  for w in $order; do point $r $w; done
  echo "round $r ($SECONDS s)"
done
# pairs for ab_compare: main -> m0, m0 -> m1, m0 -> m2, m0 -> m3
pair() { local d=ab-$1-$2; mkdir -p $d; for f in raw/$1-*-r?.csv; do case $f in *e2e*|*layers*) continue;; esac; b=${f#raw/$1-}; cp $f $d/base-$b; cp ${f%.csv}.layers.csv $d/base-${b%.csv}.layers.csv 2>/dev/null; done
  for f in raw/$2-*-r?.csv; do case $f in *e2e*|*layers*) continue;; esac; b=${f#raw/$2-}; cp $f $d/new-$b; cp ${f%.csv}.layers.csv $d/new-${b%.csv}.layers.csv 2>/dev/null; done; }
pair main m0; pair m0 m1; pair m0 m2; pair m0 m3
{ for d in ab-main-m0 ab-m0-m1 ab-m0-m2 ab-m0-m3; do echo "## $d (base -> new)"; python3 experiments/ab_compare.py $d | grep -v missing
    for l in pool5 fc6 fc7 fc8; do python3 experiments/ab_compare.py $d $l | awk '/base ms, '$l' /{p=1} p' | grep -v missing | grep -v '^|---' | tail -n +2 | sed "s/^/$l /"; done
    python3 experiments/ab_compare.py $d pool5,fc6,fc7,fc8 | awk '/base ms, pool5,fc6,fc7,fc8 /{p=1} p' | grep -v missing | tail -n +3 | sed "s/^/pool5-fc8 /"; echo; done
  echo "## end to end at 1 image, fp16, --cuda-graph --copies kernel (total_ms_median, rounds 1-3)"
  for w in $W; do echo "$w: $(for r in 1 2 3; do python3 - raw/$w-e2e-r$r.csv <<'PY'
import csv,sys
rows=[r for r in csv.DictReader(open(sys.argv[1])) if r.get('run')=='warm']
print(' '.join(f"{r['total_ms_median']} ({r['check']})" for r in rows), end='')
PY
  echo -n '; '; done)"; done
} > $OUT/summary.md 2>&1
echo "(c) memcheck" >> $OUT/summary.md
BS_PDL=2 compute-sanitizer --tool memcheck --print-limit 5 $bin/batchscope sweep --model data/models/alexnet --backend cuda --reps 2 --warmup 1 --batches 1 --precision fp16 --check-images 1 --check-backend cpu --out raw/mc-fp16.csv > raw/memcheck-fp16.log 2>&1; echo "fp16 rc $?: $(grep -E 'ERROR SUMMARY' raw/memcheck-fp16.log)" >> $OUT/summary.md
BS_PDL=2 compute-sanitizer --tool memcheck --print-limit 5 $bin/batchscope sweep --model data/models/alexnet --backend cuda --reps 2 --warmup 1 --batches 1 --precision fp16 --weights int8 --check-images 1 --check-backend cpu --out raw/mc-int8.csv > raw/memcheck-int8.log 2>&1; echo "int8 rc $?: $(grep -E 'ERROR SUMMARY' raw/memcheck-int8.log)" >> $OUT/summary.md
echo "total $SECONDS s" >> $OUT/summary.md
tar cJf $OUT/raw.tar.xz raw 2>/dev/null
cat $OUT/summary.md | head -120
