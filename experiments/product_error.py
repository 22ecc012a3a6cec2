#!/usr/bin/env python3
"""The error of a kernel's products, by emulation: a model folder's forward pass in NumPy with the operands of every
convolution and fully connected product rounded or split as a kernel takes them, against the same pass in float64.
Two questions of issue 35: why VGG-16's tf32 error is 4x cuDNN's (experiments/precision-tf32.md, "Why VGG-16's tf32
error is 4x cuDNN's"), and which split of FP32 operands over 16-bit tensor cores keeps FP32's accuracy
(experiments/tuning-accuracy.md, "FP32 on the FP16 tensor cores, by emulation").

Schemes (how one product's operands x, the activations, and w, the weights, reach the tensor cores):
  fp32         as they are (the cpu backend)
  tf32-rn      both rounded to TF32 (10 of FP32's 23 mantissa bits) to nearest, ties away (cvt.rna): fc v10/v11,
               conv v16-v18
  tf32-ours    x truncated to TF32 (the top 19 bits, what the tensor cores read from memory untouched: the wgmma
               convolutions v23-v33), w rounded when prepared
  tf32-trunc   both truncated
  3xtf32       FP32 as 3xTF32 (conv v34-v36, fc v7-v9): hi = x to nearest, lo = x - hi read truncated;
               x_hi w_hi + x_hi w_lo + x_lo w_hi
  3xfp16       FP32 over the FP16 tensor cores: x scaled by a power of two to a maximum in [2^14, 2^15) (per tensor,
               here per image; w per output row), hi = fp16(x s), lo = fp16(x s - hi) (subnormals kept, as the
               hardware keeps them), the same three products, the scales divided out
               (--headroom: the maximum lower, as a batch's larger maximum would put it)
  3xbf16       the same split to BF16 (8 significant bits, FP32's range: no scaling)
Modes pair a scheme for the convolutions with one for the fully connected layers (--modes; `batchscope`'s auto plan
for tf32 on Hopper is tf32-ours). Products are summed in float32 (the tensor cores' FP32 accumulation, though they
round toward zero and NumPy to nearest) or float64 (--acc); the three products of a split are summed apart, then added.

    /usr/bin/python3 experiments/product_error.py zoo/models/vgg16 --images 2
    /usr/bin/python3 experiments/product_error.py zoo/models/vgg16 --input in.npy --check cpu-logits.npy
    /usr/bin/python3 experiments/product_error.py data/models/alexnet --modes tf32-rn --exact conv2

Prints one markdown table: each mode's relative L2 against float64 over the logits (the output before a closing softmax,
which is what a sweep's check compares and `batchscope infer --output` writes), the part of that error which is one
scaling of every logit (s - 1 for the least-squares s in logits ~ s x float64's: a bias, where rounding to nearest
leaves noise), and with --per-layer the error after every convolution and fully connected layer. The input is 8-bit
pixels (uniform whole numbers 0..255, as batchscope's synthetic pool), or --input's .npy (N, C, H, W).
"""
import argparse
import json
import os
import sys

import numpy as np

# mode: (the convolutions' scheme, the fully connected layers')
MODES = {
    "fp32": ("fp32", "fp32"),
    "tf32-rn": ("tf32-rn", "tf32-rn"),
    "tf32-ours": ("tf32-ours", "tf32-rn"),  # auto's plan for tf32 on Hopper: wgmma convolutions, fc v10/v11
    "tf32-trunc": ("tf32-trunc", "tf32-trunc"),
    "tf32-conv-only": ("tf32-ours", "fp32"),  # the convolutions' share
    "tf32-fc-only": ("fp32", "tf32-rn"),  # the fully connected layers' share
    "3xtf32": ("3xtf32", "3xtf32"),
    "3xfp16": ("3xfp16", "3xfp16"),
    "3xbf16": ("3xbf16", "3xbf16"),
}
TF32_MODES = "fp32,tf32-rn,tf32-ours,tf32-trunc,tf32-conv-only,tf32-fc-only"


EXACT = set()  # --exact: layers whose products stay FP32


def fail(msg):
    sys.exit("product_error.py: " + msg)


