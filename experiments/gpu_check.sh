#!/usr/bin/env bash
# On the GPU machine: runs the GPU test suite, compute-sanitizer (memcheck over a representative subset,
# racecheck over the shared-memory kernels), and the ECE 408 benchmark of every conv variant and cuDNN;
# optionally the sweeps, the AlexNet kernel benchmark against cuDNN and PyTorch (ALEXNET_BENCH=1), and
# batchscope tune (TUNE=1). Logs go to $OUT (default ./out). Binaries come prebuilt in .device/pack.tar.xz
# (scripts/pack_device.sh), because the GPU machine lacks CLI11, nlohmann-json and libzip.
set -uo pipefail
cd "$(dirname "$0")/.."
. experiments/device_env.sh
mkdir -p "$OUT"
{ nvidia-smi; nvcc --version | tail -1; echo "binaries built from: $(cat .device/COMMIT)"; } >"$OUT/device.txt" 2>&1
head -20 "$OUT/device.txt"
ldd "$bin/batchscope" "$bin/test_gpu" | grep "not found"

step() { echo "== $1 ($(date +%T))"; }

if [ "${TESTS:-1}" = 1 ]; then
step "GPU tests"
timeout ${TEST_TIMEOUT:-900} "$bin/test_gpu" --gtest_brief=1 ${TEST_FILTER:+--gtest_filter="$TEST_FILTER"} >"$OUT/test_gpu.log" 2>&1
echo "test_gpu exit $?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|tests ran" "$OUT/test_gpu.log" | tail -15
grep -c "Skipped" "$OUT/test_gpu.log" | sed 's/^/skip lines: /'
fi

if [ "${SANITIZE:-1}" = 1 ]; then
  step "compute-sanitizer memcheck"
  small=${MEMCHECK_FILTER:-'*k3x3_s2_p1_g2*:*k5x5_s1_p2_g1*:*k11x11_s4_p0_g2*:*rect*:*maxpool_k3_s2_p1*:*avgpool_k2_s2_p1_ceil*:*lrn*:*act*:*fc_123__37_n5_bias*:*softmax*:*flatten*:*GpuFused*:*GpuErrors*:*ece408_conv*conv11*:*engine_conv_m200*:*engine_conv_m40*:*engine_fc_123*:*engine_fc_1001*:GpuEngine.LrnThen*:GpuLrnPoolHalf.BackendPlans*:GpuEngine.FcChains*:GpuEngine.PerLayer*:GpuEngine.Fp16Overflow*'}
  compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 "$bin/test_gpu" --gtest_brief=1 --gtest_filter="$small" >"$OUT/memcheck.log" 2>&1
  echo "memcheck exit $?"; grep -E "ERROR SUMMARY|PASSED|FAILED" "$OUT/memcheck.log" | tail -4
  step "compute-sanitizer racecheck (shared-memory kernels: conv v2 v5 v6 v7-v15 v19-v36 v57, fc tiled, v5-v9 v12-v13, softmax, LRN walk)"
  race=${RACECHECK_FILTER:-'*k3x3_s2_p1_g2*conv2:*k3x3_s2_p1_g2*conv5:*k3x3_s2_p1_g2*conv6:*ece408_conv*conv7:*ece408_conv*conv8:*ece408_conv*conv9:*ece408_conv*conv10:*ece408_conv*conv11:*ece408_conv*conv57:*fc_123__37_n5_bias*fc2:*softmax*cuda*:*GpuFused*:*engine_conv_m200*conv1?:*engine_fc_123*_fc?:*engine_fc_123*_fc1?:GpuEngine.LrnThen*:GpuLrnPoolHalf.BackendPlans*:*engine_conv_m200*conv19_*:*engine_conv_m200*conv2?_*:*engine_conv_m75*conv39_*:*engine_conv_m75*conv4?_*:*engine_fc_123*_fc1?_*16:*softmax*cuda*16'}
  compute-sanitizer --tool racecheck --racecheck-report all --error-exitcode 9 "$bin/test_gpu" --gtest_brief=1 --gtest_filter="$race" >"$OUT/racecheck.log" 2>&1
  echo "racecheck exit $?"; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED" "$OUT/racecheck.log" | tail -4
fi

if [ "${BENCH:-1}" = 1 ]; then
step "ECE 408 benchmark: 10,000 images, one batch, 2 warm-ups, 10 repetitions"
for v in ${BENCH_VARIANTS:-1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 57 auto}; do
  echo "-- cuda v$v"
  "$bin/batchscope" infer --model data/models/ece408 --backend cuda --conv-variant $v --warmup 2 --reps 10 --layer-times 2>/dev/null
done >"$OUT/bench_ece408.txt"
echo "-- cudnn" >>"$OUT/bench_ece408.txt"
"$bin/batchscope" infer --model data/models/ece408 --backend cudnn --warmup 2 --reps 10 --layer-times >>"$OUT/bench_ece408.txt" 2>/dev/null
for p in ${BENCH_PRECISIONS:-fp16 bf16}; do
  for v in ${BENCH_HALF_VARIANTS:-auto}; do
    echo "-- cuda $p v$v"
    "$bin/batchscope" infer --model data/models/ece408 --backend cuda --precision $p --conv-variant $v --warmup 2 --reps 10 --layer-times 2>&1
  done
  echo "-- cudnn $p"
  "$bin/batchscope" infer --model data/models/ece408 --backend cudnn --precision $p --warmup 2 --reps 10 --layer-times 2>&1
