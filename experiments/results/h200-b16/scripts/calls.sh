# The calls as they ran, one function each (run: bash calls.sh N from the repository root on the GPU machine; carry
# .device/pack.tar.xz built as each call's comment says).
set -uo pipefail

# Per-layer warm medians in us from sweeps' .layers.csv files (several rounds of one binary: the median over rounds), one row
# per layer, one column per batch, the kernels' sum last: layers_us FILE.layers.csv ...
layers_us() {
python3 - "$@" <<'PY'
import csv
import statistics
import sys

KERNELS = ["conv", "pool", "fc", "act", "lrn", "softmax", "other_kernel"]
per, tot, order = {}, {}, []
for p in sys.argv[1:]:
    for r in csv.DictReader(open(p)):
        if r["run"] == "warm":
            b = int(r["batch"])
            if r["layer"] not in order:
                order.append(r["layer"])
            per.setdefault((r["layer"], b), []).append(1000 * float(r["median_ms"] or 0))
    for r in csv.DictReader(open(p.replace(".layers.csv", ".csv"))):
        if r["run"] == "warm":
            tot.setdefault(int(r["batch"]), []).append(1000 * sum(float(r[k + "_ms"] or 0) for k in KERNELS))
batches = sorted(tot)
print("| layer | " + " | ".join(f"{b} img" for b in batches) + " |")
print("|---|" + "---:|" * len(batches))
for l in order:
    print(f"| {l} | " + " | ".join(f"{statistics.median(per[(l, b)]):.1f}" if (l, b) in per else "" for b in batches) + " |")
print("| kernels | " + " | ".join(f"{statistics.median(tot[b]):.1f}" for b in batches) + " |")
PY
}

call1() {
# Call 1 (twenty-eighth session): where AlexNet's time goes at 1-16 images, main 2b1acfd (LINEINFO=0 PACK="batchscope
# test_gpu"). 1) fp16 and FP32 sweeps at 1, 2, 4, 8, 12, 16 images, 2 rounds, per layer; 2) ncu (full set, clocks as
# they are) over every kernel of one fp16 pass at 16 images, and of one at 8.
. experiments/device_env.sh
record_device; python3 experiments/results/h200-pdl-probe/scripts/gen_weights.py data/models/alexnet
SECONDS=0
COMMON="--model data/models/alexnet --backend cuda --reps 20 --warmup 3 --host-memory pinned --check-images 1 --check-backend cpu"
mkdir -p sw
for r in 1 2; do for p in fp16 fp32; do
  $bin/batchscope sweep $COMMON --batches 1,2,4,8,12,16 --precision $p --out sw/$p-r$r.csv > sw/$p-r$r.log 2>&1 || echo "sweep $p exit $?" >> $OUT/summary.md
done; done
for p in fp16 fp32; do { echo "## $p, per layer (us, median of 2 rounds)"; layers_us sw/$p-r*.layers.csv; grep -h check sw/$p-r1.log | head -2; echo; } >> $OUT/summary.md 2>&1; done
NCU="/usr/local/cuda/bin/ncu --set full --page raw --csv --clock-control none"
for b in 16 8; do
  timeout 200 $NCU $bin/batchscope sweep --model data/models/alexnet --backend cuda --batches $b --precision fp16 --reps 1 --warmup 0 --no-profile --check-images 0 --out /tmp/n.csv > ncu-$b.csv 2>ncu-$b.err
  { echo "### ncu, fp16, $b images, every kernel of one cold pass"; python3 experiments/ncu_raw_table.py ncu-$b.csv; echo; } >> $OUT/summary.md 2>&1
done
finish sw ncu-16.csv ncu-8.csv ncu-*.err
}

