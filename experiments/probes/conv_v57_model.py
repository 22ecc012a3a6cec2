#!/usr/bin/env python3
"""The index arithmetic and the accuracy of conv v57 (kernels/cuda/ops/conv_tc_f16.cu: ECE 408's conv2 in 3xFP16), modelled
in NumPy on the CPU (no GPU needed). Written for its probe, experiments/probes/ece_conv2_3xf16.cu (removed once it became
v57; its last state, with the instruments that timed its parts, is commit 1acf222).

  layout    builds v57's hi plane (no split) and weight fragments with its formulas, runs its mma.sync m16n8k16
            fragment layouts (A rows = pixels, k pairs t and t + 4; B pairs t and t + 4 of filter g; D rows g, g + 8,
            columns 2t, 2t + 1) over one set of 4 images, and compares with a direct convolution in float64: the largest
            difference is float64 rounding when every index is right.
  accuracy  the 3xFP16 split (a power of two per image and per filter, hi = fp16(s x), lo = fp16(s x - hi), products
            hi*hi + hi*lo + lo*hi exact, summed in float32 to nearest) against float64 on sampled outputs.
Usage: conv_v57_model.py [layout|accuracy]   (both when none is named)"""
import sys

import numpy as np

C, CW, H, W, K, M = 6, 3, 22, 22, 5, 16
OH = OW = H - K + 1
P, KS, IP, IMG = OH * OW, 10, 4, H * W * CW


def step_words(s):
    return (s // 2) * W * CW + 8 * (s % 2)


def layout():
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((IP, C, H, W)), rng.standard_normal((M, C, K, K))
    plane = np.zeros((IP * IMG + 4, 2))
    for img in range(IP):
        for cp in range(CW):
            for y in range(H):
                for xx in range(W):
                    plane[img * IMG + (y * W + xx) * CW + cp] = [x[img, 2 * cp, y, xx], x[img, 2 * cp + 1, y, xx]]
    frag = np.zeros((KS, 2, 32, 2, 2))  # [s][half][lane][j]: the pair of b_j
    for s in range(KS):
        for half in range(2):
            for l in range(32):
                for j in range(2):
                    q, f = 8 * (s % 2) + l % 4 + 4 * j, 8 * half + l // 4
                    if q < K * CW:
                        c, ky, kx = 2 * (q % CW), s // 2, q // CW
                        frag[s, half, l, j] = [w[f, c, ky, kx], w[f, c + 1, ky, kx]]
    out = np.zeros((IP, M, P))
    for tile in range(IP * P // 16):
        acc = np.zeros((2, 16, 8))
        for s in range(KS):
            a, b = np.zeros((16, 16)), np.zeros((2, 16, 8))
            for l in range(32):
                g, t = l // 4, l % 4
                for h in range(2):
                    q = 16 * tile + g + 8 * h
                    slot, p = q // P, q % P
                    rp = slot * IMG + ((p // OW) * W + p % OW) * CW + t
                    for jj, off in ((0, 0), (1, 4)):
                        a[g + 8 * h, 2 * (t + 4 * jj):2 * (t + 4 * jj) + 2] = plane[rp + step_words(s) + off]
                for half in range(2):
                    for j in range(2):
                        b[half, 2 * (t + 4 * j):2 * (t + 4 * j) + 2, g] = frag[s, half, l, j]
            for half in range(2):
                acc[half] += a @ b[half]
        for l in range(32):
            g, t = l // 4, l % 4
            for h in range(2):
                q = 16 * tile + g + 8 * h
                for f in range(2):
                    for e in range(2):
                        out[q // P, 8 * f + 2 * t + e, q % P] = acc[f, g + 8 * h, 2 * t + e]
    ref = np.zeros_like(out)
    for img in range(IP):
        for f in range(M):
            for oy in range(OH):
                for ox in range(OW):
                    ref[img, f, oy * OW + ox] = np.sum(x[img, :, oy:oy + K, ox:ox + K] * w[f])
    print(f"layout: largest difference {np.abs(out - ref).max():.1e} (outputs up to {np.abs(ref).max():.1f})")


def accuracy():
    rng = np.random.default_rng(1)

    def scale(m):
        return np.ldexp(1.0, 14 - np.frexp(m)[1])

    def split(v, s):
        hi = (v * s).astype(np.float16).astype(np.float64)
        return hi, ((v * s).astype(np.float32) - hi).astype(np.float16).astype(np.float64)

    w = rng.normal(0, 0.1, (M, C, K, K)).astype(np.float32)
    inputs = (("uniform [-1, 1]", rng.uniform(-1, 1, (8, C, H, W))),
              ("2^-20..2^20", np.sign(rng.uniform(-1, 1, (8, C, H, W))) * np.exp2(rng.uniform(-20, 20, (8, C, H, W)))))
    for name, x in inputs:
        x = x.astype(np.float32)
        num = den = 0.0
        for img in range(8):
            xs = scale(np.abs(x[img]).max())
            xh, xl = split(x[img].astype(np.float64), xs)
            for f in range(M):
                ws = scale(np.abs(w[f]).max())
                wh, wl = split(w[f].astype(np.float64), ws)
                for oy in range(0, OH, 3):
                    for ox in range(0, OW, 3):
                        sl = np.s_[:, oy:oy + K, ox:ox + K]
                        ref = np.sum(x[img][sl].astype(np.float64) * w[f])
                        acc = np.float32(0)
                        for v in (xh[sl] * wh + xh[sl] * wl + xl[sl] * wh).ravel():
                            acc = np.float32(acc + np.float32(v))
                        num += (float(acc) / (xs * ws) - ref) ** 2
                        den += ref ** 2
        print(f"accuracy, {name}: relative L2 {np.sqrt(num / den):.2e} over 8 images x 16 filters x 36 positions")


if __name__ == "__main__":
    for step in sys.argv[1:] or ["layout", "accuracy"]:
        {"layout": layout, "accuracy": accuracy}[step]()
