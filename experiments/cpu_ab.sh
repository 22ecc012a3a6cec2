#!/usr/bin/env bash
# On this machine (no GPU): ECE 408 on the cpu backend, two binaries alternating ROUNDS rounds (default 5), each round
# `sweep --backend cpu --batches BATCHES --reps REPS --warmup 3 --check-images 0`; prints per batch the median over
# rounds of each binary's warm median, total and per category (conv, act, fc), and the rounds' spread.
# Usage: experiments/cpu_ab.sh BASE_BATCHSCOPE NEW_BATCHSCOPE OUT_DIR   (a base pack's binary wants its lib/ on
# LD_LIBRARY_PATH: BASE_LIB=/path/to/lib)
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: experiments/cpu_ab.sh BASE_BATCHSCOPE NEW_BATCHSCOPE OUT_DIR" >&2; exit 2; }
base=$1 new=$2 out=$3
cd "$(dirname "$0")/.."
mkdir -p "$out"
for r in $(seq 1 "${ROUNDS:-5}"); do
  for v in base new; do
    bin=$base; [ $v = new ] && bin=$new
    echo "round $r: $v" >&2
    env ${BASE_LIB:+LD_LIBRARY_PATH=$BASE_LIB} "$bin" sweep --model data/models/ece408 --backend cpu --batches "${BATCHES:-1,16,64,256}" \
      --reps "${REPS:-100}" --warmup 3 --check-images 0 --out "$out/$v-$r.csv" >/dev/null 2>"$out/$v-$r.log"
  done
done
python3 - "$out" <<'PY'
import csv, glob, statistics as st, sys
out = sys.argv[1]
res = {}
for v in ("base", "new"):
    for f in sorted(glob.glob(f"{out}/{v}-*[0-9].csv")):
        for r in csv.DictReader(open(f)):
            if r["run"] == "warm":
                for k in ("total_ms_median", "conv_ms", "act_ms", "fc_ms"):
                    res.setdefault((v, int(r["batch"]), k), []).append(float(r[k]))
print("| batch | base ms | new ms | new/base | act base -> new | conv base -> new | fc base -> new | rounds' range base; new |")
print("|---|---|---|---|---|---|---|---|")
for b in sorted({k[1] for k in res}):
    m = lambda v, k: st.median(res[(v, b, k)])
    rng = lambda v: f"{min(res[(v, b, 'total_ms_median')]):.3f}-{max(res[(v, b, 'total_ms_median')]):.3f}"
    print(f"| {b} | {m('base', 'total_ms_median'):.3f} | {m('new', 'total_ms_median'):.3f} | "
          f"{m('new', 'total_ms_median') / m('base', 'total_ms_median'):.3f} | {m('base', 'act_ms'):.3f} -> {m('new', 'act_ms'):.3f} | "
          f"{m('base', 'conv_ms'):.3f} -> {m('new', 'conv_ms'):.3f} | {m('base', 'fc_ms'):.3f} -> {m('new', 'fc_ms'):.3f} | {rng('base')}; {rng('new')} |")
PY