call2() {
# Call 2: the split-K of the wgmma cluster versions forced (probe: tile_splits returns min(BS_SPLITS, cluster, k tiles / 2)
# where BS_SPLITS is set; patches/probe-splits.patch on 2b1acfd, LINEINFO=0 PACK=batchscope BASE_PACK=main's pack).
# tune at 12, 16, 24 images, fp16, every 16-bit wgmma tile version, each split count; then the network with the best
# table of each split count, base alongside.
. experiments/device_env.sh
record_device; python3 experiments/results/h200-pdl-probe/scripts/gen_weights.py data/models/alexnet
SECONDS=0
V=38,41,42,45,46,60,61,66,68,69,70,71
mkdir -p tn
for s in auto 2 3 4 5 6 8; do
  if [ $s = auto ]; then unset BS_SPLITS; else export BS_SPLITS=$s; fi
  timeout 120 $bin/batchscope tune --model data/models/alexnet --precision fp16 --batches 12,16,24 --reps 10 --warmup 3 \
    --conv-variants $V --fc-variants 17 --out tn/s$s.json > tn/s$s.log 2>&1; echo "tune splits $s exit $? ($SECONDS s)" >> $OUT/summary.md
  { echo "### splits $s"; python3 experiments/tune_summary.py tn/s$s.json 2>&1 | grep -E "^conv[2-5]"; } >> $OUT/summary.md
done
unset BS_SPLITS
finish tn
}

# What calls 3-5 share. setup: the environment, the device line, the weights. tests FILTER (empty: all) TIMEOUT: test_gpu
# into $OUT/summary.md. ab_fp16_bf16 BATCHES TITLE LAYERS...: AlexNet fp16 / bf16 kernels, base against new, 2 rounds
# alternating, and per layer. sanitize FILTER: memcheck and racecheck.
setup() {
  . experiments/device_env.sh
  record_device; python3 experiments/results/h200-pdl-probe/scripts/gen_weights.py data/models/alexnet
  SECONDS=0
  T=$bin/test_gpu
}
tests() {
  timeout "$2" $T --gtest_brief=1 ${1:+--gtest_filter="$1"} > $OUT/tests.log 2>&1
  echo "tests exit $? ($SECONDS s): $(grep -E '^\[  PASSED|^\[  FAILED|tests ran' $OUT/tests.log | tr '\n' ' ')" > $OUT/summary.md
  grep -E "FAILED|Failure" $OUT/tests.log | head -20 >> $OUT/summary.md
}
ab_fp16_bf16() {
  local batches=$1 title=$2 L; shift 2
  COMMON="--model data/models/alexnet --backend cuda --reps 20 --warmup 3 --host-memory pinned --check-images 1 --check-backend cpu"
  mkdir -p ab
  point() {
    local r=$1 w=$2 p
    for p in fp16 bf16; do bs_of $w sweep $COMMON --batches $batches --precision $p --out ab/$w-$p-r$r.csv > ab/$w-$p-r$r.log 2>&1 || echo "$w $p exit $?" >> $OUT/summary.md; done
    echo "round $r $w ($SECONDS s)"
  }
  ROUNDS=2 ab_rounds point
  { echo "## $title, kernels"; python3 experiments/ab_compare.py ab | grep -v missing
    for L in "$@"; do echo; echo "### $L"; python3 experiments/ab_compare.py ab $L | tail -n 16; done
  } >> $OUT/summary.md 2>&1
}
sanitize() {
  local tool
  for tool in memcheck racecheck; do
    timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool $tool --print-limit 5 $T --gtest_brief=1 --gtest_filter="$1" > $tool.log 2>&1
    echo "$tool exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $tool.log | tr '\n' ' ')" >> $OUT/summary.md
  done
}
# The end of a call: the total time, FILES... into $OUT/raw.tar.xz, the summary printed.
finish() {
  echo "total $SECONDS s" >> $OUT/summary.md
  tar cJf $OUT/raw.tar.xz "$@" 2>/dev/null
  cat $OUT/summary.md
}
# ncu over the kernels matching REGEX (COUNT launches: tail of the table) of one fp16 pass, base and new, at each batch:
# ncu_ab REGEX COUNT WHAT BATCHES...
ncu_ab() {
  local rx=$1 count=$2 what=$3 b
  shift 3
  NCU="/usr/local/cuda/bin/ncu --set full --page raw --csv --clock-control none"
  SW="sweep --model data/models/alexnet --backend cuda --precision fp16 --reps 1 --warmup 0 --no-profile --check-images 0"
  for b in "$@"; do
    timeout 100 $NCU --kernel-name regex:$rx --launch-count $count $bin/batchscope $SW --batches $b --out /tmp/n.csv > ncu-new-$b.csv 2>/dev/null
    timeout 100 $NCU --kernel-name regex:$rx --launch-count $count .device/base/batchscope $SW --batches $b --out /tmp/n.csv > ncu-base-$b.csv 2>/dev/null
    { echo; echo "### ncu, $what at $b images (base, new; $count launches each)"; python3 experiments/ncu_raw_table.py ncu-base-$b.csv base base; python3 experiments/ncu_raw_table.py ncu-new-$b.csv new new | tail -n $count; } >> $OUT/summary.md 2>&1
  done
}
ncu_repack() { ncu_ab s2d 2 "the repack" 16 256; }

