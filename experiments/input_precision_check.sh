#!/usr/bin/env bash
# On the GPU machine: --input-precision fp16 / bf16 (the host holds the input as 16-bit values) against the default
# (FP32 copied, converted on the device inside the first layer). ECE 408 infer (layer times, Correctness) and AlexNet
# fp16 sweeps at batches 1 and 1024: resident and overlapped, pinned and pageable. Logs and CSVs under $OUT/ip,
# packed into $OUT/ip.tar.gz; the summary (total and host-to-device copy, ms) in $OUT/ip.txt.
# Binaries: PACK="batchscope batchscope-weights" scripts/pack_device.sh.
set -uo pipefail
cd "$(dirname "$0")/.."
. experiments/device_env.sh
mkdir -p "$OUT/ip"
echo "binaries built from: $(cat .device/COMMIT)" >"$OUT/ip/device.txt"; nvidia-smi -L >>"$OUT/ip/device.txt"
alexnet_model
nvidia-smi -L | grep -q H100 && tuning="--tuning experiments/tuning/h100-alexnet.json"
for p in fp16 bf16; do
  for ip in fp32 $p; do
    echo "-- ece408 cuda $p input $ip"
    $bin/batchscope infer --model data/models/ece408 --backend cuda --precision $p --input-precision $ip --warmup 2 --reps 10 --layer-times 2>&1
  done
done >"$OUT/ip/ece408.txt"
for h in pinned pageable; do
  for t in resident overlapped; do
    for ip in fp32 fp16; do
      name=alexnet-fp16-$t-$h-in-$ip
      $bin/batchscope sweep --model data/models/alexnet --backend cuda ${tuning:-} --precision fp16 --input-precision $ip \
        --batches ${BATCHES:-1,1024} --reps ${REPS:-7} --warmup 2 --check-images 1 --check-backend cpu --host-memory $h \
        --transfers $t --out "$OUT/ip/$name.csv" >"$OUT/ip/$name.log" 2>&1 || echo "$name: exit $?"
    done
  done
done
{
  grep -E "^--|^Op Time|Correctness|new0,|new1," "$OUT/ip/ece408.txt" | cut -c1-120
  python3 - "$OUT/ip" <<'PY'
import csv, glob, os, sys
for f in sorted(g for g in glob.glob(os.path.join(sys.argv[1], "alexnet-*.csv")) if not g.endswith(".layers.csv")):
    for r in csv.DictReader(open(f)):
        if r["run"] != "warm": continue
        print(f"{os.path.basename(f)[:-4]:45s} batch {r['batch']:>5s} total {float(r['total_ms_median']):9.3f} ms  htod {float(r['htod_ms'] or 0):8.3f} ms"
              f"  kernels {sum(float(r[c + '_ms'] or 0) for c in ('conv', 'pool', 'fc', 'act', 'lrn', 'softmax', 'other_kernel')):8.3f} ms  {r['transfers']}  check {r['check']} l2 {r['check_rel_l2']}")
PY
} | tee "$OUT/ip.txt"
tar -C "$OUT" -czf "$OUT/ip.tar.gz" ip && rm -rf "$OUT/ip"
