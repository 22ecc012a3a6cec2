#!/usr/bin/env python3
"""Where --precision tf32's error comes from: a model folder's forward pass in NumPy with the operands of every product
rounded as a TF32 kernel rounds them, against the same pass in float64 (issue 35: VGG-16's tf32 error 4.5e-3 against
cudnn's 1.0e-3, experiments/precision-tf32.md, "Why VGG-16's tf32 error is 4x cuDNN's").

A TF32 operand keeps 10 of FP32's 23 mantissa bits. The kernels take them two ways:
  rn     rounded to the nearest (cvt.rna, ties away from zero): fc v10/v11, conv v16-v18, and every weight as prepared
  trunc  the top 19 bits, the rest dropped: what the tensor cores read from memory untouched, the activations of the
         wgmma convolutions (v23-v33), whose operands go from global to shared memory to the tensor cores unconverted
Each mode names the rounding of the convolutions' activations and weights and of the fully connected layers'; products
are summed in float32 (the tensor cores' FP32 accumulation) or float64 (--acc), so the accumulation's share shows too.

    /usr/bin/python3 experiments/tf32_error.py zoo/models/vgg16 --images 2
    /usr/bin/python3 experiments/tf32_error.py zoo/models/vgg16 --input in.npy --check cpu-ref-out.npy

Prints one markdown table: each mode's relative L2 against float64 over the logits (the output before a closing softmax,
which is what a sweep's check compares and `batchscope infer --output` writes), the part of that error which is one
scaling of every logit (s - 1 for the least-squares s in logits ~ s x float64's: a bias, where rounding to nearest
leaves noise), and with --per-layer the error after every convolution and fully connected layer. The input is 8-bit pixels (uniform whole
numbers 0..255, as batchscope's synthetic pool), or --input's .npy (N, C, H, W) float32.
"""
import argparse
import json
import os
import sys

import numpy as np

# mode: (conv activations, conv weights, fc activations, fc weights)
MODES = {
    "fp32": (None, None, None, None),
    "tf32-rn": ("rn", "rn", "rn", "rn"),
    "tf32-ours": ("trunc", "rn", "rn", "rn"),  # auto's plan on Hopper: wgmma convolutions, fc v10/v11
    "tf32-trunc": ("trunc", "trunc", "trunc", "trunc"),
    "tf32-conv-only": ("trunc", "rn", None, None),  # the convolutions' share
    "tf32-fc-only": (None, None, "rn", "rn"),  # the fully connected layers' share
}


def fail(msg):
    sys.exit("tf32_error.py: " + msg)


def tf32(x, how):
    """x (float32 array) with its mantissa cut to TF32's 10 bits: rn (to nearest, ties away) or trunc."""
    if how is None:
        return x
    b = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    if how == "rn":
        b = b + np.uint32(0x1000)  # half of the 13 dropped bits' unit, on the magnitude (the sign bit is apart)
    return (b & np.uint32(0xFFFFE000)).view(np.float32)


def operand(x, how, acc):
    """x as the product reads it: unrounded in the sums' type, or cut to TF32 (from its FP32 value)."""
    return x.astype(acc) if how is None else tf32(x.astype(np.float32), how).astype(acc)


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


