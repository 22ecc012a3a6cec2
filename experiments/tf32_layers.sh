#!/usr/bin/env bash
# On the GPU machine: AlexNet (synthetic weights, seed 1) with --precision tf32 (PRECISION), one sweep per forced convolution
# version (VARIANTS, default "23 24 25 17") and cudnn tf32, resident, pinned; prints each layer's warm median per
# batch (BATCHES, default 128,1024) and the kernel sum, so that versions compare layer by layer in one run.
# PRECISION=fp32 CUDNN_EXTRA="--cudnn-algos exact" compares the FP32 versions with cuDNN's exact algorithms.
set -uo pipefail
cd "$(dirname "$0")/.."
. experiments/device_env.sh
alexnet_model
P=${PRECISION:-tf32}
common="--model data/models/alexnet --precision $P --batches ${BATCHES:-128,1024} --reps ${REPS:-5} --warmup 2 --host-memory pinned --check-images 1 --check-backend cpu"
for v in ${VARIANTS:-23 24 25 17}; do
  timeout 300 "$bin/batchscope" sweep $common --backend cuda --conv-variant $v ${FC:+--fc-variant $FC} --out "$OUT/$P-v$v.csv" >"$OUT/$P-v$v.log" 2>&1
  echo "cuda $P v$v: exit $? $(grep -h 'error' "$OUT/$P-v$v.log" | head -1)"
done
[ "${CUDNN:-1}" = 1 ] && { timeout 300 "$bin/batchscope" sweep $common --backend cudnn ${CUDNN_EXTRA:-} --out "$OUT/$P-cudnn.csv" >"$OUT/$P-cudnn.log" 2>&1; echo "cudnn $P: exit $?"; }
python3 - "$OUT" "$P" <<'PY'
import csv, glob, os, sys, collections
out, p = sys.argv[1], sys.argv[2]
for f in sorted(glob.glob(os.path.join(out, p + "-*.layers.csv"))):
    rows = [r for r in csv.DictReader(open(f)) if r["run"] == "warm"]
    by = collections.defaultdict(list)
    for r in rows: by[int(r["batch"])].append(r)
    for b, rs in sorted(by.items()):
        parts = [f'{r["layer"]}={float(r["median_ms"]):.2f}' for r in rs if r["type"] not in ("h2d", "d2h") and float(r["median_ms"]) > 0.005]
        print(os.path.basename(f).replace(".layers.csv", ""), "b", b, " ".join(parts))
for f in sorted(glob.glob(os.path.join(out, p + "-*.csv"))):
    if f.endswith(".layers.csv"): continue
    for r in csv.DictReader(open(f)):
        if r.get("run") == "warm":
            kern = sum(float(r[k]) for k in ("conv_ms", "pool_ms", "fc_ms", "act_ms", "lrn_ms", "softmax_ms", "flatten_ms", "other_kernel_ms"))
            print(f'{os.path.basename(f)} b {r["batch"]}: kernels {kern:.3f} ms (conv {float(r["conv_ms"]):.3f}) check {r["check"]} {r["check_rel_l2"]}')
PY
