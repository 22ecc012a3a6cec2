#!/usr/bin/env bash
# The hardening run (part of scripts/test.sh unless --quick): builds the CPU code with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer into ./build-check (no CUDA, no OpenCV, no MPI: Open MPI's own start-up allocations
# would read as leaks; this build thereby checks that batchscope runs without MPI), runs the CPU test suites there (a
# sanitizer finding fails the test), then runs every libFuzzer harness for FUZZ_SECONDS each (default 10: the kept
# corpus replayed, then new inputs; longer runs: FUZZ_SECONDS=300 scripts/check.sh, or scripts/fuzz.sh 300).
# Two tests are left out; the normal build runs both. The 10,000-image cpu-ref Correctness run: 6 minutes under the
# sanitizers, and it reads no file that the other tests do not. report_and_figures: 52 s of Python drawing figures,
# where the instrumented binary only starts report.py (the cli test's report run covers that).
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in clang clang++; do
  command -v "$tool" >/dev/null || { echo "check: $tool is missing (scripts/setup.sh installs it)" >&2; exit 1; }
done
echo "check: configuring build-check (clang, ASan + UBSan, libFuzzer)" >&2
source scripts/ninja_dir.sh
ninja_dir check build-check
# -O1 with line tables (what ASan recommends; stack traces keep file and line), unity batches as scripts/build.sh.
CC=clang CXX=clang++ cmake -S . -B build-check -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
  -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=8 -DBATCHSCOPE_WITH_CUDA=OFF \
  -DBATCHSCOPE_WITH_OPENCV=OFF -DBATCHSCOPE_WITH_MPI=OFF -DBATCHSCOPE_SANITIZE=ON -DBATCHSCOPE_FUZZ=ON >/dev/null
echo "check: building" >&2
cmake --build build-check -j"$(nproc)"
echo "check: built in $SECONDS s; CPU suites under ASan + UBSan" >&2
(cd build-check && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest -j"$(nproc)" -L cpu -E '^(Ece408\.CpuRefReproducesPublishedCorrectness|report_and_figures)$' --output-on-failure)
echo "check: at $SECONDS s; fuzzing, ${FUZZ_SECONDS:-10} s per harness" >&2
scripts/fuzz.sh "${FUZZ_SECONDS:-10}"
