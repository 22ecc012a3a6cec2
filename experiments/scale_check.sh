#!/usr/bin/env bash
# On the GPU machine (one or more GPUs): the MPI data-parallel runs of issue 14 and the throughput / latency
# percentiles of issue 13. Binaries come from .device/pack.tar.xz (scripts/pack_device.sh); logs and CSVs go to
# $OUT as one tarball (the device tool returns at most 8 files). Knobs: GPUS (ranks; default: every GPU),
# AB_BATCH (AlexNet batch per GPU, default 1024), REPS (default 10).
set -uo pipefail
cd "$(dirname "$0")/.."
. experiments/device_env.sh
mkdir -p "$OUT" scale
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
G=${GPUS:-$(nvidia-smi -L | wc -l)}
{ nvidia-smi -L; mpirun --version | head -1; echo "binaries built from: $(cat .device/COMMIT)"; ldd $bin/batchscope | grep -E "mpi|not found"; } 2>&1 | tee scale/device.txt
mpi="mpirun -np $G --bind-to none"
step() { echo "== $1 ($(date +%T))"; }
alexnet_model

if [ "${TESTS:-1}" = 1 ]; then
  step "GPU test: concurrency hazard"
  $bin/test_gpu --gtest_brief=1 --gtest_filter='GpuEngine.Concurrency*' 2>&1 | tail -3
fi
if [ "${MPI:-1}" = 1 ] && [ "$G" -gt 1 ]; then
  step "ECE 408 infer, 10,000 images split over $G GPUs"
  $bin/batchscope infer --model data/models/ece408 --backend cuda 2>&1 | tail -2 | tee scale/ece408-1gpu.txt
  $mpi $bin/batchscope infer --model data/models/ece408 --backend cuda 2>&1 | tail -4 | tee scale/ece408-${G}gpu.txt
  step "AlexNet sweep, batch ${AB_BATCH:-1024} per GPU, $G ranks (per-rank batch) + one-rank baseline"
  $mpi $bin/batchscope sweep --model data/models/alexnet --backend cuda --batches ${AB_BATCH:-1024} --per-rank-batch \
    --host-memory pinned --reps ${REPS:-10} --check-images 2 --check-backend cpu --out scale/alexnet-sweep-${G}gpu.csv \
    >scale/alexnet-sweep-${G}gpu.log 2>&1; echo "exit $?"; grep -A8 "^== alexnet" scale/alexnet-sweep-${G}gpu.log
  step "AlexNet throughput, 16384 images per GPU, batch 256,1024, $G ranks (per-rank batch)"
  $mpi $bin/batchscope throughput --model data/models/alexnet --backend cuda --images 16384 --batch 256,1024 --per-rank-batch \
    --out scale/alexnet-throughput-${G}gpu.csv >scale/alexnet-throughput-${G}gpu.log 2>&1; echo "exit $?"
  grep -A12 "^== throughput" scale/alexnet-throughput-${G}gpu.log
  step "failure path: rank 1 fails in its first warm pass"
  BATCHSCOPE_FAULT=1:warm $mpi -x BATCHSCOPE_FAULT $bin/batchscope sweep --model data/models/ece408 --backend cuda --batches 64 \
    --per-rank-batch --out scale/fail.csv 2>&1 | grep "^batchscope"; ls scale/fail* 2>/dev/null || echo "no fail.* files"
fi
if [ "${THROUGHPUT:-1}" = 1 ]; then
  step "one GPU: throughput over batch sizes (latency against throughput), streams 1 and 2"
  for s in 1 2; do
    CUDA_VISIBLE_DEVICES=0 $bin/batchscope throughput --model data/models/alexnet --backend cuda --images 8192 \
      --batch 1,4,16,64,256,1024 --streams $s --out scale/alexnet-throughput-1gpu-s$s.csv >scale/alexnet-throughput-1gpu-s$s.log 2>&1
    echo "streams $s: exit $?"; grep -A9 "^== throughput" scale/alexnet-throughput-1gpu-s$s.log
  done
  step "percentiles: ECE 408 batch 1 and AlexNet batch 1, --min-time 3"
  for m in ece408 alexnet; do
    CUDA_VISIBLE_DEVICES=0 $bin/batchscope sweep --model data/models/$m --backend cuda --batches 1 --min-time 3 --check-images 0 \
      --out scale/$m-b1-percentiles.csv >scale/$m-b1-percentiles.log 2>&1; echo "$m: exit $?"; grep -A3 "^== $m\|^== alexnet" scale/$m-b1-percentiles.log | head -5
  done
fi
tar -czf "$OUT/scale.tar.gz" scale