def tf32(x, how):
    """x (float32 array) with its mantissa cut to TF32's 10 bits: rn (to nearest, ties away) or trunc."""
    b = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    if how == "rn":
        b = b + np.uint32(0x1000)  # half of the 13 dropped bits' unit, on the magnitude (the sign bit is apart)
    return (b & np.uint32(0xFFFFE000)).view(np.float32)


def bf16(x):
    """x (float32 array) rounded to BF16 (to nearest, ties to even), as float32."""
    b = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    b = b + np.uint32(0x7FFF) + ((b >> np.uint32(16)) & np.uint32(1))
    return (b & np.uint32(0xFFFF0000)).view(np.float32)


HEADROOM = 0  # --headroom: bits below FP16's top binade for the activations' maximum


def pow2_scale(a, axis=None, headroom=0):
    """Powers of two that bring |a|'s maximum (over axis) into [2^(14 - headroom), 2^(15 - headroom)): FP16's top binade
    below 65504, or lower, as a batch whose largest value is 2^headroom times this image's would put it."""
    m = np.max(np.abs(a), axis=axis, keepdims=axis is not None)
    m = np.where(m > 0, m, 1.0)
    return np.exp2(14 - headroom - np.floor(np.log2(m)))


def split_fp16(a, s):
    """a x s as FP16 hi + lo (lo: the FP32 remainder, to FP16), returned unscaled (exact: s is a power of two)."""
    a32 = (a * s).astype(np.float32)
    hi = a32.astype(np.float16).astype(np.float32)
    lo = (a32 - hi).astype(np.float16).astype(np.float32)
    return hi / s, lo / s


def parts(x, w, scheme):
    """The (x part, w part) pairs whose products a scheme sums; x the activations, w (rows, K) the weights."""
    x32, w32 = x.astype(np.float32), w.astype(np.float32)
    if scheme == "fp32":
        return [(x, w)]
    if scheme == "tf32-rn":
        return [(tf32(x32, "rn"), tf32(w32, "rn"))]
    if scheme == "tf32-ours":
        return [(tf32(x32, "trunc"), tf32(w32, "rn"))]
    if scheme == "tf32-trunc":
        return [(tf32(x32, "trunc"), tf32(w32, "trunc"))]
    if scheme == "3xtf32":
        xh, wh = tf32(x32, "rn"), tf32(w32, "rn")
        return [(xh, wh), (xh, tf32(w32 - wh, "trunc")), (tf32(x32 - xh, "trunc"), wh)]
    if scheme == "3xbf16":
        xh, wh = bf16(x32), bf16(w32)
        return [(xh, wh), (xh, bf16(w32 - wh)), (bf16(x32 - xh), wh)]
    if scheme == "3xfp16":
        xh, xl = split_fp16(x32, pow2_scale(x32, headroom=HEADROOM))
        wh, wl = split_fp16(w32, pow2_scale(w32, axis=1))
        return [(xh, wh), (xh, wl), (xl, wh)]
    fail(f"scheme {scheme} unknown")


def out_dim(n, k, s, p, ceil):
    span = n + 2 * p - k
    if not ceil:
        return span // s + 1
    o = (span + s - 1) // s + 1
    if p > 0 and (o - 1) * s >= n + p:
        o -= 1  # the last window starts inside the input (Caffe)
    return o


def load(model_dir):
    try:
        with open(os.path.join(model_dir, "model.json")) as f:
            m = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{model_dir}/model.json: {e}")
    ws = {}
    for l in m["layers"]:
        for key in ("weight", "bias"):
            if key in l:
                path = os.path.join(model_dir, l[key]["file"])
                try:
                    ws[(l["name"], key)] = np.load(path).astype(np.float64)
                except (OSError, ValueError) as e:
                    fail(f"{path}: {e}")
                if key == "weight" and l[key].get("layout", "OIHW" if l["type"] == "convolution" else "OI") not in ("OIHW", "OI"):
                    fail(f"{path}: layout {l[key]['layout']} (this script reads OIHW and OI)")
    return m, ws


