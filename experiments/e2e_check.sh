#!/usr/bin/env bash
# On the GPU machine: issue 13's end-to-end measurements and checks. Binaries come from .device/pack.tar.xz
# (scripts/pack_device.sh); everything goes to $OUT/e2e.tar.gz plus $OUT/e2e.txt (the device tool returns 8 files).
#   TESTS=1     GpuTransfers.* (overlapped, CUDA graphs), the trace check on cuda (plain, graph, overlapped), and
#               compute-sanitizer memcheck over GpuTransfers.*
#   BIG=1       AlexNet FP32 batch ${AB_BATCH:-1024}, cuda auto: resident vs overlapped (chunks $CHUNKS), pinned and
#               pageable; end-to-end median against the sum of its kernels
#   SMALL=1     AlexNet batch 1: resident vs --cuda-graph, default (end-to-end untraced, kernel sum from the separate
#               profiled passes), --profiled-passes timed, and --no-profile; PyTorch's eager and CUDA-graph forward in
#               the same run
#   OVERHEAD=1  the profiler's overhead at batch 1 and 64 (experiments/profiler_overhead.sh, ROUNDS rounds)
#   INPUTS="fp32 u8"  the --input-precision values BIG and SMALL run (default fp32); SMALL writes a --trace of the
#               default --cuda-graph run for each
set -uo pipefail
cd "$(dirname "$0")/.."
. experiments/device_env.sh
mkdir -p "$OUT" e2e
exec > >(tee "$OUT/e2e.txt") 2>&1
{ nvidia-smi -L; echo "binaries built from: $(cat .device/COMMIT)"; } | tee e2e/device.txt
step() { echo "== $1 ($(date +%T))"; }
alexnet_model
tuning=""  # the shipped H100 table (tuning tables refuse another device)
nvidia-smi -L | grep -q H100 && tuning="--tuning experiments/tuning/h100-alexnet.json"

# kernels: the sum of the kernel categories of a CSV's warm row; e2e: its median total (the timed passes, untraced on GPU
# backends since --profiled-passes separate); profiled: the median of the passes the breakdown comes from
summary() {  # CSV label
  /usr/bin/python3 - "$1" "$2" <<'PY'
import csv, sys
kern = ["conv", "pool", "fc", "act", "lrn", "softmax", "flatten", "other_kernel"]
for r in csv.DictReader(open(sys.argv[1])):
    if r["run"] != "warm": continue
    k = sum(float(r[c + "_ms"] or 0) for c in kern)
    tot = float(r["total_ms_median"])
    hid = r.get("copy_hidden_ms") or "0"
    print(f"{sys.argv[2]:38s} batch {r['batch']:>5s}  e2e p50 {tot:9.4f} ms  p99 {float(r['total_ms_p99']):9.4f}  kernels {k:9.4f} ms  "
          f"e2e/kernels {tot / k if k else float('nan'):6.3f}  htod {float(r['htod_ms'] or 0):7.3f}  dtoh {float(r['dtoh_ms'] or 0):6.3f}  "
          f"hidden copy {float(hid):7.3f}  profiled {float(r.get('breakdown_ms_median') or 'nan'):9.4f} ms  check {r['check']}")
PY
}

if [ "${TESTS:-1}" = 1 ]; then
  step "GPU tests: GpuTransfers.* and the breakdown tests"
  $bin/test_gpu --gtest_brief=1 --gtest_filter="${TEST_FILTER:-GpuTransfers.*:GpuSweep.*}" >e2e/test_gpu.log 2>&1
  echo "test_gpu exit $?"; grep -E "FAILED|PASSED|Failure|rel_l2|Expected" e2e/test_gpu.log | head -20
  step "trace check on cuda: plain, --cuda-graph, --transfers overlapped"
  for extra in "" "--cuda-graph" "--transfers overlapped --host-memory pinned" "--transfers overlapped --cuda-graph"; do
    python3 tests/trace/check_trace.py $bin/batchscope . --backend cuda $extra >e2e/trace-check.log 2>&1
    echo "trace check [$extra]: exit $? $(tail -1 e2e/trace-check.log)"
  done
  $bin/batchscope profile --model data/models/alexnet --backend cuda --batch 64 --cuda-graph $tuning --trace e2e/alexnet-b64-graph.trace.json \
    >e2e/alexnet-b64-graph.profile.txt 2>&1; echo "AlexNet b64 graph trace: exit $?"
  step "compute-sanitizer memcheck: GpuTransfers.*"
  compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 $bin/test_gpu --gtest_brief=1 \
    --gtest_filter='GpuTransfers.Overlapped*:GpuTransfers.Bad*' >e2e/memcheck.log 2>&1
  echo "memcheck exit $?"; grep -E "ERROR SUMMARY|FAILED" e2e/memcheck.log | tail -3
