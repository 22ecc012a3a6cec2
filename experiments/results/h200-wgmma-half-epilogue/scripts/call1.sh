# Call 1, four configurations in one pack: main 656a5f9 (base/), 44aa0a0 (mid/: the 16-bit wgmma epilogue's activation
# chosen once), ee4a849 (new: + FastDiv in the wgmma loaders and epilogues, + conv v65) with conv1's inner version as
# auto has it (v44), and the same binary with BS_S2D_INNER=65 (a probe switch, not committed: v38's inner v65 in v44's
# place).
# (a) AlexNet fp16 / bf16 kernels at 1-1,024 images, 2 rounds rotating, every point checked against the cpu backend;
# (b) ncu on conv1's wgmma kernel at 256 images (new, v44 and v65); (c) test_gpu whole (new), then memcheck and
# racecheck over the wgmma-half and s2d tests.
set -uo pipefail
. experiments/device_env.sh
record_device; python3 experiments/results/h200-pdl-probe/scripts/gen_weights.py data/models/alexnet
SECONDS=0
mkdir -p raw
COMMON="--model data/models/alexnet --backend cuda --reps 20 --warmup 3 --host-memory pinned --check-images 1 --check-backend cpu"
run_who() {
  local w=$1; shift
  case $w in
    main) bs_of base "$@" ;;
    mid) LD_LIBRARY_PATH=$PWD/.device/lib:$LD_LIBRARY_PATH .device/mid/batchscope "$@" ;;
    new) $bin/batchscope "$@" ;;
    new65) BS_S2D_INNER=65 $bin/batchscope "$@" ;;
  esac
}
W="main mid new new65"
for r in 1 2; do
  set -- $W; order=""; for i in 0 1 2 3; do j=$(( (i + r - 1) % 4 + 1 )); order="$order ${!j}"; done
  for w in $order; do for p in fp16 bf16; do
    run_who $w sweep $COMMON --batches 1,4,16,32,128,1024 --precision $p --out raw/$w-$p-r$r.csv > raw/$w-$p-r$r.log 2>&1 || echo "$w $p exit $?"
  done; done
  echo "round $r ($SECONDS s)"
done
pair() { local d=ab-$1-$2; mkdir -p $d; for f in raw/$1-*-r?.csv; do b=${f#raw/$1-}; cp $f $d/base-$b; cp ${f%.csv}.layers.csv $d/base-${b%.csv}.layers.csv; done
  for f in raw/$2-*-r?.csv; do b=${f#raw/$2-}; cp $f $d/new-$b; cp ${f%.csv}.layers.csv $d/new-${b%.csv}.layers.csv; done; }
for f in raw/*-r?.csv; do :; done
pair main mid; pair mid new; pair new new65; pair main new65
{ for d in ab-main-mid ab-mid-new ab-new-new65 ab-main-new65; do echo "## $d (base -> new), kernels"; python3 experiments/ab_compare.py $d | grep -v missing
    python3 experiments/ab_compare.py $d conv1 | awk '/base ms, conv1 /{p=1} p' | grep -v missing | tail -n +3 | sed 's/^/conv1 /'
    python3 experiments/ab_compare.py $d conv2,conv3,conv4,conv5 | awk '/base ms, conv2,conv3,conv4,conv5 /{p=1} p' | grep -v missing | tail -n +3 | sed 's/^/conv2-5 /'; echo; done
} > $OUT/summary.md 2>&1
echo "ab done ($SECONDS s)"
for w in new new65; do
  [ $w = new65 ] && export BS_S2D_INNER=65
  timeout 60 /usr/local/cuda/bin/ncu --clock-control none --set full --page raw --csv --kernel-name regex:'wgmma_kernel' --launch-count 1 \
    $bin/batchscope sweep --model data/models/alexnet --backend cuda --precision fp16 --batches 256 --reps 1 --warmup 0 --no-profile --check-images 0 --out ncu.csv > ncu-$w-b256.csv 2> ncu.err
  unset BS_S2D_INNER
done
python3 - >> $OUT/summary.md <<'PY'
import csv
for w in ('new', 'new65'):
    try: rows=list(csv.reader(open(f'ncu-{w}-b256.csv')))
    except OSError: continue
    hi=next((i for i,r in enumerate(rows) if 'Kernel Name' in r), None)
    if hi is None: print(f"ncu {w}: no table"); continue
    h=rows[hi]
    for r in rows[hi+2:]:
        if len(r)!=len(h): continue
        d=dict(zip(h,r))
        print(f"\n## ncu {w}, conv1 at 256 images: {d['Kernel Name'][:80]}")
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
timeout 200 $bin/test_gpu --gtest_brief=1 > test_gpu.log 2>&1; echo "test_gpu exit $?: $(grep -E '^\[  (PASSED|FAILED)|tests ran' test_gpu.log | tr '\n' ' ')" >> $OUT/summary.md
grep -A3 'FAILED' test_gpu.log | head -20 >> $OUT/summary.md
echo "test_gpu done ($SECONDS s)"
F='*WgmmaHalf*:GpuS2d.*:*HalfSmallGrids*'
timeout 70 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 $bin/test_gpu --gtest_brief=1 --gtest_filter="$F" > memcheck.log 2>&1; echo "memcheck exit $?: $(grep -E 'ERROR SUMMARY|PASSED|FAILED' memcheck.log | tr '\n' ' ')" >> $OUT/summary.md
timeout 70 /usr/local/cuda/bin/compute-sanitizer --tool racecheck --print-limit 5 $bin/test_gpu --gtest_brief=1 --gtest_filter="$F" > racecheck.log 2>&1; echo "racecheck exit $?: $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED' racecheck.log | tr '\n' ' ')" >> $OUT/summary.md
echo "total $SECONDS s" >> $OUT/summary.md
tar cJf $OUT/raw.tar.xz raw test_gpu.log memcheck.log racecheck.log 2>/dev/null
cat $OUT/summary.md | head -150