def conv(x, w, b, l, acc, scheme):
    """x (C, H, W); w (O, C/g, KH, KW): im2col and one product per group and part, operands as the scheme takes them."""
    s, p, g = l.get("stride", 1), l.get("padding", 0), l.get("groups", 1)
    if not isinstance(s, int) or not isinstance(p, int):
        fail(f"layer {l['name']}: this script takes one stride and one padding for both axes")
    o, cg, kh, kw = w.shape
    c, h, wd = x.shape
    oh, ow = out_dim(h, kh, s, p, False), out_dim(wd, kw, s, p, False)
    og, kg = o // g, cg * kh * kw
    y = 0
    for xq, wq in parts(x, w.reshape(o, kg), scheme):
        xp = np.pad(xq.astype(acc), ((0, 0), (p, p), (p, p)))
        win = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(1, 2))[:, : (oh - 1) * s + 1 : s, : (ow - 1) * s + 1 : s]
        cols = win.transpose(0, 3, 4, 1, 2).reshape(c * kh * kw, oh * ow)  # (C KH KW, OH OW)
        wr = wq.astype(acc)
        y = y + np.concatenate([wr[i * og : (i + 1) * og] @ cols[i * kg : (i + 1) * kg] for i in range(g)])
    if b is not None:
        y = y + b.astype(acc)[:, None]
    return y.reshape(o, oh, ow)


def pool(x, l, kind):
    k, s, p, ceil = l["kernel"], l.get("stride", l["kernel"]), l.get("padding", 0), l.get("ceil_mode", False)
    c, h, w = x.shape
    oh, ow = out_dim(h, k, s, p, ceil), out_dim(w, k, s, p, ceil)
    fill = -np.inf if kind == "max" else 0.0
    xp = np.full((c, (oh - 1) * s + k, (ow - 1) * s + k), fill, dtype=x.dtype)
    hh, ww = min(h, xp.shape[1] - p), min(w, xp.shape[2] - p)
    xp[:, p : p + hh, p : p + ww] = x[:, :hh, :ww]
    win = np.lib.stride_tricks.sliding_window_view(xp, (k, k), axis=(1, 2))[:, ::s, ::s][:, :oh, :ow]
    if kind == "max":
        return win.max(axis=(3, 4))
    if l.get("count_include_pad", False) or p == 0:
        return win.mean(axis=(3, 4))
    fail(f"layer {l['name']}: average pooling without the padding counted is not emulated here")


