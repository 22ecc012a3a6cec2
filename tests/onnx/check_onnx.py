#!/usr/bin/env python3
"""import-onnx end to end: each good fixture of tests/onnx/fixtures (made by make_fixtures.py from seeded NumPy
weights, reference outputs from onnxruntime) is imported, run by `batchscope infer` on each backend given, and
compared with onnxruntime's output (FP32: within 1e-5 relative L2); each bad fixture must be refused with one
line naming the file (and the node, where one is at fault), a non-zero exit, and no folder written.

Usage: check_onnx.py BATCHSCOPE BATCHSCOPE_WEIGHTS SOURCE_DIR [BACKEND ...]   (default backends: cpu-ref cpu;
experiments/gpu_check.sh adds cuda cudnn on the GPU machine)"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from pycheck import check, finish  # noqa: E402

TOL = 1e-5
# name: (ends in a softmax, so infer writes --probabilities; notes the import must print)
# Backends that must refuse a fixture, with the words of their one error line:
REFUSED = {}
GOOD = {
    "cnn13": (True, ["folded BatchNormalization 'bn2' into 'conv1'", "removed Dropout", "removed Identity",
                     "taken as the bias of 'fc2'", "GlobalAveragePool"]),
    "old7": (False, ["widened the float16 weights", "folded BatchNormalization"]),
    "features": (False, []),
    "pads9": (True, []),
    "old3": (True, ["removed Dropout"]),
    "dedup": (False, []),
    "leaky": (False, []),
    "dilated": (False, []),
    "asympads": (False, []),
    "bnalone": (False, ["on its own runs as a per-channel scale and shift", "folded BatchNormalization 'bn"]),
}
# name: words the one error line must hold
BAD = {
    "bad-residual": ["node 'residual_add' (Add)", "chains of layers"],
    "bad-unsupported": ["node 'elu' (Elu)", "not supported", "supported: Conv"],
    "bad-negative-pads": ["node 'neg_conv' (Conv)", "pads", "out of range"],
    "bad-symbolic-shape": ["--input-shape", "bad-symbolic-shape.onnx"],
    "bad-external-path": ["bad-external-path.onnx", "'../outside.bin'", "inside the model's folder"],
    "bad-not-onnx": ["bad-not-onnx.onnx", "not an ONNX model"],
}


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def rel_l2(y, r):
    y, r = y.astype(np.float64).reshape(-1), r.astype(np.float64).reshape(-1)
    return float(np.linalg.norm(y - r) / max(np.linalg.norm(r), 1e-30))


def good(bs, bsw, fx, io, tmp, name, backends):
    probabilities, notes = GOOD[name]
    folder = os.path.join(tmp, name)
    r = run([bsw, "import-onnx", os.path.join(fx, name + ".onnx"), "--out", folder])
    if not check(r.returncode == 0, f"{name}: import-onnx exit {r.returncode}: {r.stderr.strip()}"):
        return
    for note in notes:
        check(note in r.stdout, f"{name}: import-onnx does not say {note!r}: {r.stdout!r}")
    model = json.load(open(os.path.join(folder, "model.json")))
    check(model["provenance"]["file"] == name + ".onnx", f"{name}: provenance names {model['provenance'].get('file')}")
    ref = io[name + ".out"]
    x = os.path.join(tmp, name + ".in.npy")  # infer reads a .npy: the input out of io.npz
    np.save(x, io[name + ".in"])
    for be in backends:
        out = os.path.join(tmp, f"{name}-{be}.npy")
        cmd = [bs, "infer", "--model", folder, "--input", x, "--output", out, "--backend", be]
        r = run(cmd + (["--probabilities"] if probabilities else []))
        if (name, be) in REFUSED:
            check(r.returncode != 0 and REFUSED[name, be] in r.stderr and r.stderr.count("\n") == 1 and not os.path.exists(out),
                  f"{name} on {be}: expected one line saying {REFUSED[name, be]!r}, got exit {r.returncode}: {r.stderr!r}")
            continue
        if not check(r.returncode == 0, f"{name} on {be}: infer exit {r.returncode}: {r.stderr.strip()}"):
            continue
        y = np.load(out)
        check(y.shape == ref.shape, f"{name} on {be}: output {y.shape}, onnxruntime's {ref.shape}")
        if y.size == ref.size:
            e = rel_l2(y, ref)
            print(f"{name} on {be}: relative L2 {e:.2e} against onnxruntime")
            check(e <= TOL, f"{name} on {be}: relative L2 {e:.3e} > {TOL}")


def bad(bsw, fx, tmp, name):
    folder = os.path.join(tmp, name)
    r = run([bsw, "import-onnx", os.path.join(fx, name + ".onnx"), "--out", folder])
    lines = r.stderr.strip().splitlines()
    check(r.returncode != 0, f"{name}: import-onnx exit 0")
    check(len(lines) == 1, f"{name}: {len(lines)} lines on stderr: {r.stderr!r}")
    for word in BAD[name]:
        check(word in r.stderr, f"{name}: the error does not say {word!r}: {r.stderr.strip()!r}")
    check(not os.path.exists(folder), f"{name}: {folder} written on failure")


def main():
    bs, bsw, src = sys.argv[1:4]
    backends = sys.argv[4:] or ["cpu-ref", "cpu"]
    fx = os.path.join(src, "tests", "onnx", "fixtures")
    with tempfile.TemporaryDirectory() as tmp:
        io = np.load(os.path.join(fx, "io.npz"))
        for name in GOOD:
            good(bs, bsw, fx, io, tmp, name, backends)
        for name in BAD:
            bad(bsw, fx, tmp, name)
        # An existing non-model folder is not replaced; a flag without its value names the flag.
        keep = os.path.join(tmp, "keep")
        os.makedirs(keep)
        open(os.path.join(keep, "notes.txt"), "w").write("mine")
        r = run([bsw, "import-onnx", os.path.join(fx, "cnn13.onnx"), "--out", keep])
        check(r.returncode != 0 and os.path.exists(os.path.join(keep, "notes.txt")), f"--out over a non-model folder: {r.stderr!r}")
        r = run([bsw, "import-onnx", os.path.join(fx, "cnn13.onnx")])
        check(r.returncode != 0 and "--out" in r.stderr, f"no --out: {r.stderr!r}")
        r = run([bsw, "import-onnx", os.path.join(fx, "cnn13.onnx"), "--out", os.path.join(tmp, "s"), "--input-shape", "3,18,19"])
        check(r.returncode != 0 and "--input-shape" in r.stderr and "disagrees" in r.stderr, f"--input-shape against the file: {r.stderr!r}")
        r = run([bsw, "import-onnx", os.path.join(fx, "bad-symbolic-shape.onnx"), "--out", os.path.join(tmp, "sym"),
                 "--input-shape", "3,16,16"])
        check(r.returncode == 0, f"--input-shape fixing a symbolic input: {r.stderr!r}")
    return finish()


if __name__ == "__main__":
    sys.exit(main())
