# The calls as they ran, one function each (run: bash calls.sh N from the repository root on the GPU machine; carry
# .device/pack.tar.xz built as each call's comment says).
set -uo pipefail

call1() {
# Call 1 (twenty-seventh session): conv v72 / v73 (conv_wgmma_halo.cu). Pack: base = main 9877cde (LINEINFO=0
# PACK=batchscope), new = the halo change with the probe switch BS_S2D_INNER (conv_s2d_half.cu's inner_version returns
# its version when set; not committed) (LINEINFO=0 PACK="batchscope test_gpu" BASE_PACK=...). 1) the halo tests, the
# epilogue test, v38's and v72 / v73's op cases, the heuristic tests; 2) AlexNet fp16 / bf16 kernels, base against new
# (auto), 2 rounds alternating, 16 / 128 / 1,024 images; 3) new with conv1's inner version forced to v65 (main's choice)
# against v72 and v73, fp16, 4-1,024 images; 4) memcheck and racecheck over the halo tests; 5) ncu on the inner product at
# 256 images (v72).
. experiments/device_env.sh
record_device; python3 experiments/results/h200-pdl-probe/scripts/gen_weights.py data/models/alexnet
SECONDS=0
T=$bin/test_gpu
F='*WgmmaHalo*:*WgmmaHalfWholeTile*:*cuda_conv72_*:*cuda_conv73_*:*cuda_conv38_*:GpuHeuristic.*:GpuS2d.*'
timeout 240 $T --gtest_brief=1 --gtest_filter="$F" > $OUT/tests.log 2>&1; echo "tests exit $? ($SECONDS s): $(grep -E '^\[  PASSED|^\[  FAILED|tests ran' $OUT/tests.log | tr '\n' ' ')" > $OUT/summary.md
grep -E "FAILED|Failure|error" $OUT/tests.log | head -40 >> $OUT/summary.md
COMMON="--model data/models/alexnet --backend cuda --reps 20 --warmup 3 --host-memory pinned --check-images 1 --check-backend cpu"
mkdir -p ab
point() {
  local r=$1 w=$2 p
  for p in fp16 bf16; do bs_of $w sweep $COMMON --batches 16,128,1024 --precision $p --out ab/$w-$p-r$r.csv > ab/$w-$p-r$r.log 2>&1 || echo "$w $p exit $?" >> $OUT/summary.md; done
  echo "round $r $w ($SECONDS s)"
}
ROUNDS=2 ab_rounds point
{ echo "## main 9877cde (base) -> halo, auto (new), kernels"; python3 experiments/ab_compare.py ab | grep -v missing
  for L in conv1 conv2; do echo; echo "### $L"; python3 experiments/ab_compare.py ab $L | tail -n 6; done
  grep -h "check" ab/new-*-r1.log | head -4
} >> $OUT/summary.md 2>&1
for X in 72 73; do
  mkdir -p ab$X
  forced() {
    local r=$1 w=$2 v=65
    [ "$w" = new ] && v=$X
    BS_S2D_INNER=$v $bin/batchscope sweep $COMMON --batches 4,8,12,16,32,128,1024 --precision fp16 --out ab$X/$w-fp16-r$r.csv > ab$X/$w-fp16-r$r.log 2>&1 || echo "forced $v exit $?" >> $OUT/summary.md
  }
  ROUNDS=2 ab_rounds forced
  { echo; echo "## conv1's inner version forced: v65 (base) -> v$X (new), fp16, conv1"; python3 experiments/ab_compare.py ab$X conv1 | grep -v missing
    echo "network:"; python3 experiments/ab_compare.py ab$X | grep -v missing | tail -n 7; } >> $OUT/summary.md 2>&1
done
# conv1 at 1-4 images through v38 (which auto does not take there) with inner v73 (auto's there) against v65, and
# against auto's own versions for conv1 at those batches (tune: v21, v48)
for v in 73 65; do
  BS_S2D_INNER=$v timeout 100 $bin/batchscope tune --model data/models/alexnet --precision fp16 --batches 1,2,4 --reps 10 --warmup 3 \
    --conv-variants 38,21,48 --out $OUT/tune-small-$v.json > $OUT/tune-small-$v.log 2>&1; echo "tune inner $v exit $?" >> $OUT/summary.md
  python3 experiments/tune_summary.py $OUT/tune-small-$v.json 2>&1 | grep conv1 >> $OUT/summary.md
done
F2='*WgmmaHalo*'
timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 $T --gtest_brief=1 --gtest_filter="$F2" > memcheck.log 2>&1; echo "memcheck exit $?: $(grep -E 'ERROR SUMMARY|PASSED|FAILED' memcheck.log | tr '\n' ' ')" >> $OUT/summary.md
timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool racecheck --print-limit 5 $T --gtest_brief=1 --gtest_filter="$F2" > racecheck.log 2>&1; echo "racecheck exit $?: $(grep -E 'RACECHECK SUMMARY|PASSED|FAILED' racecheck.log | tr '\n' ' ')" >> $OUT/summary.md
NCU="/usr/local/cuda/bin/ncu --set full --page raw --csv --launch-count 1"
SW="sweep --model data/models/alexnet --backend cuda --batches 256 --precision fp16 --reps 1 --warmup 0 --no-profile --check-images 0"
BS_S2D_INNER=72 timeout 120 $NCU --kernel-name regex:halo_kernel $bin/batchscope $SW --out /tmp/n2.csv > ncu-new.csv 2>/dev/null
{ echo; echo "### ncu, conv1 inner at 256 images (v72)"; python3 experiments/ncu_raw_table.py ncu-new.csv new-v72; } >> $OUT/summary.md 2>&1
echo "total $SECONDS s" >> $OUT/summary.md
tar cJf $OUT/raw.tar.xz ab ab72 ab73 memcheck.log racecheck.log ncu-new.csv $OUT/tests.log 2>/dev/null
cat $OUT/summary.md
}

