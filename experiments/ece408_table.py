#!/usr/bin/env python3
"""Turns a `gpu_check.sh` benchmark log (bench_ece408.txt) into the per-variant, per-layer table with the
floor each layer's bytes and FLOPs imply. Usage: ece408_table.py BENCH.txt PEAK_TFLOPS PEAK_TBPS"""
import re
import sys

IMAGES = 10000
# Per image, FP32: (FLOPs, bytes in + out) of each ECE 408 convolution; fused conv1 writes the pooled map.
LAYERS = {
    "new0": (2 * 6 * 44 * 44 * 25, 4 * (48 * 48 + 6 * 44 * 44)),
    "new0 fused": (2 * 6 * 44 * 44 * 25, 4 * (48 * 48 + 6 * 22 * 22)),
    "new1": (2 * 16 * 18 * 18 * 150, 4 * (6 * 22 * 22 + 16 * 18 * 18)),
}


def floor_ms(key, tflops, tbps):
    flops, bytes_ = LAYERS[key]
    return max(flops * IMAGES / (tflops * 1e12), bytes_ * IMAGES / (tbps * 1e12)) * 1e3


def main():
    path, tflops, tbps = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
    rows, variant = [], None
    for line in open(path):
        if line.startswith("-- "):
            variant = line[3:].strip()
        m = re.match(r"Layer (new\d), convolution, ([^,]+), ([\d.e-]+), ([\d.e-]+), ([\d.e-]+), ([\d.]+), ([\d.]+)", line)
        if m:
            name, impl = m.group(1), m.group(2)
            med, lo, hi = (float(m.group(i)) * 1e3 for i in (3, 4, 5))
            key = name + (" fused" if "max_pool" in impl else "")
            rows.append((variant, name, impl, med, lo, hi, floor_ms(key, tflops, tbps)))
    print("| variant | layer | implementation | median ms | min ms | max ms | floor ms | floor / median |")
    print("|---|---|---|---|---|---|---|---|")
    for v, name, impl, med, lo, hi, fl in rows:
        print(f"| {v} | {name} | {impl} | {med:.3f} | {lo:.3f} | {hi:.3f} | {fl:.3f} | {fl / med:.0%} |")
    print()
    print("| variant | conv1 + conv2 median ms |")
    print("|---|---|")
    sums = {}
    for v, *_rest in rows:
        sums.setdefault(v, 0.0)
    for v, name, impl, med, *_ in rows:
        sums[v] += med
    for v, s in sums.items():
        print(f"| {v} | {s:.3f} |")


if __name__ == "__main__":
    main()
