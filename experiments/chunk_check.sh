#!/usr/bin/env bash
# On the GPU machine: which chunking `--transfers overlapped` should default to, now that the tuned kernels run some
# chunk sizes less efficiently than the whole batch. AlexNet FP32 (cuda auto, shipped H100 table), pinned, for each
# --input-precision in INPUTS and each batch in BATCHES: resident, overlapped with the default chunks, and overlapped
# with fixed chunks of a half and a quarter of the batch. Prints end to end, the run's kernel sum, and end to end
# against the resident run's kernel sum (the unchunked batch's). Binaries from .device/pack.tar.xz
# (PACK="batchscope batchscope-weights"); logs to $OUT/chunks.txt and $OUT/chunks.tar.gz.
set -uo pipefail
cd "$(dirname "$0")/.."
. experiments/device_env.sh
mkdir -p "$OUT" chunks
exec > >(tee "$OUT/chunks.txt") 2>&1
nvidia-smi -L; echo "binaries built from: $(head -c 60 .device/COMMIT)"
alexnet_model
tuning=""
nvidia-smi -L | grep -q H100 && tuning="--tuning experiments/tuning/h100-alexnet.json"
row() {  # CSV label unchunked-kernel-ms
  /usr/bin/python3 - "$@" <<'PY'
import csv, sys
kern = ["conv", "pool", "fc", "act", "lrn", "softmax", "flatten", "other_kernel"]
for r in csv.DictReader(open(sys.argv[1])):
    if r["run"] != "warm": continue
    k = sum(float(r[c + "_ms"] or 0) for c in kern)
    tot = float(r["total_ms_median"])
    base = float(sys.argv[3]) if len(sys.argv) > 3 else k
    print(f"{sys.argv[2]:34s} e2e {tot:8.3f} ms  kernels {k:8.3f}  e2e/kernels {tot / k:5.3f}  e2e/unchunked {tot / base:5.3f}  check {r['check']}")
    print(f"KERNELS {k}", file=open("chunks/last_kernels", "w"))
PY
}
for ip in ${INPUTS:-fp32 u8}; do
  for b in ${BATCHES:-256 512 1024}; do
    echo "== input $ip, batch $b ($(date +%T))"
    common="--model data/models/alexnet --backend cuda $tuning --batches $b --reps ${REPS:-7} --warmup 2 --host-memory pinned --input-precision $ip"
    $bin/batchscope sweep $common --out chunks/res-$ip-$b.csv >chunks/res-$ip-$b.log 2>&1 || echo "resident: exit $?"
    row chunks/res-$ip-$b.csv "resident"
    base=$(awk '{print $2}' chunks/last_kernels)
    for c in 0 $((b / 2)) $((b / 4)); do
      $bin/batchscope sweep $common --transfers overlapped $([ "$c" = 0 ] || echo --chunk $c) --out chunks/ov$c-$ip-$b.csv \
        >chunks/ov$c-$ip-$b.log 2>&1 || echo "overlapped $c: exit $?"
      row chunks/ov$c-$ip-$b.csv "overlapped $([ "$c" = 0 ] && echo default || echo "chunk $c")" "$base"
    done
  done
done
tar czf "$OUT/chunks.tar.gz" chunks
