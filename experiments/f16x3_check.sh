#!/usr/bin/env bash
# On the GPU machine: conv v51-v53 (FP32 on the FP16 tensor cores, 3xFP16) in one call. Binaries in .device/pack.tar.xz
# (scripts/pack_device.sh). Steps (switches):
#   TESTS=1  the GPU tests that run v51-v53 (the op table, GpuEngine, ECE 408's 0.8397), and compute-sanitizer memcheck
#            and racecheck over a few of their cases
#   TUNE=1   `tune` in fp32 over the FP32 wgmma versions, 3xTF32 (v34-v36) against 3xFP16 (v51-v53), each candidate's
#            time and error per layer: AlexNet (synthetic, seed 1) at TUNE_BATCHES (default 128,1024) and VGG-16 at 256
#            (VGG_BATCHES); then the kernel time and check of auto without a table (the heuristic) and with the tuned table
#   PT=1     PyTorch's FP32 forward of the same AlexNet and VGG-16 on the same GPU (experiments/pytorch_alexnet.py)
# Logs and tables in $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
source experiments/device_env.sh
BS=$bin/batchscope BW=$bin/batchscope-weights
export HOME=$PWD/.home  # no tuning table from an earlier run
mkdir -p "$HOME" zoo/models f3
record_device
step() { echo "== $1 ($(date +%T))"; }
V3=51,52,53 VT=34,35,36

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
    step "tune $net fp32, batches $batches, conv v$VT,$V3"
    timeout 250 "$BS" tune --model $model --precision fp32 --batches $batches --reps 3 --conv-variants $VT,$V3 \
      --out "$OUT/tune-$net.json" >"$OUT/tune-$net.log" 2>&1 || echo "tune $net: exit $?"
    for t in heuristic tuned; do
      extra=""; [ $t = tuned ] && extra="--tuning $OUT/tune-$net.json"
      timeout 200 "$BS" sweep --model $model --backend cuda --precision fp32 --batches $batches --reps 10 --warmup 3 \
        --host-memory pinned --check-images 2 --check-backend cpu $extra --out f3/$net-$t-fp32.csv >f3/$net-$t.log 2>&1 ||
        echo "sweep $net $t: exit $? $(grep -h error f3/$net-$t.log | head -1)"
    done
  done
  python3 experiments/zoo_summary.py zoo f3 | tee "$OUT/sweeps.md"  # the backend column: heuristic or tuned
  tar czf "$OUT/f3.tgz" f3
fi

if [ "${PT:-0}" = 1 ]; then
  for net in alexnet vgg16; do
    b=${TUNE_BATCHES:-128,1024}; [ $net = vgg16 ] && b=${VGG_BATCHES:-256}
    step "PyTorch $net fp32"
    python3 experiments/pytorch_alexnet.py --net $net --batches $b --modes fp32 --json "$OUT/pytorch-$net.json" >"$OUT/pytorch-$net.txt" 2>&1 ||
      echo "PyTorch $net: exit $?"
    tail -4 "$OUT/pytorch-$net.txt"
  done
fi