call3() {
# Call 3: v38's repack staged in shared memory (s2d_staged_kernel). Pack: new = the change (LINEINFO=0 PACK="batchscope
# test_gpu" BASE_PACK=main 2b1acfd's pack). 1) v38's tests, its op cases, the 16-bit input test; 2) AlexNet fp16 / bf16
# kernels, base against new, 2 rounds alternating, 1-1,024 images, conv1 per layer; 3) memcheck and racecheck over GpuS2d;
# 4) ncu on the repack at 16 and 256 images; 5) tune conv2 between v45 and its TMA twin v66 at 8-1,024 images.
setup
tests 'GpuS2d.*:*cuda_conv38_*:GpuTransfers.SixteenBit*:GpuHeuristic.*' 200
ab_fp16_bf16 1,2,4,8,16,32,128,1024 "main 2b1acfd (base) -> staged repack (new)" conv1
sanitize 'GpuS2d.*'
ncu_repack
timeout 150 $bin/batchscope tune --model data/models/alexnet --precision fp16 --batches 8,32,64,128,256,1024 --reps 10 --warmup 3 \
  --conv-variants 38,45,66 --fc-variants 17 --out tune-c2.json > tune-c2.log 2>&1; echo "tune exit $?" >> $OUT/summary.md
python3 experiments/tune_summary.py tune-c2.json 2>&1 | grep -E "^conv2" >> $OUT/summary.md
finish ab memcheck.log racecheck.log ncu-*.csv tune-c2.* $OUT/tests.log
}

call4() {
# Call 4: v38's staged repack for stride 4 over 3 channels, compile-time loops (s2d_staged_kernel), and auto's v66 for
# conv2 under two waves. Pack as call 3's (new: the commit in summaries.md). 1) the whole test_gpu; 2)-4) as call 3.
setup
tests '' 300
ab_fp16_bf16 1,2,4,8,16,32,128,1024 "main 2b1acfd (base) -> staged repack + conv2 v66 (new)" conv1 conv2
sanitize 'GpuS2d.*'
ncu_repack
finish ab memcheck.log racecheck.log ncu-*.csv $OUT/tests.log
}

call5() {
# Call 5: the landing binaries (main 2b1acfd + auto's v66 for conv2 under two waves; v38's repack as main's). Pack:
# LINEINFO=0 PACK="batchscope test_gpu" BASE_PACK=main's pack. 1) the whole test_gpu; 2) AlexNet fp16 / bf16 kernels, base
# against new, 2 rounds alternating, 1-1,024 images, conv1 and conv2 per layer; 3) memcheck and racecheck over the
# 16-bit TMA bit test and GpuS2d.
setup
tests '' 300
ab_fp16_bf16 1,8,16,24,32,64,128,1024 "main 2b1acfd (base) -> conv2 v66 under two waves (new)" conv1 conv2
sanitize 'GpuS2d.*:*WgmmaTma*'
finish ab memcheck.log racecheck.log $OUT/tests.log
}

