#!/usr/bin/env python3
"""An independent NumPy forward pass over a batchscope model folder (model.json + .npy weights).

Written from the layer definitions, not from batchscope's C++: convolution as a sum over kernel offsets of
strided slices, pooling over explicit windows, LRN by a channel-window sum, all in float64. Used to make
golden outputs that the C++ backends are compared with.
"""
import json
import math
import os
import sys

import numpy as np


def pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def conv(x, w, b, stride, pad, groups):
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    sh, sw = stride
    ph, pw = pad
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    oh = (h + 2 * ph - kh) // sh + 1
    ow = (wd + 2 * pw - kw) // sw + 1
    out = np.zeros((n, m, oh, ow))
    mg = m // groups
    for g in range(groups):
        xs = xp[:, g * cg:(g + 1) * cg]
        wg = w[g * mg:(g + 1) * mg]
        for ky in range(kh):
            for kx in range(kw):
                patch = xs[:, :, ky:ky + sh * (oh - 1) + 1:sh, kx:kx + sw * (ow - 1) + 1:sw]  # (n, cg, oh, ow)
                out[:, g * mg:(g + 1) * mg] += np.einsum("nchw,mc->nmhw", patch, wg[:, :, ky, kx])
    if b is not None:
        out += b[None, :, None, None]
    return out


def out_size(i, k, s, p, ceil_mode):
    span = i + 2 * p - k
    if not ceil_mode:
        return span // s + 1
    o = -(-span // s) + 1
    if p > 0 and (o - 1) * s >= i + p:
        o -= 1
    return o


def pool(x, kind, k, s, p, ceil_mode):
    n, c, h, w = x.shape
    oh, ow = out_size(h, k[0], s[0], p[0], ceil_mode), out_size(w, k[1], s[1], p[1], ceil_mode)
    out = np.zeros((n, c, oh, ow))
    for oy in range(oh):
        for ox in range(ow):
            y0, x0 = oy * s[0] - p[0], ox * s[1] - p[1]
            y1, x1 = min(y0 + k[0], h + p[0]), min(x0 + k[1], w + p[1])
            area = (y1 - y0) * (x1 - x0)
            win = x[:, :, max(y0, 0):min(y1, h), max(x0, 0):min(x1, w)]
            out[:, :, oy, ox] = win.max(axis=(2, 3)) if kind == "max" else win.sum(axis=(2, 3)) / area
    return out


def lrn(x, size, alpha, beta, k):
    sq = x * x
    c = x.shape[1]
    s = np.zeros_like(x)
    for ch in range(c):
        lo, hi = max(0, ch - size // 2), min(c, ch + size // 2 + 1)
        s[:, ch] = sq[:, lo:hi].sum(axis=1)
    return x / (k + alpha / size * s) ** beta


def forward(model_dir, x, probabilities=False):
    spec = json.load(open(os.path.join(model_dir, "model.json")))
    x = x.astype(np.float64)

    def tensor(ref, shape_hint=None):
        return np.load(os.path.join(model_dir, ref["file"])).astype(np.float64)

    layers = spec["layers"]
    if not probabilities and layers[-1]["type"] == "softmax":
        layers = layers[:-1]
    for l in layers:
        t = l["type"]
        if t == "convolution":
            w = tensor(l["weight"])
            if l["weight"].get("layout", "OIHW") == "HWIO":
                w = w.transpose(3, 2, 0, 1)
            b = tensor(l["bias"]) if l.get("bias") else None
            x = conv(x, w, b, pair(l.get("stride", 1)), pair(l.get("padding", 0)), l.get("groups", 1))
        elif t == "relu":
            x = np.maximum(x, 0)
        elif t == "tanh":
            x = np.tanh(x)
        elif t == "sigmoid":
            x = 1 / (1 + np.exp(-x))
        elif t in ("max_pool", "avg_pool"):
            k = pair(l["kernel"])
            x = pool(x, t[:3], k, pair(l.get("stride", k)), pair(l.get("padding", 0)), l.get("ceil_mode", False))
        elif t == "lrn":
            x = lrn(x, l.get("size", 5), l.get("alpha", 1e-4), l.get("beta", 0.75), l.get("k", 1.0))
        elif t == "flatten":
            x = x.reshape(x.shape[0], -1)
        elif t == "fully_connected":
            w = tensor(l["weight"])
            if l["weight"].get("layout", "OI") == "IO":
                w = w.T
            x = x.reshape(x.shape[0], -1) @ w.T
            if l.get("bias"):
                x = x + tensor(l["bias"])
        elif t == "softmax":
            e = np.exp(x - x.max(axis=1, keepdims=True))
            x = e / e.sum(axis=1, keepdims=True)
        else:
            raise SystemExit(f"numpy_forward: unknown layer type {t}")
    return x.reshape(x.shape[0], -1)


if __name__ == "__main__":
    if len(sys.argv) < 4:
        raise SystemExit("usage: numpy_forward.py MODEL_DIR X.npy Y.npy [--probabilities]")
    y = forward(sys.argv[1], np.load(sys.argv[2]), "--probabilities" in sys.argv)
    np.save(sys.argv[3], y.astype(np.float32))
