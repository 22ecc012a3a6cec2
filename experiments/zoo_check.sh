#!/usr/bin/env bash
# On the GPU machine: issue 33's targets in one or two calls (scripts/pack_device.sh first; PACK="batchscope
# batchscope-weights" is enough). Steps (switches):
#   ONNX=1  the committed ONNX fixtures on cuda and cudnn (tests/onnx/check_onnx.py), and torchvision's AlexNet (opsets
#           9 and 17) and VGG-11 exported by PyTorch here (experiments/torch_onnx_export.py), imported and run on cpu,
#           cuda and cudnn (FP32) against PyTorch's CPU output: onnx.md
#   ZOO=1   every zoo network (ZOO_NETS) on cuda and cudnn in every precision (ZOO_PRECISIONS), batches ZOO_BATCHES
#           (default 1,64), each point checked on 2 images against the cpu backend: zoo.md; the sweeps' CSVs (with their
#           .layers.csv) in zoo_runs.tgz
#   PT=1    PyTorch on the same GPU (experiments/pytorch_alexnet.py --net): PT_NETS (default vgg16) at ZOO_BATCHES in
#           PT_MODES (default fp32,tf32,fp16-cl): pytorch-NET.txt and .json
#   HEUR=1  HEUR_NETS (default VGG-11 and VGG-16) at HEUR_BATCHES (default 1,64,256): tune (HEUR_PRECISIONS, default
#           fp32 fp16), then the kernel time of auto without a table (its heuristic) against auto with the tuned table,
#           HEUR_ROUNDS times alternating (default 1): heuristic.md. TUNE_ARGS narrows the candidates, TUNE_ARGS_<precision>
#           (e.g. TUNE_ARGS_fp32) for one precision (VGG-16 fp32: without the naive versions 1-6, which take 0.3-0.6 s
#           a layer at batch 256 and put the whole tune past 200 s). The tables are kept in heur_runs.tgz and
#           heur_tables.tgz. HEUR_SWEEPS=0: tune only; HEUR_TABLES=DIR: no tune, DIR/NET-PRECISION.json is the table
#   KINDS=1 the fixtures of the newer layer kinds (asympads: asymmetric padding; dilated; bnalone: BatchNormalization on
#           its own, v37 in 16 bits) on cuda and cudnn in every precision, batches 2 and 64, each point checked on 2
#           images against the cpu backend, with the plan of each (what runs): kinds.md
set -uo pipefail
cd "$(dirname "$0")/.."
source experiments/device_env.sh
BS=$bin/batchscope BW=$bin/batchscope-weights
export HOME=$PWD/.home  # no tuning table from an earlier run: auto without --tuning is the heuristic
mkdir -p "$HOME" zoo/models
record_device
step() { echo "== $1 ($(date +%T))" >&2; }
model() {  # the zoo network $1 in zoo/models/$1
  [ -f "zoo/models/$1/model.json" ] || "$BW" synthesize --model "$1" --seed 1 --out "zoo/models/$1" >/dev/null 2>&1 || echo "synthesize $1: FAILED"
}

