#!/usr/bin/env python3
"""Summary of experiments/batch1_check.sh's sweeps: DIR/PRECISION-fcLABEL-rROUND.csv (LABEL: 13, 14, auto, or 14base /
14new for the A/B) and their .layers.csv. Per precision and batch, for each label: the kernel time (warm median, every
kernel category; the median over the rounds) and the warm total (end to end), fc6 + fc7 + fc8, fc6's GB/s as the layer CSV gives it (binaries before
the bandwidth_pct column count 4 bytes a value in every precision: halve them for fp16 and bf16); whether every check passed.
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
            runs.setdefault((prec, fc), {}).setdefault(b, []).append((k, fc_ms, gbs, r["check"] == "ok", float(r["total_ms_median"])))
    med = lambda xs: statistics.median(xs) if xs else float("nan")
    labels = sorted({fc for _, fc in runs}, key=lambda x: (not x[:2].isdigit(), x))
    head = " | ".join(f"total, fc {f}" for f in labels) + " | " + " | ".join(f"kernels, fc {f}" for f in labels) + " | " + \
        " | ".join(f"fc6-8 ms, {f}" for f in labels) + " | " + " | ".join(f"fc6 GB/s, {f}" for f in labels)
    print(f"| precision | batch | {head} | checks |")
    print("|---|---:|" + "---:|" * (4 * len(labels)) + "---|")
    for prec in sorted({p for p, _ in runs}):
        for b in sorted({b for (p, _), v in runs.items() if p == prec for b in v}):
            cell = lambda fc, i: med([x[i] for x in runs.get((prec, fc), {}).get(b, [])])
            ok = all(x[3] for fc in labels for x in runs.get((prec, fc), {}).get(b, []))
            cells = [f"{cell(f, 4):.4f}" for f in labels] + [f"{cell(f, 0):.4f}" for f in labels] + \
                [f"{cell(f, 1):.4f}" for f in labels] + [f"{cell(f, 2):.0f}" for f in labels]
            print(f"| {prec} | {b} | " + " | ".join(cells) + f" | {'ok' if ok else 'FAILED'} |")


if __name__ == "__main__":
    main(sys.argv[1])
