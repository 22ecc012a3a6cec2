#!/usr/bin/env bash
# On the GPU machine: where does the cudnn backend's 16-bit fc6 GEMM run? Layer times from events with and
# without the profiler and with CUDA_LAUNCH_BLOCKING, and the CUPTI records of the profiled run (BATCHSCOPE_CUPTI_DUMP).
set -uo pipefail
cd "$(dirname "$0")/../.."
. experiments/device_env.sh
alexnet_model
common="--model data/models/alexnet --backend cudnn --precision ${P:-fp16} --batches ${B:-1024} --reps 3 --warmup 1 --host-memory pinned --check-images 1 --check-backend cpu"
for mode in profiled unprofiled blocking; do
  extra=""; env=""
  [ $mode = unprofiled ] && extra="--no-profile"
  [ $mode = blocking ] && env="CUDA_LAUNCH_BLOCKING=1"
  [ $mode = profiled ] && env="BATCHSCOPE_CUPTI_DUMP=$OUT/cupti_dump.tsv"
  env $env "$bin/batchscope" sweep $common $extra --out "$OUT/fc-$mode.csv" >"$OUT/fc-$mode.log" 2>&1
  echo "$mode: exit $?"
  grep -E "warm,(fc|relu6|pool5|flatten)" "$OUT/fc-$mode.layers.csv" | cut -d, -f10-16
done
grep -iE "nvjet|gemm|window\t1[5-9]|window\t20" "$OUT/cupti_dump.tsv" | tail -40
