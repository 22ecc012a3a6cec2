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
import glob, json, os, sys, collections
for p in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    t = json.load(open(p))
    ev = [e for e in t["traceEvents"] if e.get("ph") == "X" and e.get("args", {}).get("type") == "kernel"]
    pids = sorted({e["pid"] for e in ev})
    # per kernel name: median duration over the warm runs (pids after the first)
    per = collections.defaultdict(list)
    order = []
    for pid in pids[1:]:
        k = sorted((e for e in ev if e["pid"] == pid), key=lambda e: e["ts"])
        for i, e in enumerate(k):
            key = (i, e["args"].get("layer", ""), e["name"][:70])
            if key not in per: order.append(key)
            per[key].append(e["dur"])
    tot = 0
    print(f"## {os.path.basename(p)}: {len(pids)} runs\n\n| # | layer | kernel | median us |\n|---:|---|---|---:|")
    for key in order:
        v = sorted(per[key]); m = v[len(v) // 2]; tot += m
        print(f"| {key[0]} | {key[1]} | {key[2]} | {m:.2f} |")
    print(f"| | | **sum** | **{tot:.1f}** |\n")
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