call2() {
# Call 2: v72 / v73 with the step table, the biases in shared memory and the K loop kept rolled (a687161 + the probe
# switch). Pack as call 1's. 1) the whole test_gpu; 2) AlexNet fp16 / bf16, base (main 9877cde) against new (auto), 2
# rounds; 3) conv1's inner forced v65 against v72 and v73, fp16, 8-1,024 images, 2 rounds; 4) memcheck and racecheck over
# the halo tests and GpuS2d; 5) ncu on the inner product at 256 images: v72 and v65 in the new binary.
. experiments/device_env.sh
record_device; python3 experiments/results/h200-pdl-probe/scripts/gen_weights.py data/models/alexnet
SECONDS=0
T=$bin/test_gpu
timeout 300 $T --gtest_brief=1 > $OUT/tests.log 2>&1; echo "test_gpu exit $? ($SECONDS s): $(grep -E '^\[  PASSED|^\[  FAILED|tests ran' $OUT/tests.log | tr '\n' ' ')" > $OUT/summary.md
grep -E "FAILED|Failure" $OUT/tests.log | head -20 >> $OUT/summary.md
COMMON="--model data/models/alexnet --backend cuda --reps 20 --warmup 3 --host-memory pinned --check-images 1 --check-backend cpu"
mkdir -p ab
point() {
  local r=$1 w=$2 p
  for p in fp16 bf16; do bs_of $w sweep $COMMON --batches 16,128,1024 --precision $p --out ab/$w-$p-r$r.csv > ab/$w-$p-r$r.log 2>&1 || echo "$w $p exit $?" >> $OUT/summary.md; done
  echo "round $r $w ($SECONDS s)"
}
ROUNDS=2 ab_rounds point
{ echo "## main 9877cde (base) -> halo, auto (new), kernels"; python3 experiments/ab_compare.py ab | grep -v missing
  echo; echo "### conv1"; python3 experiments/ab_compare.py ab conv1 | tail -n 6
} >> $OUT/summary.md 2>&1
for X in 72 73; do
  mkdir -p ab$X
  forced() {
    local r=$1 w=$2 v=65
    [ "$w" = new ] && v=$X
    BS_S2D_INNER=$v $bin/batchscope sweep $COMMON --batches 8,16,24,32,64,128,256,1024 --precision fp16 --out ab$X/$w-fp16-r$r.csv > ab$X/$w-fp16-r$r.log 2>&1 || echo "forced $v exit $?" >> $OUT/summary.md
  }
  ROUNDS=2 ab_rounds forced
  { echo; echo "## conv1's inner version forced: v65 (base) -> v$X (new), fp16, conv1"; python3 experiments/ab_compare.py ab$X conv1 | grep -v missing
    echo "network:"; python3 experiments/ab_compare.py ab$X | grep -v missing | tail -n 8; } >> $OUT/summary.md 2>&1
done
F2='*WgmmaHalo*:GpuS2d.*'
timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 $T --gtest_brief=1 --gtest_filter="$F2" > memcheck.log 2>&1; echo "memcheck exit $?: $(grep -E 'ERROR SUMMARY|PASSED|FAILED' memcheck.log | tr '\n' ' ')" >> $OUT/summary.md
timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool racecheck --print-limit 5 $T --gtest_brief=1 --gtest_filter="$F2" > racecheck.log 2>&1; echo "racecheck exit $?: $(grep -E 'RACECHECK SUMMARY|PASSED|FAILED' racecheck.log | tr '\n' ' ')" >> $OUT/summary.md
NCU="/usr/local/cuda/bin/ncu --set full --page raw --csv --launch-count 1"
SW="sweep --model data/models/alexnet --backend cuda --batches 256 --precision fp16 --reps 1 --warmup 0 --no-profile --check-images 0"
BS_S2D_INNER=72 timeout 120 $NCU --kernel-name regex:halo_kernel $bin/batchscope $SW --out /tmp/n2.csv > ncu-v72.csv 2>/dev/null
BS_S2D_INNER=65 timeout 120 $NCU --kernel-name regex:wgmma_kernel $bin/batchscope $SW --out /tmp/n1.csv > ncu-v65.csv 2>/dev/null
{ echo; echo "### ncu, conv1 inner at 256 images"; python3 experiments/ncu_raw_table.py ncu-v65.csv v65; python3 experiments/ncu_raw_table.py ncu-v72.csv v72; } >> $OUT/summary.md 2>&1
echo "total $SECONDS s" >> $OUT/summary.md
tar cJf $OUT/raw.tar.xz ab ab72 ab73 memcheck.log racecheck.log ncu-v65.csv ncu-v72.csv 2>/dev/null
cat $OUT/summary.md
}

