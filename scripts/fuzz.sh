#!/usr/bin/env bash
# Runs every libFuzzer harness of build-check/ (scripts/check.sh builds it) for SECONDS each, two at a time,
# seeded from the test fixtures (fuzz/make_seeds.py) and the kept corpus (fuzz/corpus.tar.xz, unpacked into
# build-check/fuzz/corpus/<harness>/). New inputs go to build-check/fuzz/found/<harness>/ (fuzz/minimize_corpus.py
# keeps those that add coverage in the archive); a crash, leak, timeout or out-of-memory writes the input to
# build-check/fuzz/artifacts/ and fails the script. One summary line per harness (executions, coverage).
#   scripts/fuzz.sh [SECONDS=30] [HARNESS ...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-30}"
shift || true
harnesses=("$@")
B=build-check/fuzz
if [ ${#harnesses[@]} -eq 0 ]; then
  harnesses=(npy npz idx params pickle model_json mxnet_symbol)
  [ ! -x "$B/fuzz_onnx" ] || harnesses+=(onnx)  # built where the ONNX libraries are
fi
for h in "${harnesses[@]}"; do
  [ -x "$B/fuzz_$h" ] || { echo "fuzz: $B/fuzz_$h is missing (run scripts/check.sh, or configure with -DBATCHSCOPE_FUZZ=ON)" >&2; exit 1; }
done
rm -rf "$B/seeds" "$B/artifacts" "$B/logs" "$B/corpus"
mkdir -p "$B/seeds" "$B/artifacts" "$B/logs" "$B/model-folder" "$B/corpus"
/usr/bin/python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' fuzz/corpus.tar.xz "$B/corpus"
/usr/bin/python3 fuzz/make_seeds.py . "$B/seeds"

dict_of() {
  case "$1" in
    npy|npz) echo fuzz/dicts/npy.dict ;;
    pickle) echo fuzz/dicts/pickle.dict ;;
    model_json|mxnet_symbol) echo fuzz/dicts/json.dict ;;
    *) echo "" ;;
  esac
}

run_one() {
  local h="$1" dict
  dict="$(dict_of "$h")"
  mkdir -p "$B/found/$h" "$B/seeds/$h" "$B/corpus/$h"
  # -rss_limit_mb bounds memory (the harnesses cap tensors at 64 MiB); -timeout flags a hang (one input > 10 s).
  "$B/fuzz_$h" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
      -artifact_prefix="$B/artifacts/$h-" ${dict:+-dict="$dict"} \
      "$B/found/$h" "$B/seeds/$h" "$B/corpus/$h" > "$B/logs/$h.log" 2>&1
}

jobs_max="$(nproc)"
pids=() names=()
status=0
for h in "${harnesses[@]}"; do
  echo "fuzz: $h for ${seconds}s" >&2
  run_one "$h" & pids+=($!) names+=("$h")
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do sleep 1; done
done
for i in "${!pids[@]}"; do
  if ! wait "${pids[$i]}"; then
    status=1
    echo "fuzz: ${names[$i]} FAILED; its input is under $B/artifacts/, the end of its log:" >&2
    tail -n 40 "$B/logs/${names[$i]}.log" >&2
  fi
done
printf '%-14s %12s %8s %8s %8s\n' harness executions exec/s cov corpus
for h in "${harnesses[@]}"; do
  log="$B/logs/$h.log"
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | awk '{print $2}' | tail -1)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | awk '{print $2}' | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | awk '{print $2}' | tail -1)
  corp=$(grep -o 'corp: [0-9]*' "$log" | tail -1 | awk '{print $2}')
  printf '%-14s %12s %8s %8s %8s\n' "$h" "${execs:--}" "${rate:--}" "${cov:--}" "${corp:--}"
done
exit $status
