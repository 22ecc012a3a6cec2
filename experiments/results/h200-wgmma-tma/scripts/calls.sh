# The four calls as they ran, one function each (run: bash calls.sh N from the repository root on the GPU machine;
# carry .device/pack.tar.xz built as each call's comment says). The bodies are the call scripts unchanged.
set -uo pipefail

call1() {
# Call 1 (twenty-sixth session): the TMA versions v66-v71 (conv_wgmma_tma.cu) on the H200. Pack: base = main d4359cd
# (LINEINFO=0 PACK=batchscope), new = the TMA change with auto taking the TMA twins (LINEINFO=0 PACK="batchscope
# test_gpu" BASE_PACK=...). 1) test_gpu over the TMA versions' op cases, v38's (its inner version now v67), auto's 16-bit
# cases and the wgmma / heuristic tests; 2) AlexNet fp16 / bf16 kernels, base against new, 2 rounds alternating, at 16,
# 128 and 1,024 images; 3) memcheck and racecheck over the TMA bit test, GpuS2d and the wgmma-half epilogue test.
. experiments/device_env.sh
record_device; python3 experiments/results/h200-pdl-probe/scripts/gen_weights.py data/models/alexnet
SECONDS=0
T=$bin/test_gpu
F='*cuda_conv66_*:*cuda_conv67_*:*cuda_conv68_*:*cuda_conv69_*:*cuda_conv70_*:*cuda_conv71_*:*cuda_conv38_*:*conv*_cuda_fp16:*conv*_cuda_bf16:*Wgmma*:GpuHeuristic.*:GpuS2d.*'
timeout 240 $T --gtest_brief=1 --gtest_filter="$F" > $OUT/tests.log 2>&1; echo "tests exit $? ($SECONDS s): $(grep -E '^\[  PASSED|^\[  FAILED|tests ran' $OUT/tests.log | tr '\n' ' ')" > $OUT/summary.md
grep -E "FAILED|Failure|error" $OUT/tests.log | head -40 >> $OUT/summary.md
mkdir -p ab
COMMON="--model data/models/alexnet --backend cuda --reps 20 --warmup 3 --host-memory pinned --check-images 1 --check-backend cpu"
point() {
  local r=$1 w=$2 p
  for p in fp16 bf16; do bs_of $w sweep $COMMON --batches 16,128,1024 --precision $p --out ab/$w-$p-r$r.csv > ab/$w-$p-r$r.log 2>&1 || echo "$w $p exit $?" >> $OUT/summary.md; done
  echo "round $r $w ($SECONDS s)"
}
ROUNDS=2 ab_rounds point
{ echo "## main d4359cd (base) -> TMA twins (new), kernels"; python3 experiments/ab_compare.py ab | grep -v missing
  for L in conv1 conv2 conv3 conv4 conv5; do echo; echo "### $L"; python3 experiments/ab_compare.py ab $L | tail -n 6; done
  grep -h "check" ab/new-*-r1.log | head -6
} >> $OUT/summary.md 2>&1
bs_of new plan --model data/models/alexnet --backend cuda --precision fp16 --batch 16 > $OUT/plan-fp16-16.txt 2>&1
F2='*WgmmaTma*:GpuS2d.*:*WgmmaHalfWholeTile*'
timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 $T --gtest_brief=1 --gtest_filter="$F2" > memcheck.log 2>&1; echo "memcheck exit $?: $(grep -E 'ERROR SUMMARY|PASSED|FAILED' memcheck.log | tr '\n' ' ')" >> $OUT/summary.md
timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool racecheck --print-limit 5 $T --gtest_brief=1 --gtest_filter="$F2" > racecheck.log 2>&1; echo "racecheck exit $?: $(grep -E 'RACECHECK SUMMARY|PASSED|FAILED' racecheck.log | tr '\n' ' ')" >> $OUT/summary.md
# ncu: conv1's inner product at 256 images, base (v65, cp.async) against new (v67, TMA); the first wgmma launch of each
NCU="/usr/local/cuda/bin/ncu --set full --page raw --csv --launch-count 1"
SW="sweep --model data/models/alexnet --backend cuda --batches 256 --precision fp16 --reps 1 --warmup 0 --no-profile --check-images 0"
timeout 120 $NCU --kernel-name regex:wgmma_kernel bash -c "LD_LIBRARY_PATH=$PWD/.device/base/lib:\$LD_LIBRARY_PATH .device/base/batchscope $SW --out /tmp/n1.csv" > ncu-base.csv 2>/dev/null
timeout 120 $NCU --kernel-name regex:wgmma_tma_kernel $bin/batchscope $SW --out /tmp/n2.csv > ncu-new.csv 2>/dev/null
{ echo; echo "### ncu, conv1 inner at 256 images (base v65, new v67)"; python3 experiments/ncu_raw_table.py ncu-base.csv base-v65; python3 experiments/ncu_raw_table.py ncu-new.csv new-v67; } >> $OUT/summary.md 2>&1
echo "total $SECONDS s" >> $OUT/summary.md
tar cJf $OUT/raw.tar.xz ab memcheck.log racecheck.log ncu-base.csv ncu-new.csv 2>/dev/null
cat $OUT/summary.md
}

