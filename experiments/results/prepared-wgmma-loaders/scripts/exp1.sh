# The exploration the fifteenth session planned for its first call (no device was lent): where the small-batch passes
# around the convolutions spend their time, on any binaries. Needs .probe/f16_split_rate (built here: the probe's header
# says how) carried with the pack.
set -uo pipefail
. experiments/device_env.sh
record_device; alexnet_model
BS=$bin/batchscope
SECONDS=0
mkdir -p tr
for p in fp16 fp32; do
  for b in 1 4 8 16; do
    $BS sweep --model data/models/alexnet --backend cuda --precision $p --batches $b --reps 20 --warmup 3 --host-memory pinned \
      --check-images 0 --trace tr/$p-b$b.json --out tr/$p-b$b.csv > tr/$p-b$b.log 2>&1 || echo "trace $p $b: exit $?"
  done
done
echo "traces ($SECONDS s)"
python3 - tr > $OUT/trace.md <<'PY'
# the trace (batchscope sweep --trace) holds the first warm run: its kernels are the events of a kernel category
import glob, json, os, sys
KINDS = {"conv", "fc", "lrn", "pool", "act", "softmax", "flatten", "other_kernel", "memset", "dtod"}
for p in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    ev = sorted((e for e in json.load(open(p))["traceEvents"] if e.get("ph") == "X" and e.get("cat") in KINDS), key=lambda e: e["ts"])
    print(f"## {os.path.basename(p)}\n\n| # | kind | kernel | us |\n|---:|---|---|---:|")
    for i, e in enumerate(ev):
        print(f"| {i} | {e['cat']} | {e['name'][:70]} | {e['dur']:.2f} |")
    print(f"| | | **sum** | **{sum(e['dur'] for e in ev):.1f}** |\n")
PY
head -c 6000 $OUT/trace.md
.probe/f16_split_rate --batches=1,4,8,16,32 > $OUT/split.txt 2>&1; echo "probe exit $? ($SECONDS s)"
grep -v bands $OUT/split.txt | head -60
for p in fp32 fp16; do
  ncu --clock-control none --set full --kernel-name "regex:split_fused|lrn_walk|conv_splitk_reduce|lrn_pool_half|s2d_kernel|pool_kernel|from_nhwc|to_nhwc|splitk_reduce" \
    --launch-count 14 $BS sweep --model data/models/alexnet --backend cuda --precision $p --batches 16 --reps 1 --warmup 0 \
    --no-profile --check-images 0 --out /tmp/n.csv > $OUT/ncu-$p-b16.txt 2>&1; echo "ncu $p exit $? ($SECONDS s)"
done
ncu --clock-control none --set full --kernel-name "regex:wgmma_kernel" --launch-skip 2 --launch-count 1 $BS sweep --model data/models/alexnet \
  --backend cuda --precision fp16 --batches 16 --reps 1 --warmup 0 --no-profile --check-images 0 --out /tmp/n.csv > $OUT/ncu-conv3-fp16-b16.txt 2>&1
echo "ncu conv3 exit $? ($SECONDS s)"
for f in $OUT/ncu-*.txt; do echo "== $f"; grep -E "^  [a-z_:]+.*\(|Duration|DRAM Throughput|L2 Cache Throughput|Issue Slots Busy|Eligible Warps|Achieved Occupancy" $f | cut -c1-140 | head -80; done
tar czf $OUT/tr.tgz tr
