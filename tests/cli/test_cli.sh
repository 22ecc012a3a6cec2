#!/usr/bin/env bash
# Bad input to the commands: each must print exactly one error line naming the file or flag and the
# problem, exit non-zero, and leave no output behind. Usage: test_cli.sh BATCHSCOPE BATCHSCOPE_WEIGHTS SRC
set -u
bs=$1; bw=$2; src=$3
model=$src/data/models/ece408
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0; passed=0

expect_fail() {  # expect_fail REGEX CMD...
  local re=$1; shift
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  local lines
  lines=$(wc -l <"$tmp/err")
  if [ $rc -eq 0 ] || [ "$lines" -ne 1 ] || ! grep -Eq -- "$re" "$tmp/err"; then
    echo "FAIL: $* -> rc=$rc, stderr ($lines lines):"; sed 's/^/    /' "$tmp/err"; echo "    expected /$re/"
    failures=$((failures + 1))
  else
    passed=$((passed + 1))
  fi
}
expect_ok() {  # expect_ok REGEX CMD...
  local re=$1; shift
  if ! "$@" >"$tmp/out" 2>"$tmp/err" || ! grep -Eq -- "$re" "$tmp/out"; then
    echo "FAIL: $* (expected success and /$re/ on stdout)"; sed 's/^/    /' "$tmp/err" "$tmp/out"
    failures=$((failures + 1))
  else
    passed=$((passed + 1))
  fi
}
expect_absent() {
  if [ -e "$1" ]; then echo "FAIL: $1 exists after a failed run"; failures=$((failures + 1)); else passed=$((passed + 1)); fi
}

# --- infer: flags
expect_fail "--images: 20000 images requested, .*t10k-48-images.* hold 10000" $bs infer --model "$model" --images 20000
expect_fail "--images.*abc" $bs infer --model "$model" --images abc
expect_fail "--batch.*0" $bs infer --model "$model" --batch 0
expect_fail "--backend: unknown backend 'bogus'" $bs infer --model "$model" --backend bogus
expect_fail "/nonexistent/model.json: cannot open" $bs infer --model /nonexistent
expect_fail "--data: needs --labels" $bs infer --model "$model" --data x.gz
expect_fail "--input: needs --output" $bs infer --model "$model" --input x.npy
expect_fail "error: .*(subcommand|required)" $bs
expect_fail "--model is required" $bs infer

# --- infer: bad files
head -c 1000 "$src/data/ece408-2019sp/t10k-48-images-idx3-ubyte.gz" >"$tmp/trunc.gz"
expect_fail "$tmp/trunc.gz: (corrupt gzip|truncated IDX)" $bs infer --model "$model" --data "$tmp/trunc.gz" --labels "$src/data/fashion-mnist/t10k-labels-idx1-ubyte.gz"
printf 'hello world, not idx' >"$tmp/text.idx"
expect_fail "$tmp/text.idx: not an IDX file \(wrong magic" $bs infer --model "$model" --data "$tmp/text.idx" --labels "$src/data/fashion-mnist/t10k-labels-idx1-ubyte.gz"
expect_fail "t10k-images-idx3-ubyte.gz: images of shape \(1, 28, 28\) do not fit the model's input \(1, 48, 48\)" \
  $bs infer --model "$model" --data "$src/data/fashion-mnist/t10k-images-idx3-ubyte.gz" --labels "$src/data/fashion-mnist/t10k-labels-idx1-ubyte.gz"
head -c 200 "$model/new0_weight.npy" >"$tmp/trunc.npy"
expect_fail "$tmp/trunc.npy: truncated .npy data" $bs infer --model "$model" --input "$tmp/trunc.npy" --output "$tmp/y.npy"
expect_absent "$tmp/y.npy"
expect_fail "new0_weight.npy: shape \(N, 1, 48, 48\) expected, file has \(6, 1, 5, 5\)" \
  $bs infer --model "$model" --input "$model/new0_weight.npy" --output "$tmp/y.npy"
expect_absent "$tmp/y.npy"

