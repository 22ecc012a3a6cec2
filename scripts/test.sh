#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs every test suite. GPU suites (CTest label
# 'gpu') skip with their reason where no GPU exists.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh "$@"
cd build
ctest -j"$(nproc)" --output-on-failure
