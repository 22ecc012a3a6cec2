#!/usr/bin/env bash
# On the GPU machine: where does the profiler's bimodal batch-1 overhead come from (profiler-overhead.md)? Prints the
# CPU topology; runs a long ECE 408 batch-1 sweep (REPS passes) with and without the profiler, SAMPLES times each, and
# samples every thread of the process over 1 s of its warm passes: CPU time used (% of one CPU), the CPU it last ran
# on, and its context switches; then runs profiler_overhead.sh with the process confined to two hyperthreads of one
# core against two separate cores (and any CONFIGS_EXTRA; ROUNDS=0 skips this part). Logs packed into
# $OUT/threads.tar.gz, the summary in $OUT/threads/threads.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
. experiments/device_env.sh
mkdir -p "$OUT/threads"
log=$OUT/threads/threads.txt
{
  echo "binaries: $(cat .device/COMMIT 2>/dev/null)"; nvidia-smi -L
  lscpu | grep -E "^(CPU\(s\)|Thread|Core|Socket|NUMA|Model name)"
  lscpu -e 2>/dev/null
  nvidia-smi topo -m 2>/dev/null | head -5
  echo "tools: $(command -v perf strace ltrace gdb | tr '\n' ' ')"
} >"$log" 2>&1

sample() {  # $1: pid; prints per thread: tid comm cpu% last-cpu voluntary/involuntary switches over 2 s
  local pid=$1 a b
  a=$(for t in /proc/$pid/task/*; do echo "$(basename $t) $(awk '{print $14+$15}' $t/stat) $(awk '/^(non)?voluntary_ctxt/{printf "%s ", $2}' $t/status)"; done)
  sleep 1
  b=$(for t in /proc/$pid/task/*; do echo "$(basename $t) $(awk '{print $14+$15, $39}' $t/stat) $(awk '/^(non)?voluntary_ctxt/{printf "%s ", $2}' $t/status) $(tr ' ' '_' <$t/comm)"; done)
  python3 - "$a" "$b" <<'PY'
import sys
hz = 100.0
a = {l.split()[0]: l.split()[1:] for l in sys.argv[1].splitlines() if l.strip()}
for l in sys.argv[2].splitlines():
    f = l.split()
    if len(f) < 6 or f[0] not in a: continue
    tid, ticks, cpu, vol, invol, comm = f[0], int(f[1]), f[2], int(f[3]), int(f[4]), f[5]
    t0, v0, i0 = int(a[tid][0]), int(a[tid][1]), int(a[tid][2])
    print(f"  {tid:>8} {comm:<18} cpu {100 * (ticks - t0) / hz:5.0f} %  on cpu {cpu:>3}  switches +{vol - v0} vol +{invol - i0} invol")
PY
}

for s in $(seq 1 "${SAMPLES:-3}"); do
  for mode in profiled off; do
    flag=(); [ $mode = off ] && flag=(--no-profile)
    "$bin/batchscope" sweep --model data/models/ece408 --backend cuda --batches 1 --reps "${REPS:-100000}" --warmup 30 \
      "${flag[@]}" --out "$OUT/threads/long-$mode-$s.csv" >"$OUT/threads/long-$mode-$s.log" 2>&1 &
    pid=$!
    sleep "${SETTLE:-3}"
    { echo "-- sample $s, $mode (pid $pid)"; sample $pid; } >>"$log" 2>&1
    wait $pid
    python3 - "$OUT/threads/long-$mode-$s.csv" >>"$log" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    if r["run"] == "warm":
        keys = ["total_ms_median", "launch_ms", "memcpy_api_ms", "sync_ms", "host_ms", "conv_ms", "fc_ms"]
        print("  warm, us:", " ".join(f"{k.replace('_ms', '')}={float(r[k]) * 1e3:.1f}" for k in keys if r[k]))
PY
  done
done

# Two hyperthreads of CPU 0's core against CPU 0 and a CPU of another core (the same NUMA node where there are several).
sib=$(cut -d, -f2 /sys/devices/system/cpu/cpu0/topology/thread_siblings_list | cut -d- -f2)
other=$(for c in /sys/devices/system/cpu/cpu[0-9]*; do n=${c##*cpu}; [ "$n" != 0 ] && [ "$n" != "$sib" ] && echo "$n"; done | sort -n | head -1)
echo "siblings of cpu 0: $(cat /sys/devices/system/cpu/cpu0/topology/thread_siblings_list); other core: cpu $other" >>"$log"
if [ "${ROUNDS:-7}" != 0 ]; then
configs="off default"
[ "$sib" != 0 ] && configs="$configs off@0,$sib default@0,$sib"
configs="$configs off@0,$other default@0,$other ${CONFIGS_EXTRA:-}"
ROUNDS=${ROUNDS:-7} CONFIGS="$configs" OUT=$OUT/threads bash experiments/profiler_overhead.sh >>"$log" 2>&1
fi
cat "$log"
tar czf "$OUT/threads.tar.gz" -C "$OUT" --exclude threads/threads.txt threads && find "$OUT/threads" -type f ! -name threads.txt -delete