# --- model folders with problems
cp -r "$model" "$tmp/m"
sed -i 's/"type": "tanh"/"type": "tanhh"/' "$tmp/m/model.json"
expect_fail "model.json: layer 'activation0': unknown layer type 'tanhh'" $bs infer --model "$tmp/m" --images 10
cp "$model/model.json" "$tmp/m/model.json"
sed -i 's/"outputs": 140,//' "$tmp/m/model.json"
expect_fail "layer 'fullyconnected0': missing field 'outputs'" $bs infer --model "$tmp/m" --images 10
cp "$model/model.json" "$tmp/m/model.json"
cp "$model/fullyconnected1_weight.npy" "$tmp/m/fullyconnected0_weight.npy"
expect_fail "fullyconnected0_weight.npy: shape \(140, 5184\) expected, file has \(10, 140\) \(layer 'fullyconnected0'" $bs infer --model "$tmp/m" --images 10
printf '\x93NUMPY\x01\x00\x20\x00{"descr": "<c8"' >"$tmp/m/fullyconnected0_weight.npy"
expect_fail "fullyconnected0_weight.npy: corrupt .npy header|fullyconnected0_weight.npy: truncated" $bs infer --model "$tmp/m" --images 10

# --- sweep: bad input leaves no CSV behind
expect_fail "--batches: batch sizes must be positive, found 0" $bs sweep --model "$model" --backend cpu --batches 1,0 --out "$tmp/s.csv"
expect_absent "$tmp/s.csv"
expect_fail "--batches: batch sizes must be positive, found -4" $bs sweep --model "$model" --backend cpu --batches=-4 --out "$tmp/s.csv"
expect_fail "--backend: unknown backend 'gpu'" $bs sweep --model "$model" --backend gpu --out "$tmp/s.csv"
expect_fail "--out: cannot write $tmp/nodir/s.csv: folder $tmp/nodir does not exist" $bs sweep --model "$model" --backend cpu --out "$tmp/nodir/s.csv"
# end-to-end modes (issue 13): one line naming the flag, before anything runs
expect_fail "--transfers: expected resident, per-layer or overlapped, found 'async'" $bs sweep --model "$model" --backend cpu --transfers async --out "$tmp/s.csv"
expect_fail "--chunk: applies to --transfers overlapped only" $bs sweep --model "$model" --backend cpu --chunk 16 --out "$tmp/s.csv"
expect_fail "--chunk: must be positive, found -3" $bs sweep --model "$model" --backend cpu --transfers overlapped --chunk=-3 --out "$tmp/s.csv"
expect_fail "--cuda-graph: needs --transfers resident or overlapped" $bs sweep --model "$model" --backend cpu --transfers per-layer --cuda-graph --out "$tmp/s.csv"
expect_fail "--cuda-graph: applies to GPU backends only" $bs sweep --model "$model" --backend cpu --cuda-graph --out "$tmp/s.csv"
expect_fail "--transfers: applies to GPU backends only" $bs sweep --model "$model" --backend cpu --transfers overlapped --out "$tmp/s.csv"
expect_fail "--transfers: expected resident or overlapped, found 'per-layer'" $bs throughput --model "$model" --backend cpu --transfers per-layer
expect_fail "--cuda-graph: applies to GPU backends only" $bs throughput --model "$model" --backend cpu --cuda-graph
expect_fail "--chunk: applies to --transfers overlapped only" $bs throughput --model "$model" --backend cpu --chunk 8
expect_fail "--trace: cannot write $tmp/nodir/t.json" $bs profile --model "$model" --backend cpu --trace "$tmp/nodir/t.json"
expect_fail "--batches: batch 900000000 needs .* GiB of host memory" $bs sweep --model "$model" --backend cpu --batches 900000000 --out "$tmp/s.csv"
expect_absent "$tmp/s.csv"
expect_fail "--reps.*x" $bs sweep --model "$model" --backend cpu --reps x --out "$tmp/s.csv"
if ! nvidia-smi -L >/dev/null 2>&1; then
  expect_fail "--backend cuda: no CUDA GPU is available|unknown backend 'cuda'" $bs sweep --model "$model" --backend cuda --out "$tmp/s.csv"
  expect_fail "--backend cuda: no CUDA GPU is available|unknown backend 'cuda'" $bs infer --model "$model" --backend cuda
fi
expect_ok "wrote $tmp/s.csv" $bs sweep --model "$model" --backend cpu --batches 1,2 --reps 2 --out "$tmp/s.csv"
expect_ok "CPU phases" $bs profile --model "$model" --backend cpu --batch 4
# binaries carried to the GPU machine (.device/, scripts/pack_device.sh) name their own commit in the metadata,
# not the checkout's there
mkdir -p "$tmp/carried/.device" && cp "$bs" "$tmp/carried/.device/" && echo "commit 0123456789abcdef0123456789abcdef01234567 x" >"$tmp/carried/.device/COMMIT"
expect_ok "wrote $tmp/c.csv" env BATCHSCOPE_SOURCE_DIR="$tmp/carried" BATCHSCOPE_DATA="$src/data" "$tmp/carried/.device/$(basename "$bs")" \
  sweep --model "$model" --backend cpu --batches 1 --reps 1 --out "$tmp/c.csv"
