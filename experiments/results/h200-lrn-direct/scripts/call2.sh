# Call 2. Binaries: base = main abbbeec; new = call 1's direct form plus 1-channel tasks (lrn_pool_channel_kernel), and a
# probe: BS_LRN_FORM=ring|channel|word1|word4 forces the 16-bit LRN + pooling kernel's form (not kept). (a) the 16-bit
# LRN + pooling tests on new (every form against the unfused pair, bit for bit), memcheck and racecheck over them;
# (b) AlexNet fp16 kernels at 1-32 images, base and new in each forced form, 2 rounds; (c) ncu on norm1 / norm2 at 1
# image in the 1-channel form.
set -uo pipefail
. experiments/device_env.sh
record_device; alexnet_model
SECONDS=0
H='GpuLrnPoolHalf*'
timeout 60 $bin/test_gpu --gtest_brief=1 --gtest_filter="$H" > test_lrn.log 2>&1
echo "test_gpu ($H) exit $? ($SECONDS s)" | tee $OUT/summary.md; grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests from" test_lrn.log | tee -a $OUT/summary.md | head -5
grep -E "Failure" -A4 test_lrn.log | head -30 | tee -a $OUT/summary.md
mkdir -p ab
COMMON="--model data/models/alexnet --backend cuda --reps 20 --warmup 3 --host-memory pinned --check-images 1 --check-backend cpu"
for r in 1 2; do
  bs_of base sweep $COMMON --batches 1,2,4,8,16,32 --precision fp16 --out ab/base-fring-r$r.csv > ab/base-r$r.log 2>&1 || echo "base exit $?"
  for f in ring channel word1 word4; do
    [ $f = ring ] || cp ab/base-fring-r$r.csv ab/base-f$f-r$r.csv
    BS_LRN_FORM=$f bs_of new sweep $COMMON --batches 1,2,4,8,16,32 --precision fp16 --out ab/new-f$f-r$r.csv > ab/new-$f-r$r.log 2>&1 || echo "new $f exit $?"
  done
  echo "round $r ($SECONDS s)"
done
{ echo; echo "## base (main, the ring) against new in each forced form (fp16)"; python3 experiments/ab_compare.py ab
  for l in norm1 norm2; do python3 experiments/ab_compare.py ab $l | awk '/base ms, '$l' /{p=1} p' | tail -n +3 | grep -v missing | sed "s/^/$l /"; done
} >> $OUT/summary.md 2>&1
timeout 100 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 $bin/test_gpu --gtest_brief=1 --gtest_filter="$H" > memcheck.log 2>&1
echo "memcheck exit $? ($SECONDS s)" | tee -a $OUT/summary.md; grep -E "ERROR SUMMARY|PASSED|FAILED" memcheck.log | tee -a $OUT/summary.md | head -3
timeout 100 /usr/local/cuda/bin/compute-sanitizer --tool racecheck --print-limit 5 $bin/test_gpu --gtest_brief=1 --gtest_filter="$H" > racecheck.log 2>&1
echo "racecheck exit $? ($SECONDS s)" | tee -a $OUT/summary.md; grep -E "RACECHECK SUMMARY|PASSED|FAILED" racecheck.log | tee -a $OUT/summary.md | head -3
mkdir -p ncu
BS_LRN_FORM=channel timeout 80 ncu --clock-control none --kernel-name 'regex:lrn' --launch-count 2 \
  --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section SchedulerStats \
  $bin/batchscope sweep --model data/models/alexnet --backend cuda --batches 1 --reps 1 --warmup 0 --precision fp16 \
  --no-profile --check-images 0 --out /tmp/ncu-sweep.csv > ncu/new-channel-fp16.txt 2>&1
echo "ncu exit $? ($SECONDS s)"
{ echo "### ncu new fp16, 1 image, 1-channel tasks"; grep -E "^  [a-zA-Z_].*\(|Duration|Elapsed Cycles|Grid Size|Registers Per|Issued Warp|Warp Cycles Per Issued|Active Warps Per Sch|Achieved Occupancy" ncu/new-channel-fp16.txt | head -40; } >> $OUT/summary.md
tar czf $OUT/raw.tgz ab ncu *.log 2>/dev/null
cat $OUT/summary.md | head -90