# the 16-bit LRN + pooling kernels (two passes' norm1, norm2) at each batch given
ncu_lrn() { ncu_ab lrn_pool 4 "the 16-bit LRN + pooling kernels" "$@"; }

call6() {
# Call 6 (twenty-ninth session): the 16-bit LRN + pooling kernels without the channel-zeroing branch where C is even
# (ca8ea54), base = main 50fbe51 (its first run on the GPU: the heuristics refactor). Pack: LINEINFO=0 PACK="batchscope
# test_gpu" BASE_PACK=50fbe51's pack. 1) the whole test_gpu; 2) AlexNet fp16 / bf16 kernels, base against new, 2 rounds
# alternating, 1-1,024 images, norm1 and norm2 per layer; 3) memcheck and racecheck over GpuLrnPoolHalf; 4) ncu on the
# LRN kernels at 16 and 128 images.
setup
tests '' 300
ab_fp16_bf16 1,2,8,16,32,128,1024 "main 50fbe51 (base) -> LRN zeroing only for odd C (new)" norm1 norm2
sanitize 'GpuLrnPoolHalf.*'
ncu_lrn 16 128
finish ab memcheck.log racecheck.log ncu-*.csv $OUT/tests.log
}

call7() {
# Call 7: fc v17's split warps loading all of their chunks first (fc8 at 2-16 images), and the 16-bit LRN + pooling in
# 128-thread blocks of half the chunk where that evens the multiprocessors' load (8512194), base = ca8ea54 (call 6's
# new). Pack: LINEINFO=0 PACK="batchscope test_gpu" BASE_PACK=ca8ea54's batchscope. 1) the whole test_gpu; 2) AlexNet
# fp16 / bf16 kernels, base against new, 2 rounds alternating, 2-128 images, norm1, norm2 and fc8 per layer; 3)
# memcheck and racecheck over GpuLrnPoolHalf and fc v17's op cases; 4) ncu on the LRN kernels at 16 images, and on fc8.
setup
tests '' 300
ab_fp16_bf16 2,4,8,12,16,32,128 "ca8ea54 (base) -> fc8's chunks first, LRN 128-thread blocks (new)" norm1 norm2 fc8
sanitize 'GpuLrnPoolHalf.*:*fc17*'
ncu_lrn 16
NCU="/usr/local/cuda/bin/ncu --set full --page raw --csv --clock-control none"
SW="sweep --model data/models/alexnet --backend cuda --precision fp16 --reps 1 --warmup 0 --no-profile --check-images 0 --batches 16"
timeout 100 $NCU --kernel-name regex:fc_stream_mma --launch-skip 2 --launch-count 1 $bin/batchscope $SW --out /tmp/n.csv > ncu-fc8-new.csv 2>/dev/null
timeout 100 $NCU --kernel-name regex:fc_stream_mma --launch-skip 2 --launch-count 1 .device/base/batchscope $SW --out /tmp/n.csv > ncu-fc8-base.csv 2>/dev/null
{ echo; echo "### ncu, fc8 at 16 images (base, new)"; python3 experiments/ncu_raw_table.py ncu-fc8-base.csv base base; python3 experiments/ncu_raw_table.py ncu-fc8-new.csv new new | tail -n 1; } >> $OUT/summary.md 2>&1
finish ab memcheck.log racecheck.log ncu-*.csv $OUT/tests.log
}

call8() {
# Call 8: v38's FP32 input repacked a thread a pixel of T (s2d_pixel_kernel, 1b43d1d) with fc8's chunks first, the LRN
# rule of call 7 taken back; base = ca8ea54. Pack as call 7's. 1) the whole test_gpu; 2) AlexNet fp16 / bf16 kernels, base
# against new, 2 rounds alternating, 1-1,024 images, conv1, norm1 and fc8 per layer; 3) memcheck and racecheck over GpuS2d,
# GpuLrnPoolHalf and fc v17's op cases; 4) ncu on the repack at 16 and 256 images.
setup
tests '' 300
ab_fp16_bf16 1,2,4,8,16,32,128,1024 "ca8ea54 (base) -> the pixel repack + fc8's chunks first (new)" conv1 norm1 fc8
sanitize 'GpuS2d.*:GpuLrnPoolHalf.*:*fc17*'
ncu_repack
finish ab memcheck.log racecheck.log ncu-*.csv $OUT/tests.log
}