expect_ok '"git_commit": "0123456789abcdef0123456789abcdef01234567"' cat "$tmp/c.json"

# --- flags a backend does not use, and the menus (any machine)
expect_fail "--conv-variant: the cpu backend does not use it \(it applies to --backend cuda\)" $bs infer --model "$model" --backend cpu --conv-variant 99
expect_fail "--fc-variant: the cpu-ref backend does not use it" $bs infer --model "$model" --backend cpu-ref --fc-variant 5 --images 10
expect_fail "--cudnn-algos: the cpu backend does not use it \(it applies to --backend cudnn\)" $bs sweep --model "$model" --backend cpu --cudnn-algos exact --out "$tmp/flags.csv"
expect_absent "$tmp/flags.csv"
expect_fail "--tuning: the cpu backend does not use it" $bs sweep --model "$model" --backend cpu --tuning t.json --out "$tmp/flags.csv"
expect_fail "--threads: the cudnn backend does not use it" $bs infer --model "$model" --backend cudnn --threads 2
expect_fail "--conv-variant: unknown variant 'warp-speed' \(choose auto or one of: 1 direct" $bs infer --model "$model" --backend cuda --conv-variant warp-speed
expect_ok "v13 +gemm-3xtf32 .*FP32-accurate" $bs variants
expect_ok "^  v5 +stream " $bs variants
expect_ok "exact +only the GEMM and direct algorithms" $bs variants
expect_fail "--batches: batch sizes must be positive, found 0" $bs tune --model "$model" --batches 0
expect_fail "--conv-variants: name versions, not auto" $bs tune --model "$model" --conv-variants auto
expect_fail "--fc-variants: unknown variant '42'" $bs tune --model "$model" --fc-variants 42
if ! nvidia-smi -L >/dev/null 2>&1; then
  expect_fail "--backend cuda: no CUDA GPU is available|unknown backend 'cuda'" $bs tune --model "$model" --out "$tmp/t.json"
  expect_absent "$tmp/t.json"
fi

# --- batchscope-weights
expect_fail "--input-shape: expected C,H,W" $bw import-mxnet --symbol "$src/data/ece408-2019sp/ece408-symbol.json" \
  --params "$src/data/ece408-2019sp/ece408-0002.params" --input-shape 1,48 --out "$tmp/imp"
expect_absent "$tmp/imp"
expect_fail "$tmp/imp/fullyconnected0_weight.npy: shape \(140, 1024\) expected, file has \(140, 5184\) \(layer 'fullyconnected0'" $bw import-mxnet --symbol "$src/data/ece408-2019sp/ece408-symbol.json" \
  --params "$src/data/ece408-2019sp/ece408-0002.params" --input-shape 1,28,28 --out "$tmp/imp"
expect_absent "$tmp/imp"
head -c 3000 "$src/data/ece408-2019sp/ece408-0002.params" >"$tmp/trunc.params"
expect_fail "$tmp/trunc.params: truncated .params file" $bw inspect "$tmp/trunc.params"
expect_fail "$tmp/text.idx: not a .npy, .npz or MXNet .params file" $bw inspect "$tmp/text.idx"
expect_fail "$tmp/nope.npy: cannot open" $bw inspect "$tmp/nope.npy"
expect_fail "error: .*(subcommand|required)" $bw

# --- precisions
expect_fail "^batchscope: error: --precision: the cpu backend computes in fp32 only \(it is the reference\); tf32 runs on --backend cuda or cudnn" \
  $bs infer --model "$model" --backend cpu --precision tf32
expect_fail "--precision: the cpu backend computes in fp32 only" $bs sweep --model "$model" --backend cpu --precision fp16 --out "$tmp/p.csv"
expect_absent "$tmp/p.csv"
expect_fail "--precision: unknown precision 'double'" $bs infer --model "$model" --precision double
expect_fail "^batchscope: error: --input-precision: fp16 needs --precision fp16 \(the input is copied as the type the first layer computes in; found --precision fp32\)" \
  $bs infer --model "$model" --backend cpu --input-precision fp16