done >>"$OUT/bench_ece408.txt"
grep -E "^--|^Op Time|Correctness|error" "$OUT/bench_ece408.txt"
fi

if [ "${SWEEPS:-1}" = 1 ]; then
  step "ECE 408 sweeps 1-1024: resident / per-layer x pageable / pinned, and the profiler's overhead"
  mkdir -p sweeps
  for t in resident per-layer; do
    for h in pageable pinned; do
      "$bin/batchscope" sweep --model data/models/ece408 --backend cuda --transfers $t --host-memory $h \
        --out sweeps/ece408-cuda-$t-$h.csv >sweeps/ece408-cuda-$t-$h.log 2>&1; echo "cuda $t $h: exit $?"
    done
  done
  "$bin/batchscope" sweep --model data/models/ece408 --backend cudnn --out sweeps/ece408-cudnn-resident-pageable.csv \
    >sweeps/ece408-cudnn-resident-pageable.log 2>&1; echo "cudnn: exit $?"
  for p in on off; do
    flag=""; [ $p = off ] && flag=--no-profile
    "$bin/batchscope" sweep --model data/models/ece408 --backend cuda --batches 1 --reps 200 --warmup 20 $flag \
      --out sweeps/overhead-profiler-$p.csv >sweeps/overhead-profiler-$p.log 2>&1
    echo "profiler $p: batch 1 warm median ms: $(awk -F, 'NR>1 && $11=="warm" {print $13}' sweeps/overhead-profiler-$p.csv)"
  done
  grep -A14 "^== ece408" sweeps/ece408-cuda-resident-pageable.log | head -26
fi

alexnet_weights() {
  mkdir -p weights
  alexnet_model
}

if [ "${TUNE:-0}" = 1 ]; then
  step "batchscope tune: ${TUNE_MODELS:-alexnet}, batches ${TUNE_BATCHES:-1,4,16,64,256,1024}"
  alexnet_weights
  mkdir -p tune
  for m in ${TUNE_MODELS:-alexnet}; do
    # TUNE_START: a table to merge into (its entries for what this run does not measure are kept); TUNE_BASE=0: no fp32 run
    [ -f "${TUNE_START:-/nonexistent}" ] && cp "$TUNE_START" tune/tuning-$m.json
    if [ "${TUNE_BASE:-1}" = 1 ]; then
    timeout ${TUNE_TIMEOUT:-400} "$bin/batchscope" tune --model data/models/$m --batches ${TUNE_BATCHES:-1,4,16,64,256,1024} \
      --reps ${TUNE_REPS:-5} --out tune/tuning-$m.json ${TUNE_EXTRA:-} >tune/tune-$m.txt 2>&1; echo "tune $m: exit $?"
    tail -${TUNE_TAIL:-12} tune/tune-$m.txt
    fi
    for p in ${TUNE_PRECISIONS:-}; do  # more precisions into the same table (tune merges what it did not measure)
      timeout ${TUNE_TIMEOUT:-400} "$bin/batchscope" tune --model data/models/$m --precision $p --batches ${TUNE_BATCHES:-1,4,16,64,256,1024} \
        --reps ${TUNE_REPS:-5} --out tune/tuning-$m.json >tune/tune-$m-$p.txt 2>&1; echo "tune $m $p: exit $?"
      tail -${TUNE_TAIL:-12} tune/tune-$m-$p.txt
    done
  done
  python3 - tune/tuning-*.json <<'PY'
import json, sys
tables = [json.load(open(p)) for p in sys.argv[1:]]
t = tables[0]
for o in tables[1:]:
    t["entries"] += o["entries"]; t["model"] += "+" + o["model"]
json.dump(t, open("tune/tuning.json", "w"), indent=1)
PY
  cp tune/tuning.json "$OUT/tuning.json"
  tar czf "$OUT/tune.tgz" tune
fi