call9() {
# Call 9: v38's FP32 input repacked a thread a (pixel of T, block row) (s2d_row_kernel, d6e17ae), base = the landing
# candidate 3ac5423 (ca8ea54 + fc8's chunks first; s2d_kernel). Pack: LINEINFO=0 PACK="batchscope test_gpu"
# BASE_PACK=3ac5423's full pack, then base/test_gpu added from it by hand. 1) the whole test_gpu (new); base's test_gpu over
# GpuS2d and v38's op cases, memcheck / racecheck of it over GpuS2d; 2) AlexNet fp16 / bf16 kernels, base against new, 2
# rounds alternating, 1-1,024 images, conv1 per layer; 3) memcheck and racecheck (new) over GpuS2d; 4) ncu on the repack.
setup
tests '' 300
timeout 120 .device/base/test_gpu --gtest_brief=1 --gtest_filter='GpuS2d.*:*conv38*' > base-tests.log 2>&1
echo "base tests exit $?: $(grep -E '^\[  PASSED|^\[  FAILED' base-tests.log | tr '\n' ' ')" >> $OUT/summary.md
grep -E "FAILED|Failure" base-tests.log | head -10 >> $OUT/summary.md
for tool in memcheck racecheck; do
  timeout 120 /usr/local/cuda/bin/compute-sanitizer --tool $tool --print-limit 5 .device/base/test_gpu --gtest_brief=1 --gtest_filter='GpuS2d.*' > base-$tool.log 2>&1
  echo "base $tool exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' base-$tool.log | tr '\n' ' ')" >> $OUT/summary.md
done
ab_fp16_bf16 1,2,8,16,32,128,1024 "3ac5423 (base, s2d_kernel) -> s2d_row_kernel (new)" conv1
sanitize 'GpuS2d.*'
ncu_repack
finish ab *.log ncu-*.csv $OUT/tests.log
}

call10() {
# Call 10: the session's landing binaries d6e17ae against its first main 50fbe51, AlexNet fp16 / bf16 kernels, 2 rounds
# alternating (no tests: they ran in call 9 on d6e17ae). Pack: call 9's batchscope, base/ from 50fbe51's pack, by hand.
setup
ab_fp16_bf16 1,16,128,1024 "main 50fbe51 (base) -> d6e17ae (new)" conv1 norm1 norm2 fc8
finish ab
}