expect_fail "--input-precision: unknown precision 'fp8'" $bs sweep --model "$model" --backend cpu --input-precision fp8 --out "$tmp/ip.csv"
expect_absent "$tmp/ip.csv"
expect_fail "--input-precision: bf16 needs --precision bf16" $bs profile --model "$model" --backend cuda --precision fp16 --input-precision bf16
expect_fail "--input-precision: the cpu backend does not use it \(it applies to --backend cuda and cudnn\)" $bs sweep --model "$model" --backend cpu --input-precision u8 --out "$tmp/u8.csv"
expect_absent "$tmp/u8.csv"
expect_fail "--input-precision: u8: classify subtracts the model's channel means on the host" \
  $bs classify --model "$model" --backend cuda --input-precision u8 "$src/data/imagenet/images/cat.jpg"
expect_fail "--conv-variants: v13 computes in fp32; --precision tf32 times v16, v17, v18" $bs tune --model "$model" --precision tf32 --conv-variants 13
expect_ok "^  +tf32 +FP32 storage, convolution and fully connected products in TF32" $bs variants
expect_ok "v16 +gemm-tf32 .*\[any; tf32\]" $bs variants

# --- hostile files (issue 15's reports): one line naming the file, exit 1 (never 'internal error'), nothing written
npy_header() {  # npy_header SHAPE: a version 1.0 .npy header for float32 with SHAPE, padded to 128 bytes
  local dict="{'descr': '<f4', 'fortran_order': False, 'shape': $1, }"
  local pad=$((128 - 10 - ${#dict} - 1))
  printf '\x93NUMPY\x01\x00\x76\x00%s%*s\n' "$dict" "$pad" ""
}
npy_header "(4294967296, 4294967296)" >"$tmp/wrap.npy"
expect_fail "^batchscope-weights: error: $tmp/wrap.npy: shape's element count overflows 64 bits" $bw inspect "$tmp/wrap.npy"
expect_fail "^batchscope-weights: error: $tmp/wrap.npy: shape's element count overflows 64 bits" \
  $bw rearrange "$tmp/wrap.npy" --from OI --to IO --out "$tmp/wrap-out.npy"
expect_absent "$tmp/wrap-out.npy"
printf '\x00\x00\x08\x03\x00\x01\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00' >"$tmp/huge-images.idx"  # (65536)^3 ubyte
expect_fail "^batchscope: error: $tmp/huge-images.idx: IDX shape \(65536, 65536, 65536\) as float32 would take 1 PiB" \
  $bs infer --model "$model" --data "$tmp/huge-images.idx" --labels "$src/data/fashion-mnist/t10k-labels-idx1-ubyte.gz"
expect_fail "^batchscope: error: $tmp/huge-images.idx: truncated IDX file: shape \(65536, 65536, 65536\) needs 281474976710656 bytes" \
  $bs --max-tensor-bytes 2048T infer --model "$model" --data "$tmp/huge-images.idx" --labels "$src/data/fashion-mnist/t10k-labels-idx1-ubyte.gz"
expect_fail "above the limit of 1 KiB per tensor \(raise it with --max-tensor-bytes" \
  $bw inspect "$src/data/models/ece408/new1_weight.npy" --max-tensor-bytes 1K
expect_ok "\(16, 6, 5, 5\)" $bw inspect "$src/data/models/ece408/new1_weight.npy" --max-tensor-bytes 16K
expect_fail "--max-tensor-bytes: expected a byte count such as .* found 'lots'" $bs infer --model "$model" --max-tensor-bytes lots
expect_fail "BATCHSCOPE_MAX_TENSOR_BYTES: expected a byte count" env BATCHSCOPE_MAX_TENSOR_BYTES=x $bw inspect "$src/data/models/ece408/new1_weight.npy"
expect_fail "is not a regular file" $bw inspect /dev/null

# --- the good paths
expect_ok "^Correctness: 0.84 Model: ece408$" $bs infer --model "$model" --images 100
expect_ok "arg:new1_weight" $bw inspect "$src/data/ece408-2019sp/ece408-0002.params"
expect_ok "wrote $tmp/imp/model.json and 6 tensors" $bw import-mxnet --symbol "$src/data/ece408-2019sp/ece408-symbol.json" \
  --params "$src/data/ece408-2019sp/ece408-0002.params" --input-shape 1,48,48 --out "$tmp/imp"
expect_ok "^Correctness: 0.852 Model: ece408$" $bs infer --model "$tmp/imp" --images 1000 --batch 128

echo "$passed passed, $failures failed"
[ $failures -eq 0 ]