if [ "${ONNX:-0}" = 1 ]; then
  step "ONNX fixtures on cuda and cudnn"
  python3 tests/onnx/check_onnx.py "$BS" "$BW" . cuda cudnn >"$OUT/onnx_fixtures.txt" 2>&1; tail -1 "$OUT/onnx_fixtures.txt"
  step "PyTorch exports"
  mkdir -p tv
  python3 experiments/torch_onnx_export.py tv >"$OUT/torch_export.txt" 2>&1; cat "$OUT/torch_export.txt"
  {
    echo "| file | backend | relative L2 against PyTorch (FP32, CPU) |"; echo "|---|---|---:|"
    for f in tv/*.onnx; do
      stem=$(basename "$f" .onnx); net=${stem%-opset*}
      if ! "$BW" import-onnx "$f" --out "tv/m-$stem" >"tv/$stem.import.txt" 2>&1; then
        echo "| $stem | import | FAILED: $(tail -1 "tv/$stem.import.txt") |"; continue
      fi
      for be in cpu-ref cpu cuda cudnn; do
        if "$BS" infer --model "tv/m-$stem" --backend $be --input "tv/$net.in.npy" --output "tv/$stem-$be.npy" >"tv/$stem-$be.txt" 2>&1; then
          echo "| $stem | $be | $(python3 experiments/zoo_summary.py rel "tv/$stem-$be.npy" "tv/$net.out.npy") |"
        else
          echo "| $stem | $be | FAILED: $(tail -1 "tv/$stem-$be.txt") |"
        fi
      done
    done
  } >"$OUT/onnx.md"
  cat "$OUT/onnx.md"
  cp tv/*.import.txt "$OUT/" 2>/dev/null
fi

if [ "${ZOO:-0}" = 1 ]; then
  mkdir -p zoo/runs
  for net in ${ZOO_NETS:-alexnet-torchvision zfnet vgg11 vgg16 ece408}; do
    model "$net"
    step "zoo $net"
    for be in cuda cudnn; do
      for p in ${ZOO_PRECISIONS:-fp32 tf32 fp16 bf16}; do
        timeout 200 "$BS" sweep --model "zoo/models/$net" --backend $be --precision $p --batches "${ZOO_BATCHES:-1,64}" --reps 3 \
          --warmup 1 --check-images 2 --check-backend cpu --host-memory pinned --out "zoo/runs/$net-$be-$p.csv" \
          >"zoo/runs/$net-$be-$p.log" 2>&1 || echo "$net $be $p: exit $? $(grep -h error "zoo/runs/$net-$be-$p.log" | head -1)"
      done
    done
  done
  python3 experiments/zoo_summary.py zoo zoo/runs >"$OUT/zoo.md"; cat "$OUT/zoo.md"
  tar czf "$OUT/zoo_runs.tgz" zoo/runs
fi

if [ "${PT:-0}" = 1 ]; then
  for net in ${PT_NETS:-vgg16}; do
    step "PyTorch $net"
    python3 experiments/pytorch_alexnet.py --net "$net" --batches "${ZOO_BATCHES:-1,64}" --modes "${PT_MODES:-fp32,tf32,fp16-cl}" \
      --json "$OUT/pytorch-$net.json" >"$OUT/pytorch-$net.txt" 2>&1 || echo "PyTorch $net: exit $?"
    cat "$OUT/pytorch-$net.txt"
  done
fi

if [ "${KINDS:-0}" = 1 ]; then
  step "layer kinds on cuda and cudnn"
  mkdir -p kinds/runs
  for fx in asympads dilated bnalone; do
    "$BW" import-onnx "tests/onnx/fixtures/$fx.onnx" --out "kinds/$fx" >/dev/null 2>&1 || echo "import $fx: FAILED"
    for be in cuda cudnn; do
      for p in fp32 tf32 fp16 bf16; do
        "$BS" plan --model "kinds/$fx" --backend $be --precision $p --batch 64 >"kinds/runs/$fx-$be-$p.plan.txt" 2>&1 || echo "plan $fx $be $p: exit $?"
        timeout 100 "$BS" sweep --model "kinds/$fx" --backend $be --precision $p --batches 2,64 --reps 3 --warmup 1 --check-images 2 \
          --check-backend cpu --out "kinds/runs/$fx-$be-$p.csv" >"kinds/runs/$fx-$be-$p.log" 2>&1 ||
          echo "$fx $be $p: exit $? $(grep -h error "kinds/runs/$fx-$be-$p.log" | head -1)"
      done
    done
  done
  python3 experiments/zoo_summary.py zoo kinds/runs >"$OUT/kinds.md"; cat "$OUT/kinds.md"
  tar czf "$OUT/kinds_runs.tgz" kinds/runs
fi

if [ "${HEUR:-0}" = 1 ]; then
  mkdir -p zoo/heur
  for net in ${HEUR_NETS:-vgg11 vgg16}; do
    model "$net"
    for p in ${HEUR_PRECISIONS:-fp32 fp16}; do
      if [ -n "${HEUR_TABLES:-}" ]; then
        cp "$HEUR_TABLES/$net-$p.json" zoo/heur/ || echo "no table $HEUR_TABLES/$net-$p.json"
      else
        step "tune $net $p"
        targs_var=TUNE_ARGS_$p; targs=${!targs_var:-${TUNE_ARGS:-}}
        # --cut 2: a version over twice the best after its first run is not repeated (the table still times every one once)
        timeout "${TUNE_TIMEOUT:-240}" "$BS" tune --model "zoo/models/$net" --precision $p --batches "${HEUR_BATCHES:-1,64,256}" \
          --reps "${TUNE_REPS:-2}" --warmup 1 --cut 2 $targs --out "zoo/heur/$net-$p.json" >"zoo/heur/$net-$p-tune.log" 2>&1 ||
          echo "tune $net $p: exit $?"
      fi
      tar czf "$OUT/heur_tables.tgz" -C zoo/heur $(ls zoo/heur | grep -E -- '-(fp32|tf32|fp16|bf16)\.json$')
      [ "${HEUR_SWEEPS:-1}" = 1 ] || continue
      step "tuned $net $p"
      for round in $(seq "${HEUR_ROUNDS:-1}"); do
        for mode in heuristic tuned; do
          t=""; [ $mode = tuned ] && t="--tuning zoo/heur/$net-$p.json"
          r=""; [ "$round" -gt 1 ] && r="-r$round"
          timeout 200 "$BS" sweep --model "zoo/models/$net" --backend cuda --precision $p $t --batches "${HEUR_BATCHES:-1,64,256}" \
            --reps 5 --warmup 2 --check-images 1 --check-backend cpu --host-memory pinned --out "zoo/heur/$net-$p-$mode$r.csv" \
            >"zoo/heur/$net-$p-$mode$r.log" 2>&1 || echo "$net $p $mode $round: exit $?"
        done
      done
      python3 experiments/zoo_summary.py heur zoo/heur >"$OUT/heuristic.md"; tail -3 "$OUT/heuristic.md"  # so far
      tar czf "$OUT/heur_runs.tgz" zoo/heur
    done
  done
  cat "$OUT/heuristic.md"
fi
