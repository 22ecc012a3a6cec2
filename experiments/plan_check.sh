#!/usr/bin/env bash
# On the GPU machine: the plan/registry refactor (issue 31) against the binaries before it, in one call. Both sets travel
# in .device/pack.tar.xz (its base/: scripts/pack_device.sh LINEINFO=0 BASE_PACK=...) or as two packs (the earlier one as
# .device/base.tar.xz). Steps (switches):
#   AB=1       AlexNet (synthetic weights) kernel time, every precision (and fp32 with the shipped tuning table), batch 1
#              and 1024 (AB_BATCHES), resident, pinned; ECE 408 Op Times fp32 and fp16, 10,000 images: base and new alternating,
#              ROUNDS rounds (default 2; ECE 408 ECE_ROUNDS, default ROUNDS; AB_CONFIGS=none: ECE 408 only); table by
#              experiments/ab_compare.py
#              AB_CONFIGS: those names, and NAME-w8 for --weights int8; AB_LAYERS: also these layers' summed times;
#              AB_NET: a zoo network in place of AlexNet (batchscope-weights synthesize --model AB_NET --seed 1, one
#              folder both binaries read; PEERS then runs it too, PyTorch with --net AB_NET)
#   PEERS=1    the cudnn backend of the new binaries (PEER_PRECISIONS, default fp16 bf16) and PyTorch fp16 channels-last
#              at AB_BATCHES (experiments/pytorch_alexnet.py), with AB=1 (which makes the model): peers.tgz
#   TESTS=1    the new GPU test suite (TEST_FILTER, TEST_TIMEOUT)
#   MEMCHECK=1 compute-sanitizer memcheck --leak-check full over the suite, shard MC_SHARD of MC_SHARDS (gtest sharding)
#   RACE=1     compute-sanitizer racecheck over the shared-memory kernels (gpu_check.sh's list)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-out}
mkdir -p "$OUT"
export BATCHSCOPE_SOURCE_DIR=$PWD BATCHSCOPE_DATA=$PWD/data
mkdir -p .device/new .device/base
tar -C .device/new -xJf .device/pack.tar.xz
[ -f .device/base.tar.xz ] && tar -C .device/base -xJf .device/base.tar.xz
export LD_LIBRARY_PATH=$PWD/.device/new/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
new=.device/new base=.device/base
[ -x .device/new/base/batchscope ] && base=.device/new/base  # the pack's own base/ (scripts/pack_device.sh BASE_PACK=...)
{ nvidia-smi; echo "new: $(head -c 60 .device/new/COMMIT)"; echo "base: $(head -c 60 $base/COMMIT 2>/dev/null)"; } >"$OUT/device.txt" 2>&1
grep -E "NVIDIA H|Driver" "$OUT/device.txt" | head -3
step() { echo "== $1 ($(date +%T))"; }

if [ "${AB:-0}" = 1 ]; then
  step "AlexNet weights"
  mkdir -p weights ab
  # The same weights, each binary's own import (the base reads no model.json field it does not know).
  wt=$new; [ -x "$wt/batchscope-weights" ] || wt=$base  # one pack may leave it out (the device tool's 64 MiB)
  "$wt/batchscope-weights" synthesize --model alexnet --seed 1 --out weights/alexnet-seed1.npy >/dev/null &&
    "$wt/batchscope-weights" import-bvlc weights/alexnet-seed1.npy --out data/models/alexnet >/dev/null || echo "weights: FAILED"
  [ -x "$base/batchscope-weights" ] && "$base/batchscope-weights" import-bvlc weights/alexnet-seed1.npy --out weights/alexnet-base >/dev/null
  ab_model=data/models/alexnet
  if [ -n "${AB_NET:-}" ]; then
    ab_model=zoo/models/$AB_NET; mkdir -p zoo/models
    [ -f $ab_model/model.json ] || "$wt/batchscope-weights" synthesize --model "$AB_NET" --seed 1 --out $ab_model >/dev/null || echo "$AB_NET: FAILED"
  fi
  common="--backend cuda --batches ${AB_BATCHES:-1,1024} --reps ${REPS:-10} --warmup 3 --host-memory pinned --check-images 1 --check-backend cpu"
  for round in $(seq 1 "${ROUNDS:-2}"); do
    for cfg in ${AB_CONFIGS:-fp32 fp32-tuned tf32 tf32-tuned fp16 fp16-tuned bf16 bf16-tuned}; do
      [ "$cfg" = none ] && continue
      p=${cfg%-tuned}; p=${p%-w8}; extra=""
      [[ $cfg == *-tuned ]] && extra="--tuning experiments/tuning/h100-alexnet.json"
      [[ $cfg == *-w8 ]] && extra="$extra --weights int8"
      for who in base new; do
        [ $((round % 2)) = 0 ] && who=$([ $who = base ] && echo new || echo base)  # alternate the order between rounds
        bin=${!who}
        model=$ab_model
        [ -z "${AB_NET:-}" ] && [ $who = base ] && [ -d weights/alexnet-base ] && model=weights/alexnet-base  # else the new import (same format)
        timeout 300 "$bin/batchscope" sweep --model $model $common --precision $p $extra --out ab/$who-$cfg-r$round.csv >ab/$who-$cfg-r$round.log 2>&1 ||
          echo "$who $cfg round $round: exit $? $(grep -h error ab/$who-$cfg-r$round.log | head -1)"
      done
    done
  done
  for round in $(seq 1 "${ECE_ROUNDS:-${ROUNDS:-2}}"); do
    for p in fp32 fp16; do
      for who in base new; do
        [ $((round % 2)) = 0 ] && who=$([ $who = base ] && echo new || echo base)
        bin=${!who}
        "$bin/batchscope" infer --model data/models/ece408 --backend cuda --precision $p --warmup 3 --reps ${ECE_REPS:-20} --layer-times \
          >ab/$who-ece408-$p-r$round.txt 2>&1 || echo "$who ece408 $p: exit $?"
      done
    done
  done
  python3 experiments/ab_compare.py ab ${AB_LAYERS:-} | tee "$OUT/ab.md"
  tar czf "$OUT/ab.tgz" ab