call2() {
# Call 2: TMA with 64-channel boxes where a group's channels allow (conv3-conv5), auto's TMA twins only there. Pack: base =
# main d4359cd, new = this commit (LINEINFO=0 PACK="batchscope test_gpu" BASE_PACK=...). 1) the TMA and heuristic tests
# and the op cases; 2) AlexNet fp16 / bf16, base against new, 2 rounds; 3) tune over each twin pair, fp16; 4) sanitizers.
. experiments/device_env.sh
record_device; python3 experiments/results/h200-pdl-probe/scripts/gen_weights.py data/models/alexnet
SECONDS=0
T=$bin/test_gpu
F='*cuda_conv66_*:*cuda_conv67_*:*cuda_conv68_*:*cuda_conv69_*:*cuda_conv70_*:*cuda_conv71_*:*cuda_conv38_*:*conv*_cuda_fp16:*conv*_cuda_bf16:*Wgmma*:GpuHeuristic.*:GpuS2d.*'
timeout 240 $T --gtest_brief=1 --gtest_filter="$F" > $OUT/tests.log 2>&1; echo "tests exit $? ($SECONDS s): $(grep -E '^\[  PASSED|^\[  FAILED|tests ran' $OUT/tests.log | tr '\n' ' ')" > $OUT/summary.md
grep -E "FAILED|Failure|error" $OUT/tests.log | head -40 >> $OUT/summary.md
mkdir -p ab
COMMON="--model data/models/alexnet --backend cuda --reps 20 --warmup 3 --host-memory pinned --check-images 1 --check-backend cpu"
point() {
  local r=$1 w=$2 p
  for p in fp16 bf16; do bs_of $w sweep $COMMON --batches 16,128,1024 --precision $p --out ab/$w-$p-r$r.csv > ab/$w-$p-r$r.log 2>&1 || echo "$w $p exit $?" >> $OUT/summary.md; done
  echo "round $r $w ($SECONDS s)"
}
ROUNDS=2 ab_rounds point
{ echo "## main d4359cd (base) -> wide TMA on conv3-conv5 (new), kernels"; python3 experiments/ab_compare.py ab | grep -v missing
  for L in conv1 conv2 conv3 conv4 conv5; do echo; echo "### $L"; python3 experiments/ab_compare.py ab $L | tail -n 6; done
} >> $OUT/summary.md 2>&1
timeout 150 $bin/batchscope tune --model data/models/alexnet --precision fp16 --batches 16,128,1024 --reps 5 --warmup 2 \
  --conv-variants 38,45,66,41,71,42,68,61,69,60,70 --fc-variants 17 --out $OUT/tune-fp16.json > $OUT/tune-fp16.log 2>&1; echo "tune exit $?" >> $OUT/summary.md
F2='*WgmmaTma*:*WgmmaHalfWholeTile*'
timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 $T --gtest_brief=1 --gtest_filter="$F2" > memcheck.log 2>&1; echo "memcheck exit $?: $(grep -E 'ERROR SUMMARY|PASSED|FAILED' memcheck.log | tr '\n' ' ')" >> $OUT/summary.md
timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool racecheck --print-limit 5 $T --gtest_brief=1 --gtest_filter="$F2" > racecheck.log 2>&1; echo "racecheck exit $?: $(grep -E 'RACECHECK SUMMARY|PASSED|FAILED' racecheck.log | tr '\n' ' ')" >> $OUT/summary.md
echo "total $SECONDS s" >> $OUT/summary.md
tar cJf $OUT/raw.tar.xz ab memcheck.log racecheck.log 2>/dev/null
cat $OUT/summary.md
}

