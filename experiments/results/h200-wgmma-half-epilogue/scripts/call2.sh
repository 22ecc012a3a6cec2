# Call 2 (binaries of e12263b + the uncommitted BS_S2D_INNER probe switch): conv1's inner version v44 (auto) against
# v65 (BS_S2D_INNER=65) in one binary, 2 rounds alternating, fp16 / bf16 at 4-1,024 images, every point checked; ncu on
# v65 at 256 images; the wgmma-half / s2d tests (v65 in the epilogue test's list) with memcheck and racecheck; and
# GpuSweep.BreakdownHasCopiesAndKernelsAndSumsToItsPasses, which failed once in call 1's whole test_gpu, 5 times.
set -uo pipefail
. experiments/device_env.sh
record_device; python3 experiments/results/h200-pdl-probe/scripts/gen_weights.py data/models/alexnet
SECONDS=0
mkdir -p ab
COMMON="--model data/models/alexnet --backend cuda --reps 20 --warmup 3 --host-memory pinned --check-images 1 --check-backend cpu"
for r in 1 2; do
  order="base new"; [ $r = 2 ] && order="new base"
  for w in $order; do for p in fp16 bf16; do
    if [ $w = new ]; then export BS_S2D_INNER=65; fi
    $bin/batchscope sweep $COMMON --batches 4,16,32,128,1024 --precision $p --out ab/$w-$p-r$r.csv > ab/$w-$p-r$r.log 2>&1 || echo "$w $p exit $?"
    unset BS_S2D_INNER
  done; done
  echo "round $r ($SECONDS s)"
done
{ echo "## conv1's inner v44 (base) -> v65 (new), kernels"; python3 experiments/ab_compare.py ab | grep -v missing
  python3 experiments/ab_compare.py ab conv1 | awk '/base ms, conv1 /{p=1} p' | grep -v missing | tail -n +3 | sed 's/^/conv1 /'
} > $OUT/summary.md 2>&1
BS_S2D_INNER=65 timeout 60 /usr/local/cuda/bin/ncu --clock-control none --set full --page raw --csv --kernel-name regex:'wgmma_kernel' --launch-count 1 \
  $bin/batchscope sweep --model data/models/alexnet --backend cuda --precision fp16 --batches 256 --reps 1 --warmup 0 --no-profile --check-images 0 --out ncu.csv > ncu-v65-b256.csv 2> ncu.err
python3 - >> $OUT/summary.md <<'PY'
import csv
rows=list(csv.reader(open('ncu-v65-b256.csv')))
hi=next((i for i,r in enumerate(rows) if 'Kernel Name' in r), None)
if hi is None: print("ncu: no table")
else:
    h=rows[hi]
    for r in rows[hi+2:]:
        if len(r)!=len(h): continue
        d=dict(zip(h,r))
        print(f"\n## ncu, conv1's inner at 256 images: {d['Kernel Name'][:80]}")
        for k in ['gpu__time_duration.sum','smsp__inst_executed.sum','smsp__issue_active.avg.pct_of_peak_sustained_active','sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active','launch__registers_per_thread','launch__occupancy_limit_shared_mem','sm__warps_active.avg.pct_of_peak_sustained_active']:
            print(f"- {k}: {d.get(k)}")
        st=[]
        for k,v in d.items():
            if k.startswith('smsp__average_warps_issue_stalled') and k.endswith('_per_issue_active.ratio'):
                try: st.append((float(v.replace(',','')),k))
                except: pass
        for v,k in sorted(st,reverse=True)[:5]: print(f"- stall {k.replace('smsp__average_warps_issue_stalled_','').replace('_per_issue_active.ratio','')}: {v}")
PY
echo "ncu done ($SECONDS s)"
F='*WgmmaHalf*:GpuS2d.*:*HalfSmallGrids*'
timeout 60 $bin/test_gpu --gtest_brief=1 --gtest_filter="$F" > tests.log 2>&1; echo "tests ($F) exit $?: $(grep -E '^\[  (PASSED|FAILED)' tests.log | tr '\n' ' ')" >> $OUT/summary.md
timeout 60 $bin/test_gpu --gtest_brief=1 --gtest_filter='GpuSweep.BreakdownHasCopiesAndKernelsAndSumsToItsPasses' --gtest_repeat=5 > breakdown.log 2>&1; echo "breakdown x5 exit $?: $(grep -cE '^\[  FAILED  \] GpuSweep' breakdown.log) failed runs; $(grep -A4 'Failure' breakdown.log | head -12 | tr '\n' ' ')" >> $OUT/summary.md
timeout 70 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 $bin/test_gpu --gtest_brief=1 --gtest_filter='*WgmmaHalf*' > memcheck.log 2>&1; echo "memcheck exit $?: $(grep -E 'ERROR SUMMARY|PASSED|FAILED' memcheck.log | tr '\n' ' ')" >> $OUT/summary.md
timeout 70 /usr/local/cuda/bin/compute-sanitizer --tool racecheck --print-limit 5 $bin/test_gpu --gtest_brief=1 --gtest_filter='*WgmmaHalf*' > racecheck.log 2>&1; echo "racecheck exit $?: $(grep -E 'RACECHECK SUMMARY|PASSED|FAILED' racecheck.log | tr '\n' ' ')" >> $OUT/summary.md
echo "total $SECONDS s" >> $OUT/summary.md
tar cJf $OUT/raw.tar.xz ab tests.log breakdown.log memcheck.log racecheck.log 2>/dev/null
cat $OUT/summary.md
