#!/usr/bin/env python3
"""Runs `batchscope infer --input/--output` on every CPU backend and compares with numpy_forward.py.

Models: the shipped ECE 408 network on real test images. Usage: check_against_numpy.py BATCHSCOPE SRC_DIR
"""
import gzip
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy_forward  # noqa: E402

TOL = 1e-5


def rel_l2(a, b):
    if not np.all(np.isfinite(a)):
        return float("inf")
    return float(np.linalg.norm(a.astype(np.float64) - b) / np.linalg.norm(b))


def idx_images(path, n):
    with gzip.open(path) as f:
        raw = f.read(16 + n * 48 * 48)
    return np.frombuffer(raw[16:], dtype=np.uint8).reshape(n, 1, 48, 48).astype(np.float32)


def main():
    batchscope, src = sys.argv[1], sys.argv[2]
    cases = [(os.path.join(src, "data/models/ece408"),
              idx_images(os.path.join(src, "data/ece408-2019sp/t10k-48-images-idx3-ubyte.gz"), 16))]
    failures = checks = 0
    with tempfile.TemporaryDirectory() as tmp:
        for model, x in cases:
            xpath = os.path.join(tmp, "x.npy")
            np.save(xpath, x)
            for probs in (False, True):
                want = numpy_forward.forward(model, x, probs)
                for backend in ("cpu-ref", "cpu"):
                    ypath = os.path.join(tmp, "y.npy")
                    cmd = [batchscope, "infer", "--model", model, "--input", xpath, "--output", ypath,
                           "--backend", backend, "--batch", "5"] + (["--probabilities"] if probs else [])
                    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
                    got = np.load(ypath)
                    err = rel_l2(got, want) if got.shape == want.shape else float("inf")
                    checks += 1
                    status = "ok" if err <= TOL else "FAIL"
                    failures += status == "FAIL"
                    print(f"{status}: {os.path.basename(model)} {backend} {'probabilities' if probs else 'logits'} "
                          f"shape {got.shape} rel L2 {err:.2e} (tolerance {TOL})")
    print(f"{checks - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
