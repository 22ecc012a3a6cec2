#!/usr/bin/env python3
"""End-to-end check of the AlexNet path against an independent NumPy forward pass in TensorFlow's own
conventions. A reduced AlexNet (Caffe's structure, fewer channels) is written as bvlc_alexnet.npy is, a
pickled dict {layer: [W (H, W, I/groups, O) or (in, out), b]} via np.save; batchscope-weights import-bvlc
rearranges it; batchscope infer runs it on each CPU backend; the reference here runs the dict as it is:
NHWC activations, HWIO filters, fc6 on the (H, W, C) flatten, TensorFlow's LRN (alpha not divided by the
window). Usage: check_bvlc_mini.py BATCHSCOPE BATCHSCOPE_WEIGHTS"""
import os
import subprocess
import sys
import tempfile

import numpy as np

TOL = 1e-5
SHAPES = {"conv1": (11, 11, 3, 8), "conv2": (5, 5, 4, 16), "conv3": (3, 3, 16, 12), "conv4": (3, 3, 6, 12),
          "conv5": (3, 3, 6, 8), "fc6": (8 * 6 * 6, 10), "fc7": (10, 10), "fc8": (10, 5)}


def conv_nhwc(x, w, b, stride, pad):
    """x (N, H, W, C), w (KH, KW, C/groups, O); groups follow from the channel counts."""
    n, h, wd, c = x.shape
    kh, kw, cg, o = w.shape
    groups = c // cg
    xp = np.pad(x, ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    out = np.zeros((n, oh, ow, o))
    og = o // groups
    for g in range(groups):
        for ky in range(kh):
            for kx in range(kw):
                patch = xp[:, ky:ky + stride * (oh - 1) + 1:stride, kx:kx + stride * (ow - 1) + 1:stride, g * cg:(g + 1) * cg]
                out[..., g * og:(g + 1) * og] += patch @ w[ky, kx, :, g * og:(g + 1) * og]
    return out + b


def lrn_tf(x, depth_radius=2, bias=1.0, alpha=2e-5, beta=0.75):
    """tf.nn.local_response_normalization: sqr_sum over [c - r, c + r], times alpha (not divided)."""
    sq = x * x
    c = x.shape[-1]
    s = np.zeros_like(x)
    for ch in range(c):
        s[..., ch] = sq[..., max(0, ch - depth_radius):min(c, ch + depth_radius + 1)].sum(axis=-1)
    return x / (bias + alpha * s) ** beta


def maxpool_nhwc(x, k=3, s=2):
    n, h, w, c = x.shape
    oh, ow = (h - k) // s + 1, (w - k) // s + 1
    out = np.full((n, oh, ow, c), -np.inf)
    for ky in range(k):
        for kx in range(k):
            out = np.maximum(out, x[:, ky:ky + s * (oh - 1) + 1:s, kx:kx + s * (ow - 1) + 1:s, :])
    return out


def forward_tf(d, x_nchw):
    relu = lambda v: np.maximum(v, 0)
    x = x_nchw.transpose(0, 2, 3, 1).astype(np.float64)
    W = {k: (v[0].astype(np.float64), v[1].astype(np.float64)) for k, v in d.items()}
    x = maxpool_nhwc(lrn_tf(relu(conv_nhwc(x, *W["conv1"], 4, 0))))
    x = maxpool_nhwc(lrn_tf(relu(conv_nhwc(x, *W["conv2"], 1, 2))))
    x = relu(conv_nhwc(x, *W["conv3"], 1, 1))
    x = relu(conv_nhwc(x, *W["conv4"], 1, 1))
    x = maxpool_nhwc(relu(conv_nhwc(x, *W["conv5"], 1, 1)))
    x = x.reshape(x.shape[0], -1)  # (H, W, C) flatten, as the TensorFlow code did
    x = relu(x @ W["fc6"][0] + W["fc6"][1])
    x = relu(x @ W["fc7"][0] + W["fc7"][1])
    return x @ W["fc8"][0] + W["fc8"][1]


def main():
    batchscope, weights_tool = sys.argv[1], sys.argv[2]
    rng = np.random.default_rng()  # fresh each run
    d = {k: [(rng.standard_normal(s) * np.sqrt(2.0 / np.prod(s[:-1]))).astype(np.float32),
             (0.1 * rng.standard_normal(s[-1])).astype(np.float32)] for k, s in SHAPES.items()}
    x = (rng.standard_normal((3, 3, 227, 227)) * 40).astype(np.float32)
    want = forward_tf(d, x)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        np.save(os.path.join(tmp, "mini.npy"), np.array(d, dtype=object), allow_pickle=True)
        subprocess.run([weights_tool, "import-bvlc", os.path.join(tmp, "mini.npy"), "--out", os.path.join(tmp, "m")],
                       check=True, stdout=subprocess.DEVNULL)
        np.save(os.path.join(tmp, "x.npy"), x)
        for backend in ("cpu-ref", "cpu"):
            y = os.path.join(tmp, "y.npy")
            subprocess.run([batchscope, "infer", "--model", os.path.join(tmp, "m"), "--input", os.path.join(tmp, "x.npy"),
                            "--output", y, "--backend", backend], check=True, stdout=subprocess.DEVNULL)
            got = np.load(y).astype(np.float64)
            err = np.linalg.norm(got - want) / np.linalg.norm(want) if got.shape == want.shape else float("inf")
            ok = err <= TOL
            failures += not ok
            print(f"{'ok' if ok else 'FAIL'}: mini AlexNet via import-bvlc, {backend}: rel L2 {err:.2e} (tolerance {TOL})")
    print(f"{2 - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
