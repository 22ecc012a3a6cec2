#!/usr/bin/env python3
"""Summary of experiments/batch1_check.sh's FC=1 sweeps: DIR/PRECISION-fcV-rROUND.csv (V: 13, 14 or auto) and their
.layers.csv. Per precision and batch: the kernel time (warm median, every kernel category) with fc forced to v13 and to
v14 and with auto, each the median over the rounds; fc6 + fc7 + fc8 and fc6's achieved GB/s; whether every check passed.
Usage: batch1_summary.py DIR"""
import csv
import glob
import os
import re
import statistics
import sys

KERNELS = ["conv_ms", "pool_ms", "fc_ms", "act_ms", "lrn_ms", "softmax_ms", "flatten_ms", "other_kernel_ms"]


def rows(path):
    with open(path, newline="") as f:
        return [r for r in csv.DictReader(f) if r["run"] == "warm"]


def main(d):
    runs = {}  # (precision, fc) -> batch -> list of (kernel ms, fc ms, fc6 GB/s, check ok)
    for p in sorted(glob.glob(os.path.join(d, "*.csv"))):
        m = re.match(r"(\w+)-fc(\w+)-r(\d+)\.csv$", os.path.basename(p))
        if not m:
            continue
        prec, fc = m.group(1), m.group(2)
        layers = {}
        lp = p[:-4] + ".layers.csv"
        if os.path.exists(lp):
            for r in rows(lp):
                layers.setdefault(int(r["batch"]), {})[r["layer"]] = r
        for r in rows(p):
            b = int(r["batch"])
            ly = layers.get(b, {})
            fc_ms = sum(float(ly[n]["median_ms"]) for n in ("fc6", "fc7", "fc8") if n in ly)
            gbs = float(ly["fc6"]["gb_per_s"]) if "fc6" in ly and ly["fc6"]["gb_per_s"] else float("nan")
            k = sum(float(r[c] or 0) for c in KERNELS)
            runs.setdefault((prec, fc), {}).setdefault(b, []).append((k, fc_ms, gbs, r["check"] == "ok"))
    med = lambda xs: statistics.median(xs) if xs else float("nan")
    print("| precision | batch | kernels, fc v13 | kernels, fc v14 | kernels, auto | fc6+fc7+fc8 v13 | v14 | fc6 GB/s v13 | v14 | checks |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for prec in sorted({p for p, _ in runs}):
        for b in sorted(runs.get((prec, "13"), {})):
            cell = lambda fc, i: med([x[i] for x in runs.get((prec, fc), {}).get(b, [])])
            ok = all(x[3] for fc in ("13", "14", "auto") for x in runs.get((prec, fc), {}).get(b, []))
            print(f"| {prec} | {b} | {cell('13', 0):.4f} | {cell('14', 0):.4f} | {cell('auto', 0):.4f} | {cell('13', 1):.4f} | "
                  f"{cell('14', 1):.4f} | {cell('13', 2):.0f} | {cell('14', 2):.0f} | {'ok' if ok else 'FAILED'} |")


if __name__ == "__main__":
    main(sys.argv[1])
