#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs every test suite; then the hardening run
# (scripts/check.sh: the CPU suites under ASan + UBSan, and every fuzz harness for 10 s). GPU suites (CTest
# label 'gpu') skip once with their reason where no GPU exists.
#   scripts/test.sh [--quick] [CMAKE ARGS...]     --quick: the normal build's tests only
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
args=()
for a in "$@"; do
  if [ "$a" = --quick ]; then quick=1; else args+=("$a"); fi
done
# Each step's wall time goes to stderr at the end (where CI's 20 minutes go).
times=()
step() {  # step NAME COMMAND...
  local t0=$SECONDS
  "${@:2}"
  times+=("$1 $((SECONDS - t0)) s")
}
run_ctest() { (cd build && ctest -j"$(nproc)" --output-on-failure); }
step setup scripts/setup.sh
step build scripts/build.sh ${args[@]+"${args[@]}"}
step ctest run_ctest
if [ $quick -eq 0 ]; then
  step check scripts/check.sh
fi
summary=$(IFS=,; echo "${times[*]}")
echo "test: ${summary//,/, }; $SECONDS s in all" >&2
