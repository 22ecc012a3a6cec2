#!/usr/bin/env bash
# On the GPU machine: issue 32's small-batch measurements (scripts/pack_device.sh first; PACK="batchscope
# batchscope-weights" is enough). Steps (switches):
#   FC=1    AlexNet (synthetic weights, seed 1) in fp16 and bf16 at batches 1, 2, 4, 8, 16, resident, pinned: the fully
#           connected layers forced to v13 (the GEMM engine, auto's choice before v14) and to v14 (stream-half), and auto;
#           kernel time and per-layer times, ROUNDS rounds (default 2) alternating the order; every point checked on 1 image
#           against the cpu backend: fc_stream.md (experiments/batch1_summary.py); FC_VERSIONS (default "13 14 auto"),
#           FC_BATCHES (default 1,2,4,8,16) and FC_PRECISIONS (default "fp16 bf16") change what is forced
#   AB=1    fc v14 (AB_FC) of these binaries against .device/base.tar.xz's (scripts/pack_device.sh of the commit before),
#           fp16 and bf16 (AB_PRECISIONS), batches 1, 2, 4 (AB_BATCHES), ROUNDS rounds alternating (AB_ARGS: more sweep
#           flags, e.g. --cuda-graph or --weights int8): fc_ab.md
#   E2E=1   end to end at batch 1 and 16 with --cuda-graph (pinned), fp32 and fp16: the warm total against the kernels and
#           the input copy of the same sweep's profiled passes: e2e.md. E2E_COPIES="engine kernel": each --copies mode,
#           E2E_ROUNDS rounds (default 1), the order alternating
#   INT8=1  --weights int8 against native weights, auto, fp32, fp16 and bf16 at batches 1, 2, 4, 8, 16 (files -fcw8- and
#           -fcauto-: the summary's columns w8 and auto), ROUNDS rounds alternating, checked on 4 images against the cpu
#           backend on the same quantised weights: int8.md; and what quantisation changes (ACC, below)
#   ACC=1   accuracy of --weights int8: ECE 408 Correctness over its 10,000 images (fp32, fp16; native and int8), and
#           AlexNet's logits over 256 random pixel-like images (infer --input/--output) native against int8: accuracy.md
#   CONV=1  the convolution versions forced, each against its split-K-in-a-cluster twin (conv v48-v50): fp32 v14 / v49,
#           tf32 v18 / v50, fp16 and bf16 v21 / v48, and auto (CONV_PRECISIONS, CONV_BATCHES: default 1,2,4,8,16), ROUNDS
#           rounds alternating, checked on 1 image against the cpu backend: conv.md (the summary's convs column)
#   TRACE=1 one sweep per precision (TRACE_PRECISIONS) at batch 1 with --trace (TRACE_ARGS: more sweep flags, TRACE_TAG:
#           a file suffix for them): every kernel of the first warm pass and its
#           duration, from the trace (trace.md), to see what a layer's time is made of (a split-K reduction kernel, ...)
#   PEERS=1 PyTorch in the same call (experiments/pytorch_alexnet.py): batches 1 and 16, fp32, fp32 replayed from a CUDA
#           graph, fp16 channels-last: pytorch.txt
set -uo pipefail
cd "$(dirname "$0")/.."
source experiments/device_env.sh
BS=$bin/batchscope
record_device
alexnet_model
mkdir -p b1
# The labels in the order a round runs them: as given in odd rounds, reversed in even ones. alternate ROUND LABEL...
alternate() {
  local round=$1; shift
  if [ $((round % 2)) = 0 ]; then echo "$@" | tr ' ' '\n' | tac | tr '\n' ' '; else echo "$@"; fi
}
# One AlexNet sweep with a version forced, 20 reps, checked on 1 image, into DIR/PRECISION-LABEL-rROUND.csv:
# forced_sweep DIR PRECISION FLAG VERSION LABEL BATCHES ROUND
forced_sweep() {
  local d=$1 p=$2 flag=$3 v=$4 label=$5 batches=$6 round=$7
  "$BS" sweep --model data/models/alexnet --backend cuda --precision "$p" "$flag" "$v" --batches "$batches" --reps 20 --warmup 3 \
    --host-memory pinned --check-images 1 --check-backend cpu --out "$d/$p-$label-r$round.csv" >"$d/$p-$label-r$round.log" 2>&1 ||
    echo "$p $label round $round: exit $? $(grep -h error "$d/$p-$label-r$round.log" | head -1)"
}
if [ "${FC:-0}" = 1 ]; then
  for round in $(seq 1 "${ROUNDS:-2}"); do
    order=$(alternate $round ${FC_VERSIONS:-13 14 auto})
    for p in ${FC_PRECISIONS:-fp16 bf16}; do
      for fc in $order; do
        forced_sweep b1 $p --fc-variant $fc fc$fc "${FC_BATCHES:-1,2,4,8,16}" $round
      done
    done
  done
  python3 experiments/batch1_summary.py b1 >"$OUT/fc_stream.md"; cat "$OUT/fc_stream.md"
  tar czf "$OUT/b1.tgz" b1