call3() {
# Call 3: the landing binaries (new) against main d4359cd (base), and a probe. 1) the whole test_gpu (new); 2) AlexNet
# fp16 / bf16 kernels, 2 rounds alternating; 3) probe (exp/: new + probe-s2d-ct.patch): conv1's space-to-depth tensor
# with 4 channels a tap block (64 a pixel, K = 576: one 64-channel TMA box a stage) where main has 3 (48, K = 432), its
# inner version auto's (v68), v67 or v65; 4) memcheck over the TMA and s2d tests (new).
. experiments/device_env.sh
record_device; python3 experiments/results/h200-pdl-probe/scripts/gen_weights.py data/models/alexnet
SECONDS=0
T=$bin/test_gpu
timeout 330 $T --gtest_brief=1 > test_gpu.log 2>&1; echo "test_gpu exit $? ($SECONDS s): $(grep -E '^\[  (PASSED|FAILED)|tests? ran' test_gpu.log | tr '\n' ' ')" > $OUT/summary.md
grep -A3 'FAILED' test_gpu.log | head -20 >> $OUT/summary.md
mkdir -p ab
COMMON="--model data/models/alexnet --backend cuda --reps 20 --warmup 3 --host-memory pinned --check-images 1 --check-backend cpu"
point() {
  local r=$1 w=$2 p
  for p in fp16 bf16; do bs_of $w sweep $COMMON --batches 16,128,1024 --precision $p --out ab/$w-$p-r$r.csv > ab/$w-$p-r$r.log 2>&1 || echo "$w $p exit $?" >> $OUT/summary.md; done
  echo "round $r $w ($SECONDS s)"
}
ROUNDS=2 ab_rounds point
{ echo "## main d4359cd (base) -> landing (new), kernels"; python3 experiments/ab_compare.py ab | grep -v missing
  for L in conv1 conv2 conv3 conv4 conv5; do echo; echo "### $L"; python3 experiments/ab_compare.py ab $L | tail -n 6; done
} >> $OUT/summary.md 2>&1
mkdir -p pr
cp ab/new-fp16-r1.csv pr/base-fp16-r1.csv
for cfg in "4 auto" "4 67" "4 65"; do
  set -- $cfg
  inner=""; [ "$2" != auto ] && inner="BS_S2D_INNER=$2"
  env BS_S2D_CT=$1 $inner LD_LIBRARY_PATH=$PWD/.device/lib:$LD_LIBRARY_PATH .device/exp/batchscope sweep $COMMON --batches 16,128,1024 --precision fp16 --out pr/new-fp16-r1.csv > pr/ct$1-$2.log 2>&1 || echo "probe $cfg exit $?" >> $OUT/summary.md
  { echo; echo "### probe: conv1 with BS_S2D_CT=$1, inner $2 (base: the landing binary, round 1)"; python3 experiments/ab_compare.py pr conv1 | tail -n 4; python3 experiments/ab_compare.py pr | tail -n 3; } >> $OUT/summary.md 2>&1
done
F2='*WgmmaTma*:GpuS2d.*'
timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 $T --gtest_brief=1 --gtest_filter="$F2" > memcheck.log 2>&1; echo "memcheck exit $?: $(grep -E 'ERROR SUMMARY|PASSED|FAILED' memcheck.log | tr '\n' ' ')" >> $OUT/summary.md
echo "total $SECONDS s" >> $OUT/summary.md
tar cJf $OUT/raw.tar.xz ab pr test_gpu.log memcheck.log 2>/dev/null
cat $OUT/summary.md
}

call4() {
# Call 4: fc v16 on the TMA versions. Pack: base = a5bc1b1 (the landing binaries of call 3), new = this commit. 1) fc
# v16's op cases (the two new TMA ones), auto's fp16 / bf16 fc cases, the TMA tests; 2) AlexNet fp16 / bf16 at 128 and
# 1,024 images, base against new, 2 rounds; 3) memcheck over fc v16's op cases.
. experiments/device_env.sh
record_device; python3 experiments/results/h200-pdl-probe/scripts/gen_weights.py data/models/alexnet
SECONDS=0
T=$bin/test_gpu
F='*cuda_fc16_*:*fc*_cuda_fp16:*fc*_cuda_bf16:*WgmmaTma*'
timeout 200 $T --gtest_brief=1 --gtest_filter="$F" > $OUT/tests.log 2>&1; echo "tests exit $? ($SECONDS s): $(grep -E '^\[  PASSED|^\[  FAILED|tests ran' $OUT/tests.log | tr '\n' ' ')" > $OUT/summary.md
grep -E "FAILED|Failure" $OUT/tests.log | head -20 >> $OUT/summary.md
mkdir -p ab
COMMON="--model data/models/alexnet --backend cuda --reps 20 --warmup 3 --host-memory pinned --check-images 1 --check-backend cpu"
point() {
  local r=$1 w=$2 p
  for p in fp16 bf16; do bs_of $w sweep $COMMON --batches 128,1024 --precision $p --out ab/$w-$p-r$r.csv > ab/$w-$p-r$r.log 2>&1 || echo "$w $p exit $?" >> $OUT/summary.md; done
  echo "round $r $w ($SECONDS s)"
}
ROUNDS=2 ab_rounds point
{ echo "## a5bc1b1 (base) -> fc v16 on the TMA versions (new), kernels"; python3 experiments/ab_compare.py ab | grep -v missing
  for L in fc6 fc7 fc8; do echo; echo "### $L"; python3 experiments/ab_compare.py ab $L | tail -n 4; done
} >> $OUT/summary.md 2>&1
timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 $T --gtest_brief=1 --gtest_filter='*fc_1024__200_n192*cuda_fc16*:*fc_512__1024_n2200*cuda_fc16*' > memcheck.log 2>&1; echo "memcheck exit $?: $(grep -E 'ERROR SUMMARY|PASSED|FAILED' memcheck.log | tr '\n' ' ')" >> $OUT/summary.md
echo "total $SECONDS s" >> $OUT/summary.md
tar cJf $OUT/raw.tar.xz ab memcheck.log 2>/dev/null
cat $OUT/summary.md
}

call"$1"
