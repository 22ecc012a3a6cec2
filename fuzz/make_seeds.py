#!/usr/bin/python3
"""Writes the seed corpus of every fuzz harness into OUT/<harness>/, from the test fixtures and the shipped
data (small files as they are; small pieces of the large ones), plus a few hand-made inputs per format.
Usage: make_seeds.py SOURCE_DIR OUT"""
import gzip
import json
import os
import shutil
import struct
import sys

import numpy as np

src, out = sys.argv[1], sys.argv[2]
fx = os.path.join(src, "tests", "fixtures")
data = os.path.join(src, "data")


def put(harness, name, blob):
    d = os.path.join(out, harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(blob)


def read(path):
    with open(path, "rb") as f:
        return f.read()


# npy: every plain fixture, the small ECE 408 weights.
for n in sorted(os.listdir(fx)):
    if n.endswith(".npy") and not n.startswith("dict_"):
        put("npy", n, read(os.path.join(fx, n)))
for n in ("new0_weight.npy", "fullyconnected1_bias.npy"):
    put("npy", n, read(os.path.join(data, "models", "ece408", n)))

# npz: the fixtures (stored and deflated).
for n in sorted(os.listdir(fx)):
    if n.endswith(".npz"):
        put("npz", n, read(os.path.join(fx, n)))

# pickle: the dicts NumPy wrote at every protocol, and the refused ones.
for n in sorted(os.listdir(fx)):
    if n.startswith("dict_"):
        put("pickle", n, read(os.path.join(fx, n)))

# IDX: the shipped labels; three images of the test set, plain and gzipped; one of every type code.
put("idx", "labels.gz", read(os.path.join(data, "fashion-mnist", "t10k-labels-idx1-ubyte.gz")))
with gzip.open(os.path.join(data, "fashion-mnist", "t10k-images-idx3-ubyte.gz")) as f:
    head = f.read(16)
    imgs = f.read(3 * 28 * 28)
three = head[:4] + struct.pack(">I", 3) + head[8:16] + imgs
put("idx", "images3.idx", three)
put("idx", "images3.idx.gz", gzip.compress(three))
for code, fmt in ((0x08, "B"), (0x09, "b"), (0x0B, "h"), (0x0C, "i"), (0x0D, "f"), (0x0E, "d")):
    put("idx", "type%02x.idx" % code, bytes([0, 0, code, 2]) + struct.pack(">II", 2, 3) + struct.pack(">6" + fmt, *range(6)))

# MXNet .params: V2 arrays with names, a legacy array without names.
def nd_v2(arr):
    b = struct.pack("<IiI", 0xF993FAC9, 0, arr.ndim) + struct.pack("<%dq" % arr.ndim, *arr.shape)
    flag = {np.float32: 0, np.float64: 1, np.float16: 2, np.uint8: 3, np.int32: 4, np.int64: 6}[arr.dtype.type]
    return b + struct.pack("<iii", 1, 0, flag) + arr.tobytes()


def params(arrays, names):
    b = struct.pack("<QQQ", 0x112, 0, len(arrays)) + b"".join(arrays) + struct.pack("<Q", len(names))
    for n in names:
        b += struct.pack("<Q", len(n)) + n.encode()
    return b


w = np.arange(12, dtype=np.float32).reshape(2, 1, 2, 3)
put("params", "v2.params", params([nd_v2(w), nd_v2(np.ones(2, np.float16))], ["arg:conv0_weight", "arg:conv0_bias"]))
legacy = struct.pack("<I", 2) + struct.pack("<II", 2, 2) + struct.pack("<iii", 1, 0, 0) + np.ones(4, np.float32).tobytes()
put("params", "legacy.params", params([legacy], []))

# model.json: the shipped models, and one whose tensors are in the harness's folder (w.npy, b.npy).
for m in ("ece408", "alexnet"):
    put("model_json", m + ".json", read(os.path.join(data, "models", m, "model.json")))
small = {"format": "batchscope-model", "version": 1, "name": "small", "input": [1, 8, 8], "layers": [
    {"type": "convolution", "filters": 2, "kernel": 3, "stride": 1, "padding": 1, "weight": {"file": "w.npy"},
     "bias": {"file": "b.npy"}},
    {"type": "relu"}, {"type": "lrn", "size": 3}, {"type": "max_pool", "kernel": 2, "ceil_mode": True},
    {"type": "avg_pool", "kernel": [2, 1], "stride": [1, 1]}, {"type": "flatten"}, {"type": "softmax"}]}
put("model_json", "small.json", json.dumps(small).encode())

# MXNet symbol: ECE 408's.
put("mxnet_symbol", "ece408-symbol.json", read(os.path.join(data, "ece408-2019sp", "ece408-symbol.json")))

# ONNX: the import-onnx fixtures (good and bad; features.onnx's external data resolves beside them).
onnx_fx = os.path.join(src, "tests", "onnx", "fixtures")
for n in sorted(os.listdir(onnx_fx)):
    if n.endswith(".onnx"):
        put("onnx", n, read(os.path.join(onnx_fx, n)))
