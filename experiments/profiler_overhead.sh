#!/usr/bin/env bash
# On the GPU machine: the profiler's own overhead at batch 1 (and 64). Each configuration is a separate
# process (`batchscope sweep --batches 1,64 --reps R --warmup W`), the configurations run in turn, and the
# whole round is repeated ROUNDS times, so that drift in clocks or host load falls on every configuration
# alike. Prints each process's warm median per forward pass and, per configuration, the median over rounds.
# CONFIGS: "off" (--no-profile), "default" (the profiler as shipped), "timed" (--profiled-passes timed: the timed
# passes are the profiled ones, as before the tenth session), "attrs=A,B" (BATCHSCOPE_CUPTI_ATTRS: CUPTI activity
# attributes, see cupti_profiler.cpp), or a BATCHSCOPE_CUPTI_KINDS value ("kernel,memcpy"); any of them with "@CPUS"
# appended runs under `taskset -c CPUS` ("default@0,8").
# Two figures per configuration: the timed passes' median (total_ms_median, what a sweep reports as its latency) and
# the profiled passes' median (breakdown_ms_median, what the breakdown partitions; the same passes under "timed").
set -uo pipefail
cd "$(dirname "$0")/.."
. experiments/device_env.sh
mkdir -p "$OUT/overhead"
ROUNDS=${ROUNDS:-5} REPS=${REPS:-300} WARMUP=${WARMUP:-30}
CONFIGS=${CONFIGS:-off default}
EXTRA=${EXTRA:-}
for r in $(seq 1 "$ROUNDS"); do
  for cc in $CONFIGS; do
    c=${cc%@*} wrap=()
    [ "$c" != "$cc" ] && wrap=(taskset -c "${cc#*@}")  # "default@0,8": the process confined to CPUs 0 and 8
    f="$OUT/overhead/r$r-$(echo "$cc" | tr '=,@' '_+-').csv"
    run=("${wrap[@]}" "$bin/batchscope" sweep --model data/models/ece408 --backend cuda --batches 1,64 --reps "$REPS" --warmup "$WARMUP" $EXTRA --out "$f")
    case $c in
      attrs=*) BATCHSCOPE_CUPTI_ATTRS=${c#attrs=} "${run[@]}" ;;
      off) "${run[@]}" --no-profile ;;
      default) "${run[@]}" ;;
      timed) "${run[@]}" --profiled-passes timed ;;
      *) BATCHSCOPE_CUPTI_KINDS=$c "${run[@]}" ;;
    esac >"${f%.csv}.log" 2>&1 || echo "round $r $cc: exit $?"
  done
done
/usr/bin/python3 - "$OUT/overhead" "$ROUNDS" $CONFIGS <<'PY'
import csv, statistics, sys
d, rounds, configs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def warm(path, batch, column):
    for row in csv.DictReader(open(path)):
        if row["run"] == "warm" and row["batch"] == str(batch):
            return float(row.get(column) or row["total_ms_median"])  # no breakdown column: binaries before it, or off
res = {}
for column, what in (("total_ms_median", "timed passes"), ("breakdown_ms_median", "profiled passes")):
    for c in configs:
        for b in (1, 64):
            v = []
            for r in range(1, rounds + 1):
                try: v.append(warm(f"{d}/r{r}-{c.replace('=', '_').replace(',', '+').replace('@', '-')}.csv", b, column))
                except Exception: pass
            res[(what, c, b)] = v
    print(f"{what} ({column}): config | batch | per-round warm medians, ms | median of rounds, ms | vs off")
    for c in configs:
        for b in (1, 64):
            v = res[(what, c, b)]
            if not v: print(c, b, "no data"); continue
            m = statistics.median(v)
            off = res.get(("timed passes", "off", b)) or [float("nan")]
            rel = (m / statistics.median(off) - 1) * 100
            print(f"{c} | {b} | {' '.join(f'{x:.4f}' for x in v)} | {m:.4f} | {rel:+.1f} %")
PY
