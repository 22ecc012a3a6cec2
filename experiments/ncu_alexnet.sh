#!/usr/bin/env bash
# On the GPU machine: Nsight Compute on AlexNet's kernels at one batch size, one cold pass (the CUPTI profiler off,
# since ncu needs the counters to itself). Usage: ncu_alexnet.sh BATCH CONV_VARIANT KERNEL_REGEX COUNT
# Writes the report's text to $OUT/ncu-<variant>-<regex>.txt. Clocks are left as they are (--clock-control none).
set -uo pipefail
cd "$(dirname "$0")/.."
. experiments/device_env.sh
b=$1 v=$2 re=$3 count=$4
tag=$(echo "$v-$re" | tr -c 'A-Za-z0-9_.-' '_')
# EXTRA: more sweep flags (--precision tf32); NCU_SKIP: matching launches to skip first (conv3 is the third);
# NCU_MODEL: another model folder (default data/models/alexnet).
ncu --clock-control none --kernel-name "regex:$re" --launch-skip "${NCU_SKIP:-0}" --launch-count "$count" \
  --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section Occupancy \
  --section LaunchStats --section WarpStateStats --section SchedulerStats \
  .device/batchscope sweep --model "${NCU_MODEL:-data/models/alexnet}" --backend cuda --conv-variant "$v" --batches "$b" --reps 1 --warmup 0 \
  --no-profile --check-images 0 ${EXTRA:-} --out /tmp/ncu-sweep.csv >"$OUT/ncu-$tag.txt" 2>&1
echo "ncu $v $re: exit $?"
grep -E "^  [a-z_]+.*\(|Duration|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|Achieved Occupancy|Registers Per|Issue Slots Busy|Executed Ipc A|No Eligible|One or More|Stall|Theoretical Occupancy|Block Limit" "$OUT/ncu-$tag.txt" | head -${NCU_LINES:-80}
