#!/usr/bin/env bash
# Installs cuobjdump and nvdisasm into /opt/cudatools (or $1), for reading SASS on a machine whose CUDA toolkit lacks
# them (the development machine's CUDA 13.0 has nvcc and ptxas only): they come from PyPI's Triton wheel, which carries
# NVIDIA's binaries (13.1 in triton 3.9.0; about 285 MB to download, 6 MB kept). Not part of the build or the tests:
# experiments/sass_loops.py reads a build's kernels with them (HOPPER.md: compile and read the SASS before device time).
set -euo pipefail
dest=${1:-/opt/cudatools}
if [ -x "$dest/cuobjdump" ] && [ -x "$dest/nvdisasm" ]; then
  echo "sass_tools: $dest has cuobjdump and nvdisasm" >&2
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download --no-deps --only-binary=:all: --index-url https://pypi.org/simple --python-version 3.11 \
  --platform manylinux_2_27_x86_64 --platform manylinux_2_28_x86_64 -d "$tmp" triton==3.9.0 >&2
mkdir -p "$dest"
unzip -o -j "$tmp"/triton-*.whl 'triton/backends/nvidia/bin/cuobjdump' 'triton/backends/nvidia/bin/nvdisasm' -d "$dest" >/dev/null
chmod +x "$dest/cuobjdump" "$dest/nvdisasm"
"$dest/cuobjdump" --version | tail -1 >&2
