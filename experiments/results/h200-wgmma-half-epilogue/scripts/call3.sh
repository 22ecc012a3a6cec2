# Call 3: main 656a5f9 (base/) against the s2d commit after 37113f5 (new: the epilogue's activation chosen once, FastDiv in
# every wgmma convolution's loaders and epilogues, v65 as auto's conv1 inner version, v38's repack in one wave), AlexNet kernels at 16, 128 and 1,024 images in
# fp16, bf16, tf32 and fp32 (FastDiv also reaches the TF32 and 3xFP16 wgmma versions), 2 rounds alternating, every point
# checked against the cpu backend; `profile` kernel tables at 16 and 256 images (fp16) of both; the whole test_gpu (new).
set -uo pipefail
. experiments/device_env.sh
record_device; python3 experiments/results/h200-pdl-probe/scripts/gen_weights.py data/models/alexnet
SECONDS=0
mkdir -p ab
COMMON="--model data/models/alexnet --backend cuda --reps 20 --warmup 3 --host-memory pinned --check-images 1 --check-backend cpu"
point() {
  local r=$1 w=$2 p
  for p in fp16 bf16 tf32 fp32; do bs_of $w sweep $COMMON --batches 16,128,1024 --precision $p --out ab/$w-$p-r$r.csv > ab/$w-$p-r$r.log 2>&1 || echo "$w $p exit $?"; done
  echo "round $r $w ($SECONDS s)"
}
ROUNDS=2 ab_rounds point
{ echo "## main 656a5f9 (base) -> 37113f5 (new), kernels"; python3 experiments/ab_compare.py ab | grep -v missing
  for l in conv1 conv2,conv3,conv4,conv5; do echo; echo "### $l"; python3 experiments/ab_compare.py ab $l | awk '/base ms, '$l' /{p=1} p' | grep -v missing | tail -n +3; done
} > $OUT/summary.md 2>&1
echo "ab done ($SECONDS s)"
for w in base new; do for b in 16 256; do
  bs_of $w profile --model data/models/alexnet --backend cuda --precision fp16 --batch $b --warmup 3 > $OUT/profile-$w-fp16-b$b.txt 2>&1 || echo "profile $w $b exit $?"
done; done
{ echo; echo "## profile, fp16: s2d_kernel and conv1's wgmma kernel (base, then new)"
  for b in 16 256; do for w in base new; do echo "b$b $w: $(grep -E 's2d_kernel|WgTile<96, [34], 128' $OUT/profile-$w-fp16-b$b.txt | sed 's/^ *//; s/  */ /g' | cut -c1-110 | tr '\n' ';')"; done; done; } >> $OUT/summary.md
timeout 200 $bin/test_gpu --gtest_brief=1 > test_gpu.log 2>&1; echo "test_gpu exit $?: $(grep -E '^\[  (PASSED|FAILED)|tests? ran' test_gpu.log | tr '\n' ' ')" >> $OUT/summary.md
grep -A3 'FAILED' test_gpu.log | head -20 >> $OUT/summary.md
echo "total $SECONDS s" >> $OUT/summary.md
tar cJf $OUT/raw.tar.xz ab test_gpu.log 2>/dev/null
cat $OUT/summary.md
