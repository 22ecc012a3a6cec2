# Call 8 (seventeenth session): conv v66 (v49 with the weights prepared as 3xTF32 fragments) forced against v49 forced, the
# same binaries, AlexNet FP32 at 1, 2 and 4 images, 3 rounds alternating; v66's op-table cases, v49 / v14's (their
# preparation's code changed) and GpuEngine.* on the GPU, memcheck and racecheck over v66's; then the session's closing
# figures with auto (v66 unused): fp16 / bf16 / FP32 at 1 and 16 images, --weights int8 at 1, and end to end with
# --cuda-graph --copies kernel at 1 image, 2 rounds. Carry .device/pack.tar.xz, .device/COMMIT.
set -uo pipefail
. experiments/device_env.sh
record_device; alexnet_model
SECONDS=0
mkdir -p ab fin
one() {  # round, who
  local r=$1 w=$2 v=49
  [ $w = new ] && v=66
  bs_of new sweep --model data/models/alexnet --backend cuda --precision fp32 --conv-variant $v --batches 1,2,4 --reps 20 \
    --warmup 3 --host-memory pinned --check-images 1 --check-backend cpu --out ab/$w-fp32-r$r.csv > ab/$w-fp32-r$r.log 2>&1 || echo "$w r$r exit $?"
}
for r in 1 2 3; do if [ $((r % 2)) = 1 ]; then one $r base; one $r new; else one $r new; one $r base; fi; done
python3 experiments/ab_compare.py ab conv1,conv2,conv3,conv4,conv5 > $OUT/ab.md; cat $OUT/ab.md
for l in conv1 conv2 conv3 conv4 conv5; do python3 experiments/ab_compare.py ab $l | sed -n '/^| config | batch | base ms, conv/,$p' | tail -n +3 | sed "s/^/$l /"; done > $OUT/ab-layers.md
cat $OUT/ab-layers.md
echo "ab ($SECONDS s)"
timeout 60 $bin/test_gpu --gtest_brief=1 --gtest_filter='*cuda_conv66:*cuda_conv49:*cuda_conv14:GpuEngine.*:GpuHeuristic.*' > $OUT/test_gpu.log 2>&1
echo "test_gpu exit $? ($SECONDS s)"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests from" $OUT/test_gpu.log | head -5; grep -E "FAILED|Failure" -A3 $OUT/test_gpu.log | head -20
timeout 50 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 $bin/test_gpu --gtest_brief=1 --gtest_filter='*cuda_conv66' > $OUT/memcheck.log 2>&1
echo "memcheck exit $? ($SECONDS s)"; grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/memcheck.log | head -3
timeout 60 /usr/local/cuda/bin/compute-sanitizer --tool racecheck --print-limit 5 $bin/test_gpu --gtest_brief=1 --gtest_filter='*cuda_conv66' > $OUT/racecheck.log 2>&1
echo "racecheck exit $? ($SECONDS s)"; grep -E "RACECHECK SUMMARY|PASSED|FAILED" $OUT/racecheck.log | head -3
for r in 1 2; do
  for p in fp16 bf16 fp32; do
    $bin/batchscope sweep --model data/models/alexnet --backend cuda --precision $p --batches 1,16 --reps 20 --warmup 3 --host-memory pinned \
      --check-images 1 --check-backend cpu --out fin/new-$p-r$r.csv > fin/$p-r$r.log 2>&1 || echo "fin $p exit $?"
  done
  for p in fp16 fp32; do
    $bin/batchscope sweep --model data/models/alexnet --backend cuda --precision $p --weights int8 --batches 1 --reps 20 --warmup 3 --host-memory pinned \
      --check-images 1 --check-backend cpu --out fin/new-$p-int8-r$r.csv > fin/$p-int8-r$r.log 2>&1 || echo "int8 $p exit $?"
    $bin/batchscope sweep --model data/models/alexnet --backend cuda --precision $p --batches 1 --reps 300 --warmup 20 --host-memory pinned \
      --cuda-graph --copies kernel --check-images 1 --check-backend cpu --out fin/e2e-$p-r$r.csv > fin/e2e-$p-r$r.log 2>&1 || echo "e2e $p exit $?"
  done
done
echo "closing figures ($SECONDS s)"
python3 - <<'P' | tee $OUT/closing.md
import csv, glob
print('| file | batch | kernels ms | end to end ms (median, p99) | htod ms | check |')
print('|---|---|---|---|---|---|')
K = ["conv", "pool", "fc", "act", "lrn", "softmax", "other_kernel"]
for f in sorted(glob.glob('fin/*-r*.csv')):
    if f.endswith('.layers.csv'): continue
    for r in csv.DictReader(open(f)):
        if r['run'] != 'warm': continue
        k = sum(float(r[x + '_ms'] or 0) for x in K)
        print(f"| {f[4:]} | {r['batch']} | {k:.4f} | {float(r['total_ms_median']):.4f}, {float(r['total_ms_p99']):.4f} | {float(r['htod_ms'] or 0):.4f} | {r['check']} {r['check_rel_l2']} |")
P
tar czf $OUT/ab.tgz ab/*.csv fin/*.csv
cd $OUT && tar czf logs.tgz *.log 2>/dev/null && rm -f *.log
