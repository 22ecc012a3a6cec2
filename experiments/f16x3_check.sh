#!/usr/bin/env bash
# On the GPU machine: conv v51-v53 (FP32 on the FP16 tensor cores, 3xFP16) in one call. Binaries in .device/pack.tar.xz
# (scripts/pack_device.sh). Steps (switches):
#   TESTS=1  the GPU tests that run v51-v53 (the op table, GpuEngine, ECE 408's 0.8397), and compute-sanitizer memcheck
#            and racecheck over a few of their cases
#   TUNE=1   `tune` in TUNE_PREC (default fp32) over TUNE_VERSIONS (default the FP32 wgmma versions, 3xTF32 v34-v36 against
#            3xFP16 v51-v53; for tf32 e.g. 25,28,33,54,55,56), each candidate's time and error per layer: AlexNet
#            (synthetic, seed 1) at TUNE_BATCHES (default 128,1024) and VGG-16 at 256 (VGG_BATCHES); then the kernel time
#            and check of auto without a table (the heuristic) and with the tuned table
#   FORCE=1  AlexNet with every convolution forced to each of FORCE_VERSIONS (default 51 53 34 13) at 128 and 1024
#            images: each layer's time (conv1 through the space-to-depth rewrite on v51-v53): force.md
#   FORCE_FC=1  AlexNet with its fully connected layers forced to each of FC_VERSIONS (default 18 7 8; convolutions
#            auto) at 16, 128 and 1024 images: fc6-fc8's times: force_fc.md
#   ACC=1    AlexNet on 128 pixel-like images (seed 5) at batch 16 and 128, fp32 auto without a table and cudnn exact,
#            against PyTorch's FP64 and FP32 forwards of the same weights (experiments/fp32_accuracy.py): accuracy.md
#   FINAL=1  the record: AlexNet fp32 at 1, 16, 128, 1024 with auto (heuristic), auto with the shipped table
#            (experiments/tuning/h100-alexnet.json; tf32 with it too) and cudnn exact; VGG-16 at 256 with auto and cudnn
#            exact; each point checked on 2 images against the cpu backend: final.md (use with PT=1 for PyTorch)
#   PT=1     PyTorch's FP32 forward of the same AlexNet and VGG-16 on the same GPU (experiments/pytorch_alexnet.py)
# Logs and tables in $OUT (tune outputs in tune.tgz: the device tool returns a limited number of files).
set -uo pipefail
cd "$(dirname "$0")/.."
source experiments/device_env.sh
BS=$bin/batchscope BW=$bin/batchscope-weights
export HOME=$PWD/.home  # no tuning table from an earlier run
mkdir -p "$HOME" zoo/models f3
record_device
step() { echo "== $1 ($(date +%T))"; }
TP=${TUNE_PREC:-fp32} TV=${TUNE_VERSIONS:-34,35,36,51,52,53}

if [ "${TESTS:-0}" = 1 ]; then
  step "GPU tests"
  f='*cuda_conv51:*cuda_conv52:*cuda_conv53:GpuEngine.*:*GpuEce408*'
  timeout "${TEST_TIMEOUT:-300}" "$bin/test_gpu" --gtest_brief=1 --gtest_filter="${TEST_FILTER:-$f}" >"$OUT/test_gpu.log" 2>&1
  echo "test_gpu exit $?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|rel|Failure" "$OUT/test_gpu.log" | head -30
  step "memcheck"
  timeout 200 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 "$bin/test_gpu" --gtest_brief=1 \
    --gtest_filter='*k3x3_s2_p1_g2*cuda_conv51:*k11x11_s4_p0_g2*cuda_conv5?:*rect*cuda_conv52:GpuEngine.ThreeFp16*' >"$OUT/memcheck.log" 2>&1
  echo "memcheck exit $?"; grep -E "ERROR SUMMARY|LEAK SUMMARY|PASSED|FAILED" "$OUT/memcheck.log" | tail -4
  step "racecheck"
  timeout 200 compute-sanitizer --tool racecheck --racecheck-report all --error-exitcode 9 "$bin/test_gpu" --gtest_brief=1 \
    --gtest_filter='*k3x3_s2_p1_g2*cuda_conv5?:*k5x5_s1_p2_g1*cuda_conv5?' >"$OUT/racecheck.log" 2>&1
  echo "racecheck exit $?"; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED" "$OUT/racecheck.log" | tail -4
fi

if [ "${TUNE:-0}" = 1 ]; then
  alexnet_model
  [ -f zoo/models/vgg16/model.json ] || "$BW" synthesize --model vgg16 --seed 1 --out zoo/models/vgg16 >/dev/null
  for net in alexnet vgg16; do
    model=data/models/alexnet batches=${TUNE_BATCHES:-128,1024}
    [ $net = vgg16 ] && model=zoo/models/vgg16 batches=${VGG_BATCHES:-256}
    step "tune $net $TP, batches $batches, conv v$TV"
    timeout 250 "$BS" tune --model $model --precision $TP --batches $batches --reps 3 --conv-variants $TV \
      --out f3/tune-$net.json >f3/tune-$net.log 2>&1 || echo "tune $net: exit $?"
    for t in heuristic tuned; do
      extra=""; [ $t = tuned ] && extra="--tuning f3/tune-$net.json"
      timeout 200 "$BS" sweep --model $model --backend cuda --precision $TP --batches $batches --reps 10 --warmup 3 \
        --host-memory pinned --check-images 2 --check-backend cpu $extra --out f3/$net-$t-$TP.csv >f3/$net-$t.log 2>&1 ||
        echo "sweep $net $t: exit $? $(grep -h error f3/$net-$t.log | head -1)"
    done
  done
  python3 experiments/zoo_summary.py zoo f3 | tee "$OUT/sweeps.md"  # the backend column: heuristic or tuned
  tar czf "$OUT/tune.tgz" f3