fi
if [ "${AB:-0}" = 1 ]; then
  mkdir -p ab1
  fc_point() {  # ROUND WHO
    for p in ${AB_PRECISIONS:-fp16 bf16}; do
      bs_of $2 sweep --model data/models/alexnet --backend cuda --precision $p --fc-variant ${AB_FC:-14} --batches ${AB_BATCHES:-1,2,4} \
        --reps 20 --warmup 3 --host-memory pinned --check-images 1 --check-backend cpu ${AB_ARGS:-} \
        --out "ab1/$p-fc${AB_FC:-14}$2-r$1.csv" >"ab1/$p-fc${AB_FC:-14}$2-r$1.log" 2>&1 || echo "$2 $p round $1: exit $?"
    done
  }
  ab_rounds fc_point
  python3 experiments/batch1_summary.py ab1 >"$OUT/fc_ab.md"; cat "$OUT/fc_ab.md"
  tar czf "$OUT/ab1.tgz" ab1
fi
if [ "${E2E:-0}" = 1 ]; then
  mkdir -p e2e1
  for round in $(seq 1 "${E2E_ROUNDS:-1}"); do
    order=$(alternate $round ${E2E_COPIES:-engine})
    for c in $order; do
      for p in fp32 fp16; do
        "$BS" sweep --model data/models/alexnet --backend cuda --precision $p --cuda-graph --copies $c --batches 1,16 --reps 300 --warmup 30 \
          --host-memory pinned --check-images 1 --check-backend cpu --out "e2e1/$p-$c-graph-r$round.csv" >"e2e1/$p-$c-graph-r$round.log" 2>&1 ||
          echo "e2e $p $c round $round: exit $?"
      done
    done
  done
  python3 - e2e1 >"$OUT/e2e.md" <<'PY'
