# Sourced by the scripts that run on the GPU machine, from the repository root: the environment every one of them
# sets up. OUT defaults to ./out; bin is where the binaries are ($BIN, default .device, unpacked from
# .device/pack.tar.xz when scripts/pack_device.sh left one); the binaries find the project's data and the carried
# libraries; alexnet_model makes data/models/alexnet from synthetic weights (seed 1) unless it already has weights.
OUT=${OUT:-out}
mkdir -p "$OUT"
bin=${BIN:-.device}
export BATCHSCOPE_SOURCE_DIR=$PWD BATCHSCOPE_DATA=$PWD/data
export LD_LIBRARY_PATH=$PWD/.device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
[ "$bin" = .device ] && [ -f .device/pack.tar.xz ] && tar -C .device -xJf .device/pack.tar.xz

alexnet_model() {
  [ -f data/models/alexnet/conv1_weight.npy ] && return 0
  mkdir -p weights
  [ -f weights/alexnet-seed1.npy ] ||
    "$bin/batchscope-weights" synthesize --model alexnet --seed 1 --out weights/alexnet-seed1.npy >/dev/null
  "$bin/batchscope-weights" import-bvlc weights/alexnet-seed1.npy --out data/models/alexnet >/dev/null
}

# The device and the binaries' commit, into $OUT/device.txt (every record names both).
record_device() { { nvidia-smi -L; cat .device/COMMIT; } >"$OUT/device.txt" 2>&1; }

# A/B against the binaries before: the pack's own base/ (scripts/pack_device.sh BASE_PACK=...), else
# .device/base.tar.xz (scripts/pack_device.sh of the earlier commit, moved aside before packing the new one, then back),
# unpacked into .device/base; calls "$@" ROUND WHO for ROUNDS rounds (default 2), WHO base and new in an order that
# alternates from round to round.
ab_rounds() {
  [ -x .device/base/batchscope ] || { mkdir -p .device/base && tar -C .device/base -xJf .device/base.tar.xz; }
  local round who order
  for round in $(seq 1 "${ROUNDS:-2}"); do
    order="base new"; [ $((round % 2)) = 0 ] && order="new base"
    for who in $order; do "$@" "$round" "$who"; done
  done
}
# batchscope of WHO (base or new), with that pack's libraries: bs_of WHO ARGS...
bs_of() {
  local b=$bin; [ "$1" = base ] && b=.device/base
  shift
  LD_LIBRARY_PATH=$PWD/$b/lib:$LD_LIBRARY_PATH "$b/batchscope" "$@"
}