def lrn(x, l):
    n, alpha, beta, k = l["size"], l["alpha"], l["beta"], l.get("k", 1.0)
    sq = np.pad(x * x, ((n // 2, n // 2), (0, 0), (0, 0)))
    s = sum(sq[i : i + x.shape[0]] for i in range(n))
    return x / (k + alpha / n * s) ** beta


def forward(m, ws, x, mode, acc, taps=None):
    """One image (C, H, W) through the model: its logits (the output before a closing softmax); taps collects every
    conv / fc output by layer name."""
    conv_scheme, fc_scheme = MODES[mode]
    logits = None
    for l in m["layers"]:
        t, name = l["type"], l["name"]
        if t == "convolution":
            x = conv(x, ws[(name, "weight")], ws.get((name, "bias")), l, acc, "fp32" if name in EXACT else conv_scheme)
        elif t == "fully_connected":
            scheme = "fp32" if name in EXACT else fc_scheme
            x = sum(wq.astype(acc) @ xq.astype(acc) for xq, wq in parts(x.reshape(-1), ws[(name, "weight")], scheme))
            x = x.reshape(-1, 1, 1)
            if (name, "bias") in ws:
                x = x + ws[(name, "bias")].astype(acc).reshape(-1, 1, 1)
        elif t == "relu":
            x = np.maximum(x, 0)
        elif t == "tanh":
            x = np.tanh(x)
        elif t == "max_pool":
            x = pool(x, l, "max")
        elif t == "average_pool":
            x = pool(x, l, "average")
        elif t == "lrn":
            x = lrn(x, l)
        elif t == "flatten":
            x = x.reshape(-1, 1, 1)
        elif t == "softmax":
            logits = x.reshape(-1).copy()
            e = np.exp(x - x.max())
            x = e / e.sum()
        elif t == "dropout":
            pass
        else:
            fail(f"layer {name}: type {t} is not emulated here")
        if acc == np.float32:
            x = x.astype(np.float32)  # FP32 storage between layers
        if taps is not None and t in ("convolution", "fully_connected"):
            taps[name] = x.reshape(-1).astype(np.float64)
    return logits if logits is not None else x.reshape(-1)


def rel(a, b):
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("--images", type=int, default=2, help="synthetic 8-bit images (default 2, as a sweep's check)")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--input", help="an (N, C, H, W) .npy to run instead of synthetic images")
    ap.add_argument("--check", help="another backend's logits on --input (batchscope infer --output): rel. L2 to float64")
    ap.add_argument("--modes", default=TF32_MODES, help=f"comma-separated (default {TF32_MODES}), of: " + ", ".join(MODES))
    ap.add_argument("--acc", default="float32", choices=["float32", "float64"], help="the sums' type (default float32)")
    ap.add_argument("--per-layer", action="store_true", help="also the error after every conv / fc layer")
    ap.add_argument("--exact", default="", help="comma-separated conv / fc layers whose products stay FP32 in every mode "
                    "(which layer's rounding an error comes from; experiments/precision-tf32.md, \"Our error against cuDNN's\")")
    ap.add_argument("--headroom", type=int, default=0, help="3xfp16: the activations' maximum this many bits under FP16's top "
                    "binade (default 0; 8 stands for a batch whose largest value is 256 times this image's)")
    a = ap.parse_args()
    global HEADROOM, EXACT
    HEADROOM = a.headroom
    m, ws = load(a.model)
    EXACT = set(filter(None, a.exact.split(",")))
    products = {l["name"] for l in m["layers"] if l["type"] in ("convolution", "fully_connected")}
    for name in sorted(EXACT - products):
        fail(f"--exact: {name} is not a convolution or fully connected layer of {a.model}")
    shape = tuple(m["input"])
    if a.input:
        try:
            xs = np.load(a.input).astype(np.float32)
        except (OSError, ValueError) as e:
            fail(f"--input {a.input}: {e}")
        if xs.shape[1:] != shape:
            fail(f"--input {a.input}: shape {xs.shape}, the model takes (N, {', '.join(map(str, shape))})")
    else:
        xs = np.random.default_rng(a.seed).integers(0, 256, size=(a.images,) + shape).astype(np.float32)
    modes = a.modes.split(",")
    for md in modes:
        if md not in MODES:
            fail(f"--modes: {md} is not one of {', '.join(MODES)}")
    acc = np.float32 if a.acc == "float32" else np.float64
    ref_logits, ref_taps = [], []
    for i, x in enumerate(xs):
        print(f"image {i + 1}/{len(xs)}: float64", file=sys.stderr, flush=True)
        taps = {}
        ref_logits.append(forward(m, ws, x.astype(np.float64), "fp32", np.float64, taps))
        ref_taps.append(taps)
    ref_logits = np.concatenate(ref_logits)
    print(f"{m.get('name', a.model)}: {len(xs)} images, sums in {a.acc}"
          f"{f', 3xfp16 headroom {a.headroom} bits' if a.headroom else ''}"
          f"{f', FP32 products in {a.exact}' if EXACT else ''}; relative L2 against float64\n")
    if a.check:
        got = np.load(a.check).reshape(-1).astype(np.float64)
        if got.size != ref_logits.size:
            fail(f"--check {a.check}: {got.size} values, the pass gives {ref_logits.size} logits")
        print(f"--check {os.path.basename(a.check)}: {rel(got, ref_logits):.3g} over the logits\n")
    names = list(ref_taps[0])
    head = "| mode | convolutions | fully connected | logits | a scaling of |"
    rule = "|---|---|---|---:|---:|"
    if a.per_layer:
        head += "".join(f" {n} |" for n in names)
        rule += "---:|" * len(names)
    print(head + "\n" + rule)
    for md in modes:
        lgs, taps = [], {n: [] for n in names}
        for i, x in enumerate(xs):
            print(f"image {i + 1}/{len(xs)}: {md}", file=sys.stderr, flush=True)
            t = {}
            lgs.append(forward(m, ws, x, md, acc, t))
            for n in names:
                taps[n].append(t[n])
        lg = np.concatenate(lgs)
        scale = float(lg @ ref_logits / (ref_logits @ ref_logits)) - 1
        row = f"| {md} | {MODES[md][0]} | {MODES[md][1]} | {rel(lg, ref_logits):.3g} | {scale:+.2g} |"
        if a.per_layer:
            row += "".join(f" {rel(np.concatenate(taps[n]), np.concatenate([r[n] for r in ref_taps])):.2g} |" for n in names)
        print(row, flush=True)


if __name__ == "__main__":
    main()