def conv(x, w, b, l, acc, how_x, how_w):
    """x (C, H, W); w (O, C/g, KH, KW): im2col and one product per group, operands rounded as told."""
    s, p, g = l.get("stride", 1), l.get("padding", 0), l.get("groups", 1)
    if not isinstance(s, int) or not isinstance(p, int):
        fail(f"layer {l['name']}: this script takes one stride and one padding for both axes")
    o, cg, kh, kw = w.shape
    c, h, wd = x.shape
    oh, ow = out_dim(h, kh, s, p, False), out_dim(wd, kw, s, p, False)
    xp = np.pad(operand(x, how_x, acc), ((0, 0), (p, p), (p, p)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(1, 2))[:, : (oh - 1) * s + 1 : s, : (ow - 1) * s + 1 : s]
    cols = win.transpose(0, 3, 4, 1, 2).reshape(c * kh * kw, oh * ow)  # (C KH KW, OH OW)
    wr = operand(w, how_w, acc).reshape(o, cg * kh * kw)
    og, kg = o // g, cg * kh * kw
    y = np.concatenate([wr[i * og : (i + 1) * og] @ cols[i * kg : (i + 1) * kg] for i in range(g)])
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
    """One image (C, H, W) through the model; taps collects every conv / fc output by layer name."""
    cx, cw, fx, fw = MODES[mode]
    logits = None
    for l in m["layers"]:
        t, name = l["type"], l["name"]
        if t == "convolution":
            x = conv(x, ws[(name, "weight")], ws.get((name, "bias")), l, acc, cx, cw)
        elif t == "fully_connected":
            x = (operand(ws[(name, "weight")], fw, acc) @ operand(x.reshape(-1), fx, acc)).reshape(-1, 1, 1)
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
    return x.reshape(-1), (logits if logits is not None else x.reshape(-1))


def rel(a, b):
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("--images", type=int, default=2, help="synthetic 8-bit images (default 2, as a sweep's check)")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--input", help="an (N, C, H, W) .npy to run instead of synthetic images")
    ap.add_argument("--check", help="another backend's logits on --input (batchscope infer --output): rel. L2 to float64")
    ap.add_argument("--modes", default=",".join(MODES), help="comma-separated, of: " + ", ".join(MODES))
    ap.add_argument("--acc", default="float32", choices=["float32", "float64"], help="the sums' type (default float32)")
    ap.add_argument("--per-layer", action="store_true", help="also the error after every conv / fc layer")
    a = ap.parse_args()
    m, ws = load(a.model)
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
    ref, ref_logits, ref_taps = [], [], []
    for i, x in enumerate(xs):
        print(f"image {i + 1}/{len(xs)}: float64", file=sys.stderr, flush=True)
        taps = {}
        o, lg = forward(m, ws, x.astype(np.float64), "fp32", np.float64, taps)
        ref.append(o), ref_logits.append(lg), ref_taps.append(taps)
    ref, ref_logits = np.concatenate(ref), np.concatenate(ref_logits)
    print(f"{m.get('name', a.model)}: {len(xs)} images, sums in {a.acc}; relative L2 against float64\n")
    if a.check:
        got = np.load(a.check).reshape(-1).astype(np.float64)
        if got.size != ref_logits.size:
            fail(f"--check {a.check}: {got.size} values, the pass gives {ref_logits.size} logits")
        print(f"--check {os.path.basename(a.check)}: {rel(got, ref_logits):.3g} over the logits\n")
    names = list(ref_taps[0])
    head = "| mode | conv activations / weights | fc activations / weights | logits | a scaling of |"
    rule = "|---|---|---|---:|---:|"
    if a.per_layer:
        head += "".join(f" {n} |" for n in names)
        rule += "---:|" * len(names)
    print(head + "\n" + rule)
    for md in modes:
        outs, lgs, taps = [], [], {n: [] for n in names}
        for i, x in enumerate(xs):
            print(f"image {i + 1}/{len(xs)}: {md}", file=sys.stderr, flush=True)
            t = {}
            o, lg = forward(m, ws, x, md, acc, t)
            outs.append(o), lgs.append(lg)
            for n in names:
                taps[n].append(t[n])
        cx, cw, fx, fw = (v or "fp32" for v in MODES[md])
        lg = np.concatenate(lgs)
        scale = float(lg @ ref_logits / (ref_logits @ ref_logits)) - 1
        row = f"| {md} | {cx} / {cw} | {fx} / {fw} | {rel(lg, ref_logits):.3g} | {scale:+.2g} |"
        if a.per_layer:
            row += "".join(f" {rel(np.concatenate(taps[n]), np.concatenate([r[n] for r in ref_taps])):.2g} |" for n in names)
        print(row, flush=True)


if __name__ == "__main__":
    main()