# Env-switched probes in one binary (the switches unset run main's code). ptest NAME ENV FILTER: test_gpu over FILTER with
# ENV set, into $OUT/summary.md. env_ab BATCHES NAME=ENV...: AlexNet fp16 kernels of main's code (no switch) against each
# NAME's switch, 2 rounds in alternating order, in $ENV_DIR (default ab; call 12: env), then per NAME ab-NAME/ for
# ab_compare.py (base: main's runs). ncu_env
# REGEX COUNT WHAT ENV BATCHES...: ncu over the matching launches without and with ENV.
ptest() {
  env $2 timeout 200 $T --gtest_brief=1 --gtest_filter="$3" > t-$1.log 2>&1
  echo "tests $1 ($2) exit $?: $(grep -E '^\[  PASSED|^\[  FAILED' t-$1.log | tr '\n' ' ')" >> $OUT/summary.md
  grep -E "FAILED|Failure" t-$1.log | head -10 >> $OUT/summary.md
}
env_ab() {
  local batches=$1 r w e order p
  shift
  COMMON="--model data/models/alexnet --backend cuda --reps 20 --warmup 3 --host-memory pinned --check-images 1 --check-backend cpu"
  local d=${ENV_DIR:-ab}
  mkdir -p $d
  declare -A envs=([main]=)
  order=main
  for p in "$@"; do envs[${p%%=*}]=${p#*=}; order="$order ${p%%=*}"; done
  for r in 1 2; do
    [ $r = 2 ] && order=$(echo $order | tr ' ' '\n' | tac | tr '\n' ' ')
    for w in $order; do
      env ${envs[$w]} $bin/batchscope sweep $COMMON --batches $batches --precision fp16 --out $d/$w-fp16-r$r.csv > $d/$w-fp16-r$r.log 2>&1 ||
        echo "$w r$r exit $?" >> $OUT/summary.md
    done
    echo "round $r ($SECONDS s)"
  done
  { echo "## main's code, per layer (us, median of 2 rounds)"; layers_us $d/main-fp16-r*.layers.csv; } >> $OUT/summary.md 2>&1
  for p in "$@"; do
    w=${p%%=*}
    mkdir -p ab-$w
    for f in $d/main-fp16-*; do cp $f ab-$w/base-${f#$d/main-}; done
    for f in $d/$w-fp16-*; do cp $f ab-$w/new-${f#$d/$w-}; done
  done
}
ncu_env() {
  local rx=$1 count=$2 what=$3 e=$4 b
  shift 4
  NCU="/usr/local/cuda/bin/ncu --set full --page raw --csv --clock-control none"
  SW="sweep --model data/models/alexnet --backend cuda --precision fp16 --reps 1 --warmup 0 --no-profile --check-images 0"
  for b in "$@"; do
    timeout 100 $NCU --kernel-name regex:$rx --launch-count $count $bin/batchscope $SW --batches $b --out /tmp/n.csv > ncu-$rx-main-$b.csv 2>/dev/null
    timeout 100 env $e $NCU --kernel-name regex:$rx --launch-count $count $bin/batchscope $SW --batches $b --out /tmp/n.csv > ncu-$rx-$e-$b.csv 2>/dev/null
    { echo; echo "### ncu, $what at $b images (main's code, then $e; $count launches each)"; python3 experiments/ncu_raw_table.py ncu-$rx-main-$b.csv
      python3 experiments/ncu_raw_table.py ncu-$rx-$e-$b.csv | tail -n $count; } >> $OUT/summary.md 2>&1
  done
}

call11() {
# Call 11 (thirtieth session): three probes in one binary, 6353e75 + the probes (LINEINFO=0 PACK="batchscope test_gpu"):
# BS_S2D_WARP=1, v38's FP32 input repacked by s2d_warp_kernel (probes.patch's, prepared in the twenty-ninth session);
# BS_TILE64=6 / 8, v71's place (conv3 and conv4 at 16 images) taken by 64-pixel x 128-filter tiles on one warpgroup with
# 6 / 8 stages (129 blocks where v71's 128 x 96 make 88); BS_LRN_STRIP=2, the 16-bit LRN + pooling in strips of 2 rows at
# small batches (1 before). 1) each probe's tests; 2) AlexNet fp16 kernels, main's code against each probe, 2 rounds
# alternating, 8-1,024 images; 3) ncu at 16 images on the repack, conv2-conv5, the LRN kernels and the fully connected
# layers (L2 and L1 columns); 4) memcheck / racecheck of the warp repack, memcheck of the 64-pixel tiles.
setup
echo "# call 11" > $OUT/summary.md
ptest warp BS_S2D_WARP=1 'GpuS2d.*:*conv38*'
ptest tile6 BS_TILE64=6 '*conv71*'
ptest tile8 BS_TILE64=8 '*conv71*'
ptest strip2 BS_LRN_STRIP=2 'GpuLrnPoolHalf.*'
env_ab 8,16,32,256,1024 warp=BS_S2D_WARP=1 tile6=BS_TILE64=6 tile8=BS_TILE64=8 strip2=BS_LRN_STRIP=2
{ echo "## main -> warp repack"; python3 experiments/ab_compare.py ab-warp conv1
  for w in tile6 tile8; do echo; echo "## main -> $w"; python3 experiments/ab_compare.py ab-$w conv3 | tail -n 7; python3 experiments/ab_compare.py ab-$w conv4 | tail -n 7; done
  echo; echo "## main -> strip2"; python3 experiments/ab_compare.py ab-strip2 norm1 | tail -n 7; python3 experiments/ab_compare.py ab-strip2 norm2 | tail -n 7
  echo; echo "## every probe, kernels"; for w in warp tile6 tile8 strip2; do echo "### $w"; python3 experiments/ab_compare.py ab-$w | head -n 7; done
} >> $OUT/summary.md 2>&1
ncu_env s2d 2 "the repack" BS_S2D_WARP=1 16
ncu_env wgmma_tma 4 "conv2-conv5" BS_TILE64=6 16
ncu_env lrn_pool 2 "norm1, norm2" BS_LRN_STRIP=2 16
NCU="/usr/local/cuda/bin/ncu --set full --page raw --csv --clock-control none"
timeout 100 $NCU --kernel-name regex:fc_stream_mma --launch-count 3 $bin/batchscope sweep --model data/models/alexnet --backend cuda --precision fp16 --reps 1 --warmup 0 --no-profile --check-images 0 --batches 16 --out /tmp/n.csv > ncu-fc-16.csv 2>/dev/null
{ echo; echo "### ncu, fc6-fc8 at 16 images"; python3 experiments/ncu_raw_table.py ncu-fc-16.csv fc6 fc7 fc8; } >> $OUT/summary.md 2>&1
for tool in memcheck racecheck; do
  BS_S2D_WARP=1 timeout 80 /usr/local/cuda/bin/compute-sanitizer --tool $tool --print-limit 5 $T --gtest_brief=1 --gtest_filter='GpuS2d.*' > warp-$tool.log 2>&1
  echo "warp $tool exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' warp-$tool.log | tr '\n' ' ')" >> $OUT/summary.md
done
BS_TILE64=6 timeout 90 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 $T --gtest_brief=1 --gtest_filter='*conv71*' > tile-memcheck.log 2>&1
echo "tile6 memcheck exit $?: $(grep -E 'ERROR SUMMARY|PASSED|FAILED' tile-memcheck.log | tr '\n' ' ')" >> $OUT/summary.md
finish ab ab-* t-*.log *-memcheck.log *-racecheck.log ncu-*.csv
}

call12() {
# Call 12: the landing candidate 0d6f8d3 (s2d_warp_kernel as v38's FP32 form; BS_TILE192C=1 probes v71's place taken by
# 128 x 192 tiles, 4 stages, split-K reduced in a cluster), base = call 11's binary 7f4c8b2 with no switch (main's code).
# Pack: LINEINFO=0 PACK="batchscope test_gpu" BASE_PACK=7f4c8b2's pack. 1) the whole test_gpu; the probe over v71's op
# cases, and memcheck of them; memcheck / racecheck over GpuS2d; 2) AlexNet fp16 / bf16 kernels, base against new, 2
# rounds alternating, 1-1,024 images, conv1 per layer; 3) the probe against no switch (new binary), fp16 at 8-32 images,
# conv3 / conv4 per layer; 4) ncu on conv2-conv5 at 16 images with the probe.
setup
tests '' 300
ptest tile192c BS_TILE192C=1 '*conv71*'
BS_TILE192C=1 timeout 90 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 $T --gtest_brief=1 --gtest_filter='*conv71*' > tile-memcheck.log 2>&1
echo "tile192c memcheck exit $?: $(grep -E 'ERROR SUMMARY|PASSED|FAILED' tile-memcheck.log | tr '\n' ' ')" >> $OUT/summary.md
sanitize 'GpuS2d.*'
ab_fp16_bf16 1,2,16,128,1024 "7f4c8b2 with no switch (base: main's code) -> 0d6f8d3 (new)" conv1
ENV_DIR=env env_ab 8,16,32 tile192c=BS_TILE192C=1
{ echo; echo "## no switch -> tile192c"; python3 experiments/ab_compare.py ab-tile192c conv3; python3 experiments/ab_compare.py ab-tile192c conv4 | tail -n 5; } >> $OUT/summary.md 2>&1
ncu_env wgmma_tma 4 "conv2-conv5" BS_TILE192C=1 16
finish ab env ab-* *.log ncu-*.csv $OUT/tests.log
}

call13() {
# Call 13: the TMA mainloop's warpgroups released from the block's barrier (gemm_wgmma_tma.cuh: an empty mbarrier a stage,
# arrived on by each warpgroup after its products, waited on by thread 0 before a refill), base = 0d6f8d3 (call 12's new,
# the probe unset). Pack: LINEINFO=0 PACK="batchscope test_gpu" BASE_PACK=0d6f8d3's pack. 1) the whole test_gpu; memcheck
# and racecheck over the TMA bit tests and v66 / v69 / v71's op cases; 2) AlexNet fp16 / bf16 kernels, base against new, 2
# rounds alternating, 16-1,024 images, conv2-conv5 per layer; 3) ncu on conv2-conv5 at 16 images.
setup
tests '' 300
sanitize '*WgmmaTma*:*conv66*:*conv69*:*conv71*'
ab_fp16_bf16 16,32,128,1024 "0d6f8d3 (base) -> empty barriers in the TMA mainloop (new)" conv2 conv3 conv4 conv5
ncu_ab wgmma_tma 4 "conv2-conv5" 16
finish ab *.log ncu-*.csv $OUT/tests.log
}

call14() {
# Call 14: the session's landing code (6353e75 + s2d_warp_kernel; the probes of calls 11-13 out) against its first main
# (7f4c8b2 with no switch: 6353e75's code). Pack: LINEINFO=0 PACK="batchscope test_gpu" BASE_PACK=7f4c8b2's pack.
# 1) GpuS2d and v38's op cases, memcheck / racecheck over GpuS2d; 2) AlexNet kernels, base against new, 2 rounds
# alternating: fp16 / bf16 at 1-1,024 images, FP32 at 1 and 16, INT8 weights (fp16 activations) at 1 and 16; conv1 per
# layer; 3) ECE 408 (10,000 images) Op Times in FP32 and fp16, one round each binary.
setup
tests 'GpuS2d.*:*conv38*' 150
sanitize 'GpuS2d.*'
COMMON="--model data/models/alexnet --backend cuda --reps 20 --warmup 3 --host-memory pinned --check-images 1 --check-backend cpu"
mkdir -p ab
point() {
  local r=$1 w=$2
  bs_of $w sweep $COMMON --batches 1,16,128,1024 --precision fp16 --out ab/$w-fp16-r$r.csv > ab/$w-fp16-r$r.log 2>&1 || echo "$w fp16 exit $?" >> $OUT/summary.md
  bs_of $w sweep $COMMON --batches 1,16,128,1024 --precision bf16 --out ab/$w-bf16-r$r.csv > ab/$w-bf16-r$r.log 2>&1 || echo "$w bf16 exit $?" >> $OUT/summary.md
  bs_of $w sweep $COMMON --batches 1,16 --precision fp32 --out ab/$w-fp32-r$r.csv > ab/$w-fp32-r$r.log 2>&1 || echo "$w fp32 exit $?" >> $OUT/summary.md
  bs_of $w sweep $COMMON --batches 1,16 --precision fp16 --weights int8 --out ab/$w-int8fp16-r$r.csv > ab/$w-int8fp16-r$r.log 2>&1 || echo "$w int8 exit $?" >> $OUT/summary.md
  echo "round $r $w ($SECONDS s)"
}
ROUNDS=2 ab_rounds point
for w in base new; do for p in fp32 fp16; do
  bs_of $w infer --model data/models/ece408 --backend cuda --precision $p --warmup 3 --reps 20 --layer-times > ab/$w-ece408-$p-r1.txt 2>&1 || echo "$w ece408 $p exit $?" >> $OUT/summary.md
done; done
{ echo "## 7f4c8b2 with no switch (base: the session's first main) -> the landing code (new), kernels"; python3 experiments/ab_compare.py ab conv1 | grep -v missing; } >> $OUT/summary.md 2>&1
finish ab *.log $OUT/tests.log
}

"call$1"