call3() {
# Call 3: the landing candidate (v72 with three A fragments in turn; auto's rule: v72 from 2.5 waves of its tiles) + the
# probe switch. Pack as before (base = main 9877cde). 1) the halo, heuristic, s2d and epilogue tests and the op cases of
# v38, v72, v73; 2) AlexNet fp16 / bf16 kernels, base against new (auto), 2 rounds, 16 / 32 / 128 / 1,024 images; 3) conv1's
# inner forced v65 against v72, fp16, 16-1,024 images, 2 rounds; 4) memcheck and racecheck over the halo tests and GpuS2d;
# 5) ncu on v72 at 256 images.
. experiments/device_env.sh
record_device; python3 experiments/results/h200-pdl-probe/scripts/gen_weights.py data/models/alexnet
SECONDS=0
T=$bin/test_gpu
F='*WgmmaHalo*:*WgmmaHalfWholeTile*:*cuda_conv72_*:*cuda_conv73_*:*cuda_conv38_*:GpuHeuristic.*:GpuS2d.*'
timeout 240 $T --gtest_brief=1 --gtest_filter="$F" > $OUT/tests.log 2>&1; echo "tests exit $? ($SECONDS s): $(grep -E '^\[  PASSED|^\[  FAILED|tests ran' $OUT/tests.log | tr '\n' ' ')" > $OUT/summary.md
grep -E "FAILED|Failure" $OUT/tests.log | head -20 >> $OUT/summary.md
COMMON="--model data/models/alexnet --backend cuda --reps 20 --warmup 3 --host-memory pinned --check-images 1 --check-backend cpu"
mkdir -p ab ab72
point() {
  local r=$1 w=$2 p
  for p in fp16 bf16; do bs_of $w sweep $COMMON --batches 16,32,128,1024 --precision $p --out ab/$w-$p-r$r.csv > ab/$w-$p-r$r.log 2>&1 || echo "$w $p exit $?" >> $OUT/summary.md; done
  echo "round $r $w ($SECONDS s)"
}
ROUNDS=2 ab_rounds point
{ echo "## main 9877cde (base) -> halo, auto (new), kernels"; python3 experiments/ab_compare.py ab | grep -v missing
  echo; echo "### conv1"; python3 experiments/ab_compare.py ab conv1 | tail -n 8
} >> $OUT/summary.md 2>&1
forced() {
  local r=$1 w=$2 v=65
  [ "$w" = new ] && v=72
  BS_S2D_INNER=$v $bin/batchscope sweep $COMMON --batches 16,24,32,64,128,256,1024 --precision fp16 --out ab72/$w-fp16-r$r.csv > ab72/$w-fp16-r$r.log 2>&1 || echo "forced $v exit $?" >> $OUT/summary.md
}
ROUNDS=2 ab_rounds forced
{ echo; echo "## conv1's inner version forced: v65 (base) -> v72 (new), fp16, conv1"; python3 experiments/ab_compare.py ab72 conv1 | grep -v missing
  echo "network:"; python3 experiments/ab_compare.py ab72 | grep -v missing | tail -n 7; } >> $OUT/summary.md 2>&1
F2='*WgmmaHalo*:GpuS2d.*'
timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 $T --gtest_brief=1 --gtest_filter="$F2" > memcheck.log 2>&1; echo "memcheck exit $?: $(grep -E 'ERROR SUMMARY|PASSED|FAILED' memcheck.log | tr '\n' ' ')" >> $OUT/summary.md
timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool racecheck --print-limit 5 $T --gtest_brief=1 --gtest_filter="$F2" > racecheck.log 2>&1; echo "racecheck exit $?: $(grep -E 'RACECHECK SUMMARY|PASSED|FAILED' racecheck.log | tr '\n' ' ')" >> $OUT/summary.md
NCU="/usr/local/cuda/bin/ncu --set full --page raw --csv --launch-count 1"
SW="sweep --model data/models/alexnet --backend cuda --batches 256 --precision fp16 --reps 1 --warmup 0 --no-profile --check-images 0"
BS_S2D_INNER=72 timeout 120 $NCU --kernel-name regex:halo_kernel $bin/batchscope $SW --out /tmp/n2.csv > ncu-v72.csv 2>/dev/null
{ echo; echo "### ncu, conv1 inner at 256 images"; python3 experiments/ncu_raw_table.py ncu-v72.csv v72; } >> $OUT/summary.md 2>&1
echo "total $SECONDS s" >> $OUT/summary.md
tar cJf $OUT/raw.tar.xz ab ab72 memcheck.log racecheck.log ncu-v72.csv 2>/dev/null
cat $OUT/summary.md
}

