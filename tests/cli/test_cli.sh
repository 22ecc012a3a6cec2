#!/usr/bin/env bash
# The command line as a newcomer meets it. First the table of mistakes (tests/cli/mistakes.tsv): each must print
# exactly one line on stderr matching its expected first words, exit with its status (2 for a mistake in the command
# line, 1 for a file or device that failed), and leave nothing behind. Then what must work: help, version, the
# menus, interrupted and resumed sweeps, the good paths. Usage: test_cli.sh BATCHSCOPE BATCHSCOPE_WEIGHTS SRC
set -u
BS=$(realpath "$1"); BW=$(realpath "$2"); SRC=$(realpath "$3")
MODEL=$SRC/data/models/ece408
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
PY=/usr/bin/python3  # Debian's, with NumPy (scripts/setup.sh)
export BS BW SRC MODEL TMP
failures=0; passed=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# --- fixtures the table's commands read
mkdir -p "$TMP/out" "$TMP/work"
head -c 1000 "$SRC/data/ece408-2019sp/t10k-48-images-idx3-ubyte.gz" >"$TMP/trunc.gz"
printf 'hello world, not idx' >"$TMP/text.idx"
head -c 200 "$MODEL/new0_weight.npy" >"$TMP/trunc.npy"
head -c 3000 "$SRC/data/ece408-2019sp/ece408-0002.params" >"$TMP/trunc.params"
cp -r "$MODEL" "$TMP/badtype" && sed -i 's/"type": "tanh"/"type": "tanhh"/' "$TMP/badtype/model.json"
cp -r "$MODEL" "$TMP/nooutputs" && sed -i 's/"outputs": 140,//' "$TMP/nooutputs/model.json"
mkdir -p "$TMP/alexnet" && cp "$SRC/data/models/alexnet/model.json" "$TMP/alexnet/"
$PY -c "import numpy as np; np.save('$TMP/x.npy', np.zeros((2, 1, 48, 48), np.float32))"
npy_header() {  # npy_header SHAPE: a version 1.0 .npy header for float32 with SHAPE, padded to 128 bytes
  local dict="{'descr': '<f4', 'fortran_order': False, 'shape': $1, }"
  local pad=$((128 - 10 - ${#dict} - 1))
  printf '\x93NUMPY\x01\x00\x76\x00%s%*s\n' "$dict" "$pad" ""
}
npy_header "(4294967296, 4294967296)" >"$TMP/wrap.npy"
printf '\x00\x00\x08\x03\x00\x01\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00' >"$TMP/huge-images.idx"  # (65536)^3 ubyte
echo "not a folder" >"$TMP/afile"
"$BS" sweep --model "$MODEL" --backend cpu --batches 1,2 --reps 2 --out "$TMP/s.csv" >/dev/null 2>&1 || fail "the setup sweep"

# A build without CUDA (scripts/check.sh's sanitizer build) has no cuda menus: the rows about versions need them.
CUDA_MENUS=1
"$BS" --version | grep -q "^CUDA no" && CUDA_MENUS=0

# --- the table
rows=0
while IFS=$'\t' read -r code re cmd; do
  [[ -z "$code" || "$code" == \#* ]] && continue
  [[ "$cmd" == *"--backend cuda"* || "$cmd" == *"--backend cudnn"* ]] && nvidia-smi -L >/dev/null 2>&1 && [[ "$re" == *"GPU"* ]] && continue
  [[ $CUDA_MENUS == 0 && "$cmd" == *"-variant"* ]] && continue
  rows=$((rows + 1))
  re=${re//\$TMP/$TMP}; re=${re//\$SRC/$SRC}
  (cd "$TMP/work" && eval "$cmd") >"$TMP/stdout" 2>"$TMP/stderr"
  rc=$?
  lines=$(wc -l <"$TMP/stderr")
  if [ "$rc" != "$code" ] || [ "$lines" -ne 1 ] || ! grep -Eq -- "$re" "$TMP/stderr"; then
    fail "$cmd -> exit $rc (expected $code), stderr ($lines lines):"; sed 's/^/    /' "$TMP/stderr" | head -5; echo "    expected /$re/"
  elif [ -n "$(ls -A "$TMP/out")" ] || [ -n "$(ls -A "$TMP/work")" ]; then
    fail "$cmd left files behind: $(ls -A "$TMP/out" "$TMP/work" | tr '\n' ' ')"
  else
    passed=$((passed + 1))
  fi
  rm -rf "$TMP/out" "$TMP/work"; mkdir -p "$TMP/out" "$TMP/work"
done <"$SRC/tests/cli/mistakes.tsv"
[ "$rows" -ge 40 ] || fail "the table of mistakes holds $rows rows (at least 40 expected)"

expect_ok() {  # expect_ok REGEX CMD...: success and REGEX on stdout
  local re=$1; shift
  if ! "$@" >"$TMP/stdout" 2>"$TMP/stderr" || ! grep -Eq -- "$re" "$TMP/stdout"; then
    fail "$* (expected success and /$re/ on stdout)"; sed 's/^/    /' "$TMP/stderr" "$TMP/stdout" | head -20
  else
    passed=$((passed + 1))
  fi
}
expect_status() {  # expect_status CODE REGEX CMD...: that exit status, REGEX on stdout, stderr empty
  local code=$1 re=$2; shift 2
  "$@" >"$TMP/stdout" 2>"$TMP/stderr"
  local rc=$?
  if [ "$rc" != "$code" ] || ! grep -Eq -- "$re" "$TMP/stdout" || [ -s "$TMP/stderr" ]; then
    fail "$* -> exit $rc (expected $code, /$re/ on stdout, nothing on stderr)"; head -5 "$TMP/stderr"
  else
    passed=$((passed + 1))
  fi
}

# --- the command alone, help, version
expect_status 2 "^batchscope: batch inference of CNNs" "$BS"
expect_status 0 "^batchscope: batch inference of CNNs" "$BS" help
expect_status 0 "--batches N,N,..." "$BS" help sweep
expect_status 0 "^Examples" "$BS" sweep --help
expect_status 2 "^batchscope-weights: inspect" "$BW"
expect_ok "^batchscope [0-9]+\.[0-9]+\.[0-9]+$" "$BS" --version
expect_ok "^commit ([0-9a-f]{40}(\+dirty)?|unknown)$" "$BS" --version
expect_ok "^cuDNN (yes|no), OpenCV (yes|no).*, MPI (yes|no)" "$BS" --version
expect_ok "--batches,--batch N,N,.*old" "$BS" throughput --help  # the old spelling kept, and said to be old

# --- shipped models resolve from any directory; a model.json names its folder
expect_ok "^Correctness: 0.84 Model: ece408$" bash -c "cd / && '$BS' infer --model ece408 --images 100"
expect_ok "^Correctness: 0.84 Model: ece408$" "$BS" infer --model "$MODEL/model.json" --images 100

# --- the menus (any machine with a build that has them) and the plan
if [ $CUDA_MENUS = 1 ]; then
  expect_ok "v13 +gemm-3xtf32 .*FP32-accurate" "$BS" variants
  expect_ok "^  v5 +stream " "$BS" variants
  expect_ok "exact +only the GEMM and direct algorithms" "$BS" variants
  expect_ok "v16 +gemm-tf32 .*\[any; tf32\]" "$BS" variants
else
  expect_ok "^  \(this build has no cuda backend\)" "$BS" variants
fi
expect_ok "^  +tf32 +FP32 storage, convolution and fully connected products in TF32" "$BS" variants
expect_ok "direct \(register-blocked\) \(conv\+tanh\)" "$BS" plan --model ece408 --backend cpu --batch 100
expect_ok '"fused_into": "new0"' "$BS" plan --model ece408 --backend cpu --batch 100 --json

# --- the results name the binaries' own commit, compiled in, whatever checkout BATCHSCOPE_SOURCE_DIR points at
own=$("$BS" --version | sed -n 's/^commit //p')
mkdir -p "$TMP/other" && git -C "$TMP/other" init -q && git -C "$TMP/other" -c user.name=t -c user.email=t@t commit -q --allow-empty -m x
expect_ok "wrote $TMP/c.csv" env BATCHSCOPE_SOURCE_DIR="$TMP/other" BATCHSCOPE_DATA="$SRC/data" "$BS" sweep --model "$MODEL" --backend cpu \
  --batches 1 --reps 1 --out "$TMP/c.csv"
expect_ok "\"git_commit\": \"${own//+/\\+}\"" cat "$TMP/c.json"
expect_ok '"BATCHSCOPE_SOURCE_DIR": ' cat "$TMP/c.json"  # the environment that changed what ran is recorded

# --- Ctrl-C keeps the work done: the points measured are written, marked interrupted, exit 130; --resume finishes
BATCHSCOPE_INTERRUPT_AFTER=2 "$BS" sweep --model "$MODEL" --backend cpu --batches 1,2,4,8 --reps 2 --out "$TMP/i.csv" >/dev/null 2>"$TMP/stderr"
rc=$?
if [ $rc -ne 130 ] || ! grep -q "^batchscope: interrupted (SIGINT): wrote the 2 complete batch sizes" "$TMP/stderr"; then
  fail "interrupted sweep: exit $rc, stderr: $(cat "$TMP/stderr")"
else
  passed=$((passed + 1))
fi
expect_ok '"interrupted": true' cat "$TMP/i.json"
expect_ok "^model,weights,backend" head -1 "$TMP/i.csv"
[ "$(grep -c ',warm,' "$TMP/i.csv")" = 2 ] && passed=$((passed + 1)) || fail "the interrupted sweep's CSV holds $(grep -c ',warm,' "$TMP/i.csv") warm rows, expected 2"
expect_ok "wrote $TMP/i.csv" "$BS" sweep --model "$MODEL" --backend cpu --batches 1,2,4,8 --reps 2 --out "$TMP/i.csv" --resume
[ "$(cut -d, -f10,11 "$TMP/i.csv" | tail -n +2 | tr '\n' ' ')" = "1,cold 1,warm 2,cold 2,warm 4,cold 4,warm 8,cold 8,warm " ] && passed=$((passed + 1)) \
  || fail "the resumed sweep's points: $(cut -d, -f10,11 "$TMP/i.csv" | tail -n +2 | tr '\n' ' ')"
expect_ok '"interrupted": false' cat "$TMP/i.json"
# a real signal: SIGTERM partway through a long sweep still exits 130 with a readable CSV
"$BS" sweep --model "$MODEL" --backend cpu-ref --batches 1,2,4,8,16,32,64,128,256 --reps 50 --check-images 0 --out "$TMP/t.csv" >/dev/null 2>&1 &
pid=$!
sleep 3
kill -TERM $pid
wait $pid
rc=$?
if [ $rc -ne 130 ] || ! $PY -c "import json; j = json.load(open('$TMP/t.json')); assert j['interrupted'], j" 2>/dev/null; then
  fail "SIGTERM during a sweep: exit $rc (expected 130 and its JSON marked interrupted)"
else
  passed=$((passed + 1))
fi

# --- the good paths
expect_ok "CPU phases" "$BS" profile --model "$MODEL" --backend cpu --batch 4
expect_ok "^Correctness: 0.84 Model: ece408$" "$BS" infer --model "$MODEL" --images 100
expect_ok "wrote $TMP/y.npy \(2, 10\) logits" "$BS" infer --model "$MODEL" --input "$TMP/x.npy" --output "$TMP/y.npy"
expect_ok "arg:new1_weight" "$BW" inspect "$SRC/data/ece408-2019sp/ece408-0002.params"
expect_ok "\(16, 6, 5, 5\)" "$BW" inspect "$MODEL/new1_weight.npy" --max-tensor-bytes 16K
expect_ok "wrote $TMP/imp/model.json and 6 tensors" "$BW" import-mxnet --symbol "$SRC/data/ece408-2019sp/ece408-symbol.json" \
  --params "$SRC/data/ece408-2019sp/ece408-0002.params" --input-shape 1,48,48 --out "$TMP/imp"
expect_ok "^Correctness: 0.852 Model: ece408$" "$BS" infer --model "$TMP/imp" --images 1000 --batch 128
expect_ok "wrote $TMP/w.npy" "$BW" synthesize --seed 0 --out "$TMP/w.npy"
expect_ok "^conv1\[0\]$" "$BW" inspect "$TMP/w.npy"  # inside the pickled dict, through the strict unpickler
expect_ok "wrote $TMP/zoo/model.json \(ece408, 9 layers, [0-9]+ parameters, synthetic weights, seed 3\)" \
  "$BW" synthesize --model ece408 --seed 3 --out "$TMP/zoo"
expect_ok "^Correctness: .* Model: ece408$" "$BS" infer --model "$TMP/zoo" --images 100
expect_ok "wrote $TMP/r.npy \(fc-chw -> fc-hwc\)" "$BW" rearrange "$MODEL/fullyconnected0_weight.npy" --from fc-chw --to fc-hwc \
  --input-chw 16,18,18 --out "$TMP/r.npy"
expect_ok "checked against cpu-ref" bash -c "'$BS' report '$TMP/s.csv' --out '$TMP/rep' >/dev/null && cat '$TMP/rep/report.md'"

echo "$passed passed, $failures failed"
[ $failures -eq 0 ]
