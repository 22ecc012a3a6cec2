#!/usr/bin/env bash
# cmake --install (issue 13): the two commands, the plotting scripts and the shipped data land under a prefix, and
# the installed commands find their data and scripts there, from any working directory, with no source tree named in
# the environment. Proof that they read the installed copies and not the source tree compiled in as the last
# fallback: with an installed file removed, the error names the installed path.
# usage: check_install.sh CMAKE BUILD_DIR SOURCE_DIR
set -uo pipefail
cmake=$1 build=$2 src=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; fails=$((fails + 1)); fi; }
unset BATCHSCOPE_SOURCE_DIR BATCHSCOPE_DATA
prefix=$tmp/prefix
"$cmake" --install "$build" --prefix "$prefix" >"$tmp/install.log" || { cat "$tmp/install.log"; exit 1; }
share=$prefix/share/batchscope
check "commands in bin" '[ -x "$prefix/bin/batchscope" ] && [ -x "$prefix/bin/batchscope-weights" ]'
check "plotting scripts" '[ -f "$share/plots/report.py" ] && [ -f "$share/plots/figures.py" ] && [ -f "$share/plots/sweepdata.py" ]'
check "shipped data" '[ -f "$share/data/datasets.json" ] && [ -f "$share/data/models/ece408/model.json" ]'
check "no generated AlexNet weights" '! ls "$share"/data/models/alexnet/*.npy >/dev/null 2>&1'

cd "$tmp"  # nowhere near the source tree
bs=$prefix/bin/batchscope
"$bs" infer --model "$share/data/models/ece408" --backend cpu --images 300 >"$tmp/installed.txt" 2>&1
"$build/app/batchscope" infer --model "$src/data/models/ece408" --backend cpu --images 300 >"$tmp/built.txt" 2>&1
check "installed infer runs on the shipped test set" 'grep -q "^Correctness" "$tmp/installed.txt"'
check "and agrees with the build tree's" '[ "$(grep ^Correctness "$tmp/installed.txt")" = "$(grep ^Correctness "$tmp/built.txt")" ]'
"$bs" sweep --model "$share/data/models/ece408" --backend cpu --batches 1,2 --reps 2 --warmup 0 --out "$tmp/s.csv" >/dev/null 2>&1
check "installed sweep" '[ -f "$tmp/s.csv" ]'
if /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
  "$bs" report "$tmp/s.csv" --out "$tmp/report" >"$tmp/report.log" 2>&1
  check "installed report draws with the installed scripts" '[ -f "$tmp/report/report.md" ]'
fi
"$prefix/bin/batchscope-weights" --help >/dev/null 2>&1
check "batchscope-weights runs" '[ $? -eq 0 ]'

mv "$share/data/datasets.json" "$share/data/datasets.json.away"
"$bs" infer --model "$share/data/models/ece408" --backend cpu --images 10 >"$tmp/nodata.txt" 2>&1
check "data read from the prefix (error names $share/data/datasets.json)" 'grep -q "$share/data/datasets.json" "$tmp/nodata.txt"'
mv "$share/plots/report.py" "$share/plots/report.py.away"
"$bs" report "$tmp/s.csv" --out "$tmp/report2" >"$tmp/noplots.txt" 2>&1
check "scripts read from the prefix (error names $share/plots/report.py)" 'grep -q "$share/plots/report.py" "$tmp/noplots.txt"'
[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "install: OK"