call4() {
# Call 4: the whole test_gpu on call 3's pack (the landing commit 16fc75d + the probe switch, unset here).
. experiments/device_env.sh
record_device
SECONDS=0
timeout 300 $bin/test_gpu --gtest_brief=1 > $OUT/tests.log 2>&1; echo "test_gpu exit $? ($SECONDS s): $(grep -E '^\[  PASSED|^\[  FAILED|tests ran' $OUT/tests.log | tr '\n' ' ')" > $OUT/summary.md
grep -E "FAILED|Failure" $OUT/tests.log | head -20 >> $OUT/summary.md
cat $OUT/summary.md
}

call5() {
# Call 5: the review commit 5f1d5a1 (host code of conv_wgmma_halo.cu only: the launch's wave from the cached occupancy;
# LINEINFO=0 PACK="batchscope test_gpu", no base, no probe switch). The halo, heuristic, s2d and epilogue tests and the
# op cases of v38 / v72 / v73; AlexNet fp16 / bf16 kernels at 32 / 128 / 1,024 images, one run each, against call 3's.
. experiments/device_env.sh
record_device; python3 experiments/results/h200-pdl-probe/scripts/gen_weights.py data/models/alexnet
SECONDS=0
F='*WgmmaHalo*:*WgmmaHalfWholeTile*:*cuda_conv72_*:*cuda_conv73_*:*cuda_conv38_*:GpuHeuristic.*:GpuS2d.*'
timeout 240 $bin/test_gpu --gtest_brief=1 --gtest_filter="$F" > $OUT/tests.log 2>&1; echo "tests exit $? ($SECONDS s): $(grep -E '^\[  PASSED|^\[  FAILED|tests ran' $OUT/tests.log | tr '\n' ' ')" > $OUT/summary.md
grep -E "FAILED|Failure" $OUT/tests.log | head -20 >> $OUT/summary.md
for p in fp16 bf16; do
  $bin/batchscope sweep --model data/models/alexnet --backend cuda --reps 20 --warmup 3 --host-memory pinned --check-images 1 --check-backend cpu \
    --batches 32,128,1024 --precision $p --out $OUT/sweep-$p.csv > $OUT/sweep-$p.log 2>&1; echo "$p exit $?" >> $OUT/summary.md
  python3 -c "import sys; sys.path.insert(0, 'experiments'); import ab_compare as a
k = a.kernels('$OUT/sweep-$p.csv'); c = a.layer_sum('$OUT/sweep-$p.layers.csv', ['conv1'])
for b in sorted(k): print('$p', b, 'kernels %.4f ms' % k[b][0], k[b][1], 'rel L2 %.2g' % k[b][2], '| conv1 %.4f ms' % c[b][0])" >> $OUT/summary.md 2>&1
done
echo "total $SECONDS s" >> $OUT/summary.md
cat $OUT/summary.md
}

"call$1"
