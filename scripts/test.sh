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
scripts/setup.sh
scripts/build.sh ${args[@]+"${args[@]}"}
(cd build && ctest -j"$(nproc)" --output-on-failure)
if [ $quick -eq 0 ]; then
  scripts/check.sh
fi
