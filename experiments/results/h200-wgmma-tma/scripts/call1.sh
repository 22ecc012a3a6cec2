# Call 1 (twenty-sixth session): the TMA versions v66-v71 (conv_wgmma_tma.cu) on the H200. Pack: base = main d4359cd
# (LINEINFO=0 PACK=batchscope), new = the TMA change with auto taking the TMA twins (LINEINFO=0 PACK="batchscope
# test_gpu" BASE_PACK=...). 1) test_gpu over the TMA versions' op cases, v38's (its inner version now v67), auto's 16-bit
# cases and the wgmma / heuristic tests; 2) AlexNet fp16 / bf16 kernels, base against new, 2 rounds alternating, at 16,
# 128 and 1,024 images; 3) memcheck and racecheck over the TMA bit test, GpuS2d and the wgmma-half epilogue test.
set -uo pipefail
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
