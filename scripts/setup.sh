#!/usr/bin/env bash
# Installs batchscope's build and run dependencies from Debian's packages.
# Idempotent: does nothing when every package is already installed. Run as root (or with sudo).
set -euo pipefail
packages=(
  build-essential cmake pkg-config
  ninja-build              # scripts/build.sh and check.sh build with Ninja
  libopenblas-dev          # SGEMM for the cpu backend
  nlohmann-json3-dev       # model.json, MXNet symbol files, sweep metadata
  libcli11-dev             # command-line parsing
  libopenmpi-dev openmpi-bin  # data-parallel runs over MPI (mpirun -np N batchscope ...)
  libzip-dev zlib1g-dev    # .npz (zip) and gzipped IDX files
  libonnx-dev libprotobuf-dev  # import-onnx: the ONNX protobuf classes
  libgtest-dev             # the test suites
  libopencv-core-dev libopencv-imgproc-dev libopencv-imgcodecs-dev  # classify: JPEG/PNG decode and resize
  python3 python3-numpy python3-matplotlib  # fixtures, golden values and plots
  python3-jsonschema       # the timeline export (--trace) checked against the trace-event schema
  clang libclang-rt-14-dev libomp-14-dev    # scripts/check.sh: ASan + UBSan build, libFuzzer harnesses
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present" >&2
  exit 0
fi
echo "setup: installing ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
