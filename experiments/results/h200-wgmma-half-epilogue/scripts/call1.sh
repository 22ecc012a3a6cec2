# Call 1: main 656a5f9's batchscope (base/) against 44aa0a0 (new: the 16-bit wgmma epilogue's activation chosen once).
# (a) AlexNet fp16 / bf16 kernels at 1-1,024 images, 3 rounds alternating, every point checked against the cpu backend;
# (b) ncu on conv1's v44 at 256 images (new); (c) test_gpu whole, then memcheck and racecheck over the wgmma-half and
# s2d tests.
set -uo pipefail
. experiments/device_env.sh
record_device; python3 experiments/results/h200-pdl-probe/scripts/gen_weights.py data/models/alexnet
SECONDS=0
mkdir -p ab
COMMON="--model data/models/alexnet --backend cuda --reps 20 --warmup 3 --host-memory pinned --check-images 1 --check-backend cpu"
point() {
  local r=$1 w=$2 p
  for p in fp16 bf16; do bs_of $w sweep $COMMON --batches 1,4,16,32,128,1024 --precision $p --out ab/$w-$p-r$r.csv > ab/$w-$p-r$r.log 2>&1 || echo "$w $p exit $?"; done
  echo "round $r $w ($SECONDS s)"
}
ROUNDS=3 ab_rounds point
{ echo "## base (main 656a5f9) -> new (44aa0a0), kernels"; python3 experiments/ab_compare.py ab | grep -v missing
  for l in conv1 conv2 conv3 conv4 conv5; do echo; echo "### $l"; python3 experiments/ab_compare.py ab $l | awk '/base ms, '$l' /{p=1} p' | grep -v missing; done
} > $OUT/summary.md 2>&1
echo "ab done ($SECONDS s)"
timeout 100 /usr/local/cuda/bin/ncu --clock-control none --set full --page raw --csv --kernel-name regex:'wgmma_kernel' --launch-count 1 \
  $bin/batchscope sweep --model data/models/alexnet --backend cuda --precision fp16 --batches 256 --reps 1 --warmup 0 --no-profile --check-images 0 --out ncu.csv > ncu-v44-b256.csv 2> ncu.err
python3 - >> $OUT/summary.md <<'PY'
import csv
rows=list(csv.reader(open('ncu-v44-b256.csv')))
hi=next((i for i,r in enumerate(rows) if 'Kernel Name' in r), None)
if hi is not None:
    h=rows[hi]
    for r in rows[hi+2:]:
        if len(r)!=len(h): continue
        d=dict(zip(h,r))
        print(f"\n## ncu, new, b256 {d['Kernel Name'][:80]}")
        for k in ['gpu__time_duration.sum','smsp__inst_executed.sum','smsp__issue_active.avg.pct_of_peak_sustained_active','sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active','launch__registers_per_thread']:
            print(f"- {k}: {d.get(k)}")
        st=[]
        for k,v in d.items():
            if k.startswith('smsp__average_warps_issue_stalled') and k.endswith('_per_issue_active.ratio'):
                try: st.append((float(v.replace(',','')),k))
                except: pass
        for v,k in sorted(st,reverse=True)[:5]: print(f"- stall {k.replace('smsp__average_warps_issue_stalled_','').replace('_per_issue_active.ratio','')}: {v}")
PY
echo "ncu done ($SECONDS s)"
timeout 240 $bin/test_gpu --gtest_brief=1 > test_gpu.log 2>&1; echo "test_gpu exit $?: $(grep -E '^\[  (PASSED|FAILED)' test_gpu.log | tr '\n' ' ')" >> $OUT/summary.md
grep -A3 'FAILED' test_gpu.log | head -20 >> $OUT/summary.md
F='*WgmmaHalf*:GpuS2d.*:*HalfSmallGrids*'
timeout 80 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 $bin/test_gpu --gtest_brief=1 --gtest_filter="$F" > memcheck.log 2>&1; echo "memcheck exit $?: $(grep -E 'ERROR SUMMARY|PASSED|FAILED' memcheck.log | tr '\n' ' ')" >> $OUT/summary.md
timeout 80 /usr/local/cuda/bin/compute-sanitizer --tool racecheck --print-limit 5 $bin/test_gpu --gtest_brief=1 --gtest_filter="$F" > racecheck.log 2>&1; echo "racecheck exit $?: $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED' racecheck.log | tr '\n' ' ')" >> $OUT/summary.md
echo "total $SECONDS s" >> $OUT/summary.md
tar cJf $OUT/raw.tar.xz ab test_gpu.log memcheck.log racecheck.log 2>/dev/null
cat $OUT/summary.md | head -150
