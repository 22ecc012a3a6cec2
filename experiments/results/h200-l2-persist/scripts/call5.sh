# Call 5 (seventeenth session): the convolutions' prepared weights in a persisting L2 access policy window
# (BATCHSCOPE_EXP_L2_PERSIST=16: 16 MB of the L2 set aside) against the same binary without it (base): AlexNet fp16 and
# FP32 at 1-16 images, 3 rounds alternating; then end to end with --cuda-graph at 1 image, 2 rounds (does the window
# survive capture). Carry .device/pack.tar.xz (batchscope of the experiment commit), .device/COMMIT.
set -uo pipefail
. experiments/device_env.sh
record_device; alexnet_model
SECONDS=0
mkdir -p ab e2e
one() {  # round, who
  local r=$1 w=$2 p e=""
  [ $w = new ] && e=16
  for p in fp16 fp32; do
    BATCHSCOPE_EXP_L2_PERSIST=$e $bin/batchscope sweep --model data/models/alexnet --backend cuda --precision $p --batches 1,2,4,8,16 --reps 20 \
      --warmup 3 --host-memory pinned --check-images 1 --check-backend cpu --out ab/$w-$p-r$r.csv > ab/$w-$p-r$r.log 2>&1 || echo "$p $w r$r exit $?"
  done
  echo "round $r $w ($SECONDS s)"
}
for r in 1 2 3; do if [ $((r % 2)) = 1 ]; then one $r base; one $r new; else one $r new; one $r base; fi; done
python3 experiments/ab_compare.py ab conv1,conv2,conv3,conv4,conv5 > $OUT/ab.md; cat $OUT/ab.md
for r in 1 2; do for w in base new; do e=""; [ $w = new ] && e=16
  for p in fp16 fp32; do
    BATCHSCOPE_EXP_L2_PERSIST=$e $bin/batchscope sweep --model data/models/alexnet --backend cuda --precision $p --batches 1 --reps 300 --warmup 20 \
      --host-memory pinned --cuda-graph --check-images 1 --check-backend cpu --out e2e/$w-$p-r$r.csv > e2e/$w-$p-r$r.log 2>&1 || { echo "e2e $p $w r$r exit $?"; tail -3 e2e/$w-$p-r$r.log; }
  done; done; done
python3 experiments/ab_compare.py e2e > $OUT/e2e-kernels.md; cat $OUT/e2e-kernels.md
for f in e2e/*.csv; do [ -f "$f" ] || continue; case $f in *.layers.csv) continue ;; esac
  python3 -c "
import csv,sys
for r in csv.DictReader(open('$f')):
    if r['run']=='warm': print('$f', r['batch'], 'total_ms_median', r['total_ms_median'], 'p99', r['total_ms_p99'], 'htod', r['htod_ms'])
"; done | tee $OUT/e2e-totals.txt
tar czf $OUT/ab.tgz ab/*.csv e2e/*.csv