import csv, glob, os, sys
K = ["conv_ms", "pool_ms", "fc_ms", "act_ms", "lrn_ms", "softmax_ms", "flatten_ms", "other_kernel_ms"]
print("| precision | copies | round | batch | end to end ms (warm median) | p99 ms | kernels ms | input copy ms | output copy ms | end to end / (kernels + copy) | check |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
for p in sorted(q for q in glob.glob(os.path.join(sys.argv[1], "*-graph-r*.csv")) if not q.endswith(".layers.csv")):
    copies, rnd = os.path.basename(p).split("-")[1], os.path.basename(p).rsplit("-r", 1)[1][:-4]
    for r in csv.DictReader(open(p)):
        if r["run"] != "warm":
            continue
        k, h, t = sum(float(r[c] or 0) for c in K), float(r["htod_ms"] or 0), float(r["total_ms_median"])
        print(f"| {r['precision']} | {copies} | {rnd} | {r['batch']} | {t:.4f} | {float(r['total_ms_p99']):.4f} | {k:.4f} | {h:.4f} | "
              f"{float(r['dtoh_ms'] or 0):.4f} | {t / (k + h):.3f} | {r['check']} |")
PY
  cat "$OUT/e2e.md"
  tar czf "$OUT/e2e1.tgz" e2e1
fi
if [ "${INT8:-0}" = 1 ]; then
  mkdir -p w8
  for round in $(seq 1 "${ROUNDS:-2}"); do
    order=$(alternate $round auto w8)
    for p in fp32 fp16 bf16; do
      for w in $order; do
        wf=native; [ $w = w8 ] && wf=int8
        "$BS" sweep --model data/models/alexnet --backend cuda --precision $p --weights $wf --batches 1,2,4,8,16 --reps 20 \
          --warmup 3 --host-memory pinned --check-images 4 --check-backend cpu --out "w8/$p-fc$w-r$round.csv" \
          >"w8/$p-fc$w-r$round.log" 2>&1 || echo "$p $w round $round: exit $? $(grep -h error "w8/$p-fc$w-r$round.log" | head -1)"
      done
    done
  done
  python3 experiments/batch1_summary.py w8 >"$OUT/int8.md"
  grep -h "int8 weights" w8/*-r1.log >>"$OUT/int8.md"
  cat "$OUT/int8.md"
  tar czf "$OUT/w8.tgz" w8
fi
if [ "${ACC:-0}" = 1 ]; then
  mkdir -p acc
  for p in fp32 fp16; do
    for w in native int8; do
      echo "ece408 $p $w: $("$BS" infer --model ece408 --backend cuda --precision $p --weights $w --batch 1000 2>/dev/null | grep Correctness)"
    done
  done >"$OUT/accuracy.md"
  # 256 images of pixel-like values (uniform, the channel means taken off), seed 5
  /usr/bin/env python3 -c "import numpy as np; np.save('acc/x.npy', np.random.default_rng(5).uniform(-125, 130, (256, 3, 227, 227)).astype(np.float32))"
  for p in fp32 fp16; do
    for w in native int8; do
      "$BS" infer --model data/models/alexnet --backend cuda --precision $p --weights $w --input acc/x.npy --batch 64 \
        --output "acc/alexnet-$p-$w.npy" >"acc/alexnet-$p-$w.log" 2>&1 || echo "alexnet $p $w: exit $?" >>"$OUT/accuracy.md"
    done
  done
  /usr/bin/env python3 - acc >>"$OUT/accuracy.md" <<'PY'
import sys, numpy as np
d = sys.argv[1]
ref = np.load(f"{d}/alexnet-fp32-native.npy").astype(np.float64)
for p in ("fp32", "fp16"):
    for w in ("native", "int8"):
        if (p, w) == ("fp32", "native"):
            continue
        x = np.load(f"{d}/alexnet-{p}-{w}.npy").astype(np.float64)
        rel = np.linalg.norm(x - ref) / np.linalg.norm(ref)
        top1 = float(np.mean(x.argmax(1) == ref.argmax(1)))
        top5 = float(np.mean([ref[i].argmax() in np.argsort(-x[i])[:5] for i in range(len(x))]))
        print(f"alexnet {p} {w} vs fp32 native, {len(x)} images: rel. L2 {rel:.3e}, top-1 agreement {top1:.4f}, fp32's top-1 in the top 5 {top5:.4f}")
PY
  cat "$OUT/accuracy.md"
fi
if [ "${CONV:-0}" = 1 ]; then
  mkdir -p cv
  pairs() { case $1 in fp32) echo "14 49" ;; tf32) echo "18 50" ;; *) echo "21 48" ;; esac; }
  for round in $(seq 1 "${ROUNDS:-2}"); do
    for p in ${CONV_PRECISIONS:-fp32 tf32 fp16 bf16}; do
      order="$(pairs $p) auto"; [ $((round % 2)) = 0 ] && order="auto $(pairs $p | awk '{print $2, $1}')"
      for v in $order; do
        forced_sweep cv $p --conv-variant $v conv$v ${CONV_BATCHES:-1,2,4,8,16} $round
      done
    done
  done
  python3 experiments/batch1_summary.py cv >"$OUT/conv.md"; cat "$OUT/conv.md"
  tar czf "$OUT/cv.tgz" cv
fi
if [ "${TRACE:-0}" = 1 ]; then
  mkdir -p tr
  for p in ${TRACE_PRECISIONS:-fp32 fp16}; do
    "$BS" sweep --model data/models/alexnet --backend cuda --precision $p --batches 1 --reps 20 --warmup 3 --host-memory pinned \
      --check-images 0 ${TRACE_ARGS:-} --trace "tr/$p${TRACE_TAG:-}.json" --out "tr/$p${TRACE_TAG:-}.csv" >"tr/$p${TRACE_TAG:-}.log" 2>&1 ||
      echo "trace $p: exit $?"
  done
  python3 - tr >"$OUT/trace.md" <<'PY'
import glob, json, os, sys
for p in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    t = json.load(open(p))
    ev = [e for e in t["traceEvents"] if e.get("ph") == "X" and e.get("args", {}).get("type") == "kernel"]
    for pid in sorted({e["pid"] for e in ev}):
        k = sorted((e for e in ev if e["pid"] == pid), key=lambda e: e["ts"])
        print(f"## {os.path.basename(p)}, run {pid}: {len(k)} kernels, {sum(e['dur'] for e in k):.1f} us summed, first start to "
              f"last end {max(e['ts'] + e['dur'] for e in k) - k[0]['ts']:.1f} us\n")
        print("| start us | duration us | layer | kernel |\n|---:|---:|---|---|")
        for e in k:
            print(f"| {e['ts'] - k[0]['ts']:.1f} | {e['dur']:.2f} | {e['args'].get('layer', '')} | {e['name'][:90]} |")
        print()
PY
  cat "$OUT/trace.md"
  tar czf "$OUT/tr.tgz" tr
fi
if [ "${PEERS:-0}" = 1 ]; then
  python3 experiments/pytorch_alexnet.py --batches 1,16 --modes fp32,fp32-graph,fp16-cl --reps 50 --warmup 5 \
    --json "$OUT/pytorch.json" >"$OUT/pytorch.txt" 2>&1
  cat "$OUT/pytorch.txt"
fi