if [ "${ALEXNET_BENCH:-0}" = 1 ]; then
  ab=${AB_BATCHES:-1,16,128,1024}
  step "AlexNet kernel time: cuda configurations ${AB_CONFIGS:-auto 12 13 14} vs cuDNN exact vs PyTorch, batches $ab (resident, pinned)"
  alexnet_weights
  mkdir -p sweeps/ab
  common="--model data/models/alexnet --batches $ab --reps ${AB_REPS:-5} --warmup 2 --host-memory pinned --check-images 1 --check-backend cpu"
  for v in ${AB_CONFIGS:-auto 12 13 14}; do
    extra=""; [ -f "${AB_TUNING:-/nonexistent}" ] && [ "$v" = auto ] && extra="--tuning $AB_TUNING"
    timeout 300 "$bin/batchscope" sweep $common --backend cuda --conv-variant $v $extra --out sweeps/ab/alexnet-cuda-v$v.csv \
      >sweeps/ab/alexnet-cuda-v$v.log 2>&1; echo "cuda v$v: exit $? $(grep -h 'error' sweeps/ab/alexnet-cuda-v$v.log | head -1)"
  done
  timeout 300 "$bin/batchscope" sweep $common --backend cudnn --cudnn-algos exact --out sweeps/ab/alexnet-cudnn-exact.csv \
    >sweeps/ab/alexnet-cudnn-exact.log 2>&1; echo "cudnn exact: exit $?"
  if [ "${AB_TF32:-0}" = 1 ]; then  # --precision tf32: cuda auto (tuned with AB_TUNING_TF32 when given) and cudnn
    extra=""; [ -f "${AB_TUNING_TF32:-/nonexistent}" ] && extra="--tuning $AB_TUNING_TF32"
    timeout 300 "$bin/batchscope" sweep $common --backend cuda --precision tf32 $extra --out sweeps/ab/alexnet-cuda-tf32-vauto.csv \
      >sweeps/ab/alexnet-cuda-tf32-vauto.log 2>&1; echo "cuda tf32 auto: exit $? $(grep -h 'error' sweeps/ab/alexnet-cuda-tf32-vauto.log | head -1)"
    timeout 300 "$bin/batchscope" sweep $common --backend cudnn --precision tf32 --out sweeps/ab/alexnet-cudnn-tf32.csv \
      >sweeps/ab/alexnet-cudnn-tf32.log 2>&1; echo "cudnn tf32: exit $? $(grep -h 'error' sweeps/ab/alexnet-cudnn-tf32.log | head -1)"
  fi
  if [ "${AB_HALF:-0}" = 1 ]; then  # --precision fp16 / bf16: cuda (AB_HALF_CONFIGS, default auto; tuned with AB_TUNING when given)
    for p in ${AB_HALF_PRECISIONS:-fp16 bf16}; do
      for v in ${AB_HALF_CONFIGS:-auto}; do
        extra=""; [ -f "${AB_TUNING:-/nonexistent}" ] && [ "$v" = auto ] && extra="--tuning $AB_TUNING"
        timeout 300 "$bin/batchscope" sweep $common --backend cuda --precision $p --conv-variant $v $extra \
          --out sweeps/ab/alexnet-cuda-$p-v$v.csv >sweeps/ab/alexnet-cuda-$p-v$v.log 2>&1
        echo "cuda $p v$v: exit $? $(grep -h 'error' sweeps/ab/alexnet-cuda-$p-v$v.log | head -1)"
      done
      timeout 300 "$bin/batchscope" sweep $common --backend cudnn --precision $p --out sweeps/ab/alexnet-cudnn-$p.csv \
        >sweeps/ab/alexnet-cudnn-$p.log 2>&1; echo "cudnn $p: exit $? $(grep -h 'error' sweeps/ab/alexnet-cudnn-$p.log | head -1)"
    done
  fi
  timeout 300 python3 experiments/pytorch_alexnet.py --batches $ab --modes ${PT_MODES:-fp32,fp32-graph,tf32,fp16-cl} \
    --json "$OUT/pytorch.json" >"$OUT/pytorch.txt" 2>&1; echo "pytorch: exit $?"; cat "$OUT/pytorch.txt"
  python3 experiments/alexnet_kernels.py sweeps/ab "$OUT/pytorch.json" >"$OUT/alexnet_kernels.md" 2>&1
  cat "$OUT/alexnet_kernels.md"
fi

if [ "${ALEXNET:-0}" = 1 ]; then
  step "AlexNet (synthetic weights, seed 1): every GPU backend and variant, resident and per-layer, batches 1-1024"
  mkdir -p sweeps
  alexnet_weights
  for t in ${ALEXNET_TRANSFERS:-resident per-layer}; do
    for v in ${ALEXNET_VARIANTS:-auto 1 2 3 4 5 6 7 8 9 10}; do
      "$bin/batchscope" sweep --model data/models/alexnet --backend cuda --conv-variant $v --transfers $t --reps 3 --warmup 1 \
        --check-images 1 --check-backend cpu --out sweeps/alexnet-cuda-v$v-$t.csv >sweeps/alexnet-cuda-v$v-$t.log 2>&1
      echo "cuda v$v $t: exit $? $(grep -h 'error' sweeps/alexnet-cuda-v$v-$t.log | head -1)"
    done
    for a in ${ALEXNET_CUDNN:-fastest exact}; do
      "$bin/batchscope" sweep --model data/models/alexnet --backend cudnn --cudnn-algos $a --transfers $t --reps 3 --warmup 1 \
        --check-images 1 --check-backend cpu --out sweeps/alexnet-cudnn-$a-$t.csv >sweeps/alexnet-cudnn-$a-$t.log 2>&1
      echo "cudnn $a $t: exit $?"
    done
  done
  grep -A24 "^== alexnet" sweeps/alexnet-cuda-vauto-resident.log | head -26
fi
[ -d sweeps ] && tar czf "$OUT/sweeps.tgz" sweeps
