#!/usr/bin/env bash
# On the GPU machine: hardware and scheduler counters of the main thread of profiled and unprofiled ECE 408 batch-1
# sweeps (N of each, alternating), with each process's warm median; probes/thread_counters.c does the counting.
set -uo pipefail
cd "$(dirname "$0")/../.."
. experiments/device_env.sh
cat /proc/sys/kernel/perf_event_paranoid
cc -O2 experiments/probes/thread_counters.c -o /tmp/tc || exit 1
mkdir -p $OUT/tc
for i in $(seq 1 ${N:-8}); do
  for m in prof off; do
    f=""; [ $m = off ] && f=--no-profile
    .device/batchscope sweep --model data/models/ece408 --backend cuda --batches 1 --reps 60000 --warmup 30 $f --out $OUT/tc/$m-$i.csv >/dev/null 2>&1 &
    pid=$!
    sleep 1.6
    c=$(/tmp/tc $pid 1)
    wait $pid
    med=$(python3 -c "
import csv
for r in csv.DictReader(open('$OUT/tc/$m-$i.csv')):
    if r['run']=='warm': print(r['total_ms_median'])")
    echo "$m $i median_ms=$med $c"
  done
done
rm -rf $OUT/tc
