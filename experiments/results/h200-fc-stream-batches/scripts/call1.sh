# Call 1. Binaries: base = main 58d8ead (its machine code is 94fe471's: the pack of that commit); new = the probe commit
# (fc v14 / v15 at one image: a thread's chunks loaded in batches before their products; BS_FC14_CH=CH and
# BS_FC15=R,CH force the batch for every layer, unset = the launch's rule).
# (a) test_gpu over the fully connected cases (every fc version, the new batch-1 cases among them);
# (b) AlexNet at 1 image, 2 rounds alternating: fp16 (v14) base / new rule / CH 4, 8, 12; INT8 weights fp16 (v15)
#     base / new rule / R,CH over 9 shapes; INT8 FP32 base / new rule / 3 shapes; FP32 (v5, unchanged) base / new as
#     the control. The rule's and base's sweeps are checked against the cpu backend.
set -uo pipefail
. experiments/device_env.sh
S=experiments/results/h200-fc-stream-batches/scripts
record_device; alexnet_model
cat .device/base/COMMIT >> $OUT/device.txt 2>/dev/null
SECONDS=0
timeout 170 $bin/test_gpu --gtest_brief=1 --gtest_filter='*fc*' > test_fc.log 2>&1
echo "test_gpu fc cases exit $? ($SECONDS s)" | tee $OUT/summary.md; grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests from" test_fc.log | tee -a $OUT/summary.md | head -5
grep -E "FAILED|Failure" -A3 test_fc.log | head -30 | tee -a $OUT/summary.md
mkdir -p p
COMMON="--model data/models/alexnet --backend cuda --batches 1 --reps 30 --warmup 3 --host-memory pinned"
CHK="--check-images 1 --check-backend cpu"
sw() {  # sw WHO NAME ENV ARGS...: one sweep, ENV (VAR=VALUE or -) set for it
  local w=$1 n=$2 e=$3; shift 3
  ( [ "$e" != - ] && export "$e"; bs_of $w sweep $COMMON "$@" --out p/$n.csv > p/$n.log 2>&1 ) || echo "$n exit $?"
}
sweeps() {
  local r=$1 w=$2 c
  if [ $w = base ]; then
    sw base base-fp16-r$r - --precision fp16 $CHK
    sw base base-int8fp16-r$r - --precision fp16 --weights int8 $CHK
    sw base base-int8fp32-r$r - --precision fp32 --weights int8 $CHK
    sw base base-fp32-r$r - --precision fp32 $CHK
  else
    sw new new-fp16-r$r - --precision fp16 $CHK
    for c in 4 8 12; do sw new ch$c-fp16-r$r BS_FC14_CH=$c --precision fp16; done
    sw new new-int8fp16-r$r - --precision fp16 --weights int8 $CHK
    for c in 4,1 4,2 4,3 4,5 2,2 2,3 2,5 1,4 1,8; do sw new rc${c/,/x}-int8fp16-r$r BS_FC15=$c --precision fp16 --weights int8; done
    sw new new-int8fp32-r$r - --precision fp32 --weights int8 $CHK
    for c in 4,1 4,2 2,3; do sw new rc${c/,/x}-int8fp32-r$r BS_FC15=$c --precision fp32 --weights int8; done
    sw new new-fp32-r$r - --precision fp32 $CHK
  fi
  echo "round $r $w ($SECONDS s)"
}
ROUNDS=2 ab_rounds sweeps
{ echo; echo "## AlexNet at 1 image, us (median of 30 passes; rounds)"; python3 $S/fc_table.py p; } >> $OUT/summary.md 2>&1
tar czf $OUT/raw.tgz p *.log 2>/dev/null
cat $OUT/summary.md
