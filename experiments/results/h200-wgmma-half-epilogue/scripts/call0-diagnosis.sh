# Call 2 (diagnosis, same binaries as call 1, BS_PDL unset: main's behaviour): where AlexNet's fp16 conv1 (v38: the
# space-to-depth repack, then the engine's wgmma kernel over the rewritten layer) spends its time at 16, 256 and 1,024
# images. (a) `profile` kernel tables at 16 and 1,024; (b) ncu --set full on conv1's two kernels (s2d_kernel and the
# first wgmma_kernel of a pass) at 16 and 256 images.
set -uo pipefail
. experiments/device_env.sh
record_device; python3 experiments/results/h200-pdl-probe/scripts/gen_weights.py data/models/alexnet
SECONDS=0
for b in 16 1024; do
  $bin/batchscope profile --model data/models/alexnet --backend cuda --precision fp16 --batch $b --warmup 3 > $OUT/profile-fp16-b$b.txt 2>&1 || echo "profile $b exit $?"
done
echo "profiles ($SECONDS s)"
for b in 16 256; do
  timeout 120 /usr/local/cuda/bin/ncu --clock-control none --set full --page raw --csv --kernel-name regex:'s2d_kernel|wgmma_kernel' --launch-count 2 \
    $bin/batchscope sweep --model data/models/alexnet --backend cuda --precision fp16 --batches $b --reps 1 --warmup 0 --no-profile --check-images 0 --out ncu$b.csv > $OUT/ncu-conv1-b$b.csv 2> ncu$b.err
  echo "ncu $b exit $? ($SECONDS s)"; tail -3 ncu$b.err
done
python3 - $OUT <<'PY'
import csv, sys, os
out = sys.argv[1]
keys = ["Kernel Name", "gpu__time_duration.sum", "launch__grid_size", "launch__block_size", "launch__registers_per_thread",
        "launch__occupancy_limit_registers", "launch__occupancy_limit_shared_mem", "sm__warps_active.avg.pct_of_peak_sustained_active",
        "sm__throughput.avg.pct_of_peak_sustained_elapsed", "sm__inst_executed_pipe_tensor_op_gmma.avg.pct_of_peak_sustained_active",
        "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active", "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
        "dram__throughput.avg.pct_of_peak_sustained_elapsed", "lts__throughput.avg.pct_of_peak_sustained_elapsed",
        "l1tex__throughput.avg.pct_of_peak_sustained_active", "smsp__issue_active.avg.pct_of_peak_sustained_active",
        "sm__cycles_active.avg", "gpc__cycles_elapsed.max"]
with open(os.path.join(out, "ncu-summary.md"), "w") as f:
    for b in ("16", "256"):
        p = os.path.join(out, f"ncu-conv1-b{b}.csv")
        try:
            rows = list(csv.reader(open(p)))
        except OSError:
            continue
        hi = next((i for i, r in enumerate(rows) if "Kernel Name" in r), None)
        if hi is None:
            f.write(f"b{b}: no table\n"); continue
        h = rows[hi]
        for r in rows[hi + 2:]:
            if len(r) != len(h): continue
            d = dict(zip(h, r))
            f.write(f"## b{b} {d.get('Kernel Name','')[:120]}\n")
            for k in keys[1:]:
                if k in d: f.write(f"- {k}: {d[k]}\n")
            stalls = sorted(((float(v), k) for k, v in d.items() if k.startswith("smsp__average_warp_latency_issue_stalled") and k.endswith(".ratio") and v.replace('.', '', 1).isdigit()), reverse=True)[:8]
            for v, k in stalls: f.write(f"- stall {k.split('stalled_')[1]}: {v}\n")
PY
cat $OUT/ncu-summary.md | head -80
grep -E 'conv1|s2d|wgmma' $OUT/profile-fp16-b16.txt | head -20
echo "total $SECONDS s"