fi

if [ "${PEERS:-0}" = 1 ]; then
  step "peers: the cudnn backend of the new binaries and PyTorch (fp16 channels-last), same call"
  mkdir -p peers
  for p in ${PEER_PRECISIONS:-fp16 bf16}; do
    timeout 300 "$new/batchscope" sweep --model $ab_model --backend cudnn --precision $p --batches ${AB_BATCHES:-1,1024} \
      --reps ${REPS:-10} --warmup 3 --host-memory pinned --check-images 1 --check-backend cpu --out peers/cudnn-$p.csv \
      >peers/cudnn-$p.log 2>&1 || echo "cudnn $p: exit $?"
  done
  python3 experiments/pytorch_alexnet.py --net "${AB_NET:-alexnet}" --batches ${AB_BATCHES:-1,1024} --modes fp16-cl --reps ${REPS:-10} --warmup 3 \
    --json peers/pytorch.json >peers/pytorch.txt 2>&1 || echo "pytorch: exit $?"
  cat peers/pytorch.txt
  tar czf "$OUT/peers.tgz" peers
fi

if [ "${TESTS:-0}" = 1 ]; then
  step "GPU tests (new)"
  timeout "${TEST_TIMEOUT:-480}" "$new/test_gpu" --gtest_brief=1 ${TEST_FILTER:+--gtest_filter="$TEST_FILTER"} >"$OUT/test_gpu.log" 2>&1
  echo "test_gpu exit $?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|tests ran" "$OUT/test_gpu.log" | tail -25
fi

if [ "${MEMCHECK:-0}" = 1 ]; then
  step "compute-sanitizer memcheck, shard ${MC_SHARD:-0} of ${MC_SHARDS:-1}"
  GTEST_TOTAL_SHARDS=${MC_SHARDS:-1} GTEST_SHARD_INDEX=${MC_SHARD:-0} timeout "${MC_TIMEOUT:-540}" \
    compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 "$new/test_gpu" --gtest_brief=1 \
    ${MC_FILTER:+--gtest_filter="$MC_FILTER"} >"$OUT/memcheck-${MC_SHARD:-0}.log" 2>&1
  echo "memcheck exit $?"; grep -E "ERROR SUMMARY|LEAK SUMMARY|^\[  (PASSED|FAILED|SKIPPED) |FAILED" "$OUT/memcheck-${MC_SHARD:-0}.log" | tail -12
fi

if [ "${RACE:-0}" = 1 ]; then
  step "compute-sanitizer racecheck (shared-memory kernels)"
  race=${RACECHECK_FILTER:-'*k3x3_s2_p1_g2*conv2:*k3x3_s2_p1_g2*conv5:*k3x3_s2_p1_g2*conv6:*ece408_conv*conv7:*ece408_conv*conv8:*ece408_conv*conv9:*ece408_conv*conv10:*ece408_conv*conv11:*ece408_conv*conv57:*fc_123__37_n5_bias*fc2:*softmax*cuda*:*GpuFused*:*engine_conv_m200*conv1?:*engine_fc_123*_fc?:*engine_fc_123*_fc1?:GpuEngine.LrnThen*:GpuLrnPoolHalf.BackendPlans*:*engine_conv_m200*conv19_*:*engine_conv_m200*conv2?_*:*engine_conv_m75*conv39_*:*engine_conv_m75*conv4?_*:*engine_fc_123*_fc1?_*16:*softmax*cuda*16'}
  timeout "${RACE_TIMEOUT:-300}" compute-sanitizer --tool racecheck --racecheck-report all --error-exitcode 9 "$new/test_gpu" --gtest_brief=1 \
    --gtest_filter="$race" >"$OUT/racecheck.log" 2>&1
  echo "racecheck exit $?"; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED" "$OUT/racecheck.log" | tail -4
fi