fi

if [ "${BIG:-1}" = 1 ]; then
  B=${AB_BATCH:-1024}
  step "AlexNet FP32 batch $B, cuda auto, resident vs overlapped"
  common="--model data/models/alexnet --backend cuda $tuning --batches $B --reps ${REPS:-7} --warmup 2 --check-images 1 --check-backend cpu"
  for ip in ${INPUTS:-fp32}; do
  sfx=$([ "$ip" = fp32 ] || echo "-in$ip")
  for h in pinned pageable; do
    $bin/batchscope sweep $common --input-precision $ip --host-memory $h --out e2e/big-resident-$h$sfx.csv >e2e/big-resident-$h$sfx.log 2>&1 || echo "resident $h $ip: exit $?"
    summary e2e/big-resident-$h$sfx.csv "resident, $h, input $ip"
    for c in ${CHUNKS:-0 128}; do
      $bin/batchscope sweep $common --input-precision $ip --host-memory $h --transfers overlapped $([ "$c" = 0 ] || echo --chunk $c) \
        --out e2e/big-overlapped-c$c-$h$sfx.csv >e2e/big-overlapped-c$c-$h$sfx.log 2>&1 || echo "overlapped $c $h $ip: exit $?"
      summary e2e/big-overlapped-c$c-$h$sfx.csv "overlapped, chunk $c ($h), input $ip"
    done
  done
  done
  $bin/batchscope sweep $common --host-memory pinned --transfers overlapped --cuda-graph --out e2e/big-overlapped-graph-pinned.csv \
    >e2e/big-overlapped-graph-pinned.log 2>&1 || echo "overlapped graph: exit $?"
  summary e2e/big-overlapped-graph-pinned.csv "overlapped+graph (pinned)"
  $bin/batchscope sweep $common --host-memory pinned --transfers overlapped --no-profile --out e2e/big-overlapped-noprof-pinned.csv \
    >e2e/big-overlapped-noprof-pinned.log 2>&1 || echo "overlapped noprof: exit $?"
  summary e2e/big-overlapped-noprof-pinned.csv "overlapped, unprofiled (pinned)"
fi

if [ "${SMALL:-1}" = 1 ]; then
  step "AlexNet FP32 batch 1, cuda auto: resident vs --cuda-graph (pinned): default, profiled timed passes, unprofiled"
  common="--model data/models/alexnet --backend cuda $tuning --batches 1 --reps ${SMALL_REPS:-300} --warmup 30 --check-images 1 --check-backend cpu --host-memory pinned"
  for ip in ${INPUTS:-fp32}; do
  for g in "" "--cuda-graph"; do
    for p in "" "--profiled-passes timed" "--no-profile"; do
      name=small$(echo "$g$p" | tr -d ' -')$([ "$ip" = fp32 ] || echo "-in$ip")
      trace=$([ "$g" = --cuda-graph ] && [ -z "$p" ] && echo "--trace e2e/$name.trace.json")
      $bin/batchscope sweep $common --input-precision $ip $g $p $trace --out e2e/$name.csv >e2e/$name.log 2>&1 || echo "$name: exit $?"
      summary e2e/$name.csv "batch 1 ${g:-eager} ${p:-default} in $ip"
    done
  done
  done
  step "PyTorch, same run: fp32 eager and CUDA-graph replay (batch 1), fp32 eager (batch ${AB_BATCH:-1024})"
  timeout 300 python3 experiments/pytorch_alexnet.py --batches 1,${AB_BATCH:-1024} --modes fp32,fp32-graph --reps 100 --warmup 10 \
    --json e2e/pytorch.json >e2e/pytorch.txt 2>&1; echo "pytorch: exit $?"; cat e2e/pytorch.txt
fi

if [ "${OVERHEAD:-1}" = 1 ]; then
  step "profiler overhead (ECE 408, batch 1 and 64, ${ROUNDS:-5} rounds)"
  OUT=e2e ROUNDS=${ROUNDS:-5} bash experiments/profiler_overhead.sh 2>&1 | grep -v "^round"
fi
tar czf "$OUT/e2e.tar.gz" e2e