fi

if [ "${FORCE:-0}" = 1 ]; then
  alexnet_model
  mkdir -p force
  for v in ${FORCE_VERSIONS:-51 53 34 13}; do
    step "AlexNet fp32, every convolution on v$v"
    timeout 120 "$BS" sweep --model data/models/alexnet --backend cuda --precision fp32 --conv-variant $v --batches 128,1024 --reps 10 \
      --warmup 3 --host-memory pinned --check-images 2 --check-backend cpu --out force/alexnet-v$v-fp32.csv >force/v$v.log 2>&1 ||
      echo "v$v: exit $? $(grep -h error force/v$v.log | head -1)"
  done
  python3 experiments/layer_table.py force conv1,conv2,conv3,conv4,conv5 | tee "$OUT/force.md"
  tar czf "$OUT/force.tgz" force
fi

if [ "${FORCE_FC:-0}" = 1 ]; then
  alexnet_model
  mkdir -p forcefc
  for v in ${FC_VERSIONS:-18 7 8}; do
    step "AlexNet fp32, fc on v$v"
    timeout 120 "$BS" sweep --model data/models/alexnet --backend cuda --precision fp32 --fc-variant $v --batches 16,128,1024 --reps 10 \
      --warmup 3 --host-memory pinned --check-images 2 --check-backend cpu --out forcefc/alexnet-fc$v-fp32.csv >forcefc/v$v.log 2>&1 ||
      echo "fc v$v: exit $? $(grep -h error forcefc/v$v.log | head -1)"
  done
  python3 experiments/layer_table.py forcefc fc6,fc7,fc8 "fc version" | tee "$OUT/force_fc.md"
  tar czf "$OUT/force_fc.tgz" forcefc
fi

if [ "${ACC:-0}" = 1 ]; then
  alexnet_model
  mkdir -p acc
  python3 -c "import numpy as np; np.save('acc/x.npy', np.random.default_rng(5).uniform(-125, 130, (128, 3, 227, 227)).astype(np.float32))"
  specs=""
  for n in 16 128; do
    for t in heuristic cudnn-exact; do
      args="--backend cuda"; [ $t = cudnn-exact ] && args="--backend cudnn --cudnn-algos exact"
      "$BS" infer --model data/models/alexnet $args --input acc/x.npy --batch $n --output acc/y-$t-n$n.npy >acc/infer-$t-n$n.log 2>&1 ||
        echo "infer $t n$n: exit $?"
      specs="$specs $t@$n=acc/y-$t-n$n.npy"
    done
  done
  step "references"
  python3 experiments/fp32_accuracy.py --model data/models/alexnet --input acc/x.npy $specs >"$OUT/accuracy.md" 2>&1
  cat "$OUT/accuracy.md"
fi

if [ "${FINAL:-0}" = 1 ]; then
  alexnet_model
  [ -f zoo/models/vgg16/model.json ] || "$BW" synthesize --model vgg16 --seed 1 --out zoo/models/vgg16 >/dev/null
  mkdir -p final
  point() {  # NAME MODEL BATCHES PRECISION ARGS...
    local name=$1 model=$2 batches=$3 p=$4; shift 4
    timeout 200 "$BS" sweep --model $model --precision $p --batches $batches --reps 10 --warmup 3 --host-memory pinned --check-images 2 \
      --check-backend cpu "$@" --out final/$name-$p.csv >final/$name-$p.log 2>&1 || echo "$name $p: exit $? $(grep -h error final/$name-$p.log | head -1)"
  }
  step "final: AlexNet and VGG-16"
  point alexnet-heuristic data/models/alexnet 1,16,128,1024 fp32 --backend cuda
  point alexnet-tuned data/models/alexnet 1,16,128,1024 fp32 --backend cuda --tuning experiments/tuning/h100-alexnet.json
  point alexnet-tuned data/models/alexnet 1,16,128,1024 tf32 --backend cuda --tuning experiments/tuning/h100-alexnet.json
  point alexnet-cudnnexact data/models/alexnet 1,16,128,1024 fp32 --backend cudnn --cudnn-algos exact
  point vgg16-heuristic zoo/models/vgg16 256 fp32 --backend cuda
  point vgg16-cudnnexact zoo/models/vgg16 256 fp32 --backend cudnn --cudnn-algos exact
  python3 experiments/zoo_summary.py zoo final | tee "$OUT/final.md"  # the backend column: heuristic, tuned or cudnnexact
  tar czf "$OUT/final.tgz" final
fi

if [ "${PT:-0}" = 1 ]; then
  for net in alexnet vgg16; do
    b=${PT_BATCHES:-1,16,128,1024}; [ $net = vgg16 ] && b=${VGG_BATCHES:-256}
    step "PyTorch $net fp32"
    python3 experiments/pytorch_alexnet.py --net $net --batches $b --modes fp32 --json "$OUT/pytorch-$net.json" >"$OUT/pytorch-$net.txt" 2>&1 ||
      echo "PyTorch $net: exit $?"
    tail -4 "$OUT/pytorch-$net.txt"
  done
fi
