#!/usr/bin/env python3
"""Summary of experiments/batch1_check.sh's sweeps: DIR/PRECISION-fcLABEL-rROUND.csv (LABEL: 13, 14, auto, or 14base /
14new for the A/B) or DIR/PRECISION-convLABEL-rROUND.csv (the convolution versions forced: conv21, conv48, convauto) and
their .layers.csv. Per precision and batch, for each label: the kernel time (warm median, every
kernel category; the median over the rounds) and the warm total (end to end), the convolution layers' sum, fc6 + fc7 + fc8,
fc6's GB/s as the layer CSV gives it (binaries before
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
    runs = {}  # (precision, label) -> batch -> list of (kernel ms, fc ms, fc6 GB/s, check ok, total ms, conv ms)
    for p in sorted(glob.glob(os.path.join(d, "*.csv"))):
        m = re.match(r"(\w+?)-(fc|conv)(\w+)-r(\d+)\.csv$", os.path.basename(p))
        if not m:
            continue
        prec, fc = m.group(1), (m.group(3) if m.group(2) == "fc" else m.group(2) + m.group(3))
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
            conv_ms = sum(float(x["median_ms"] or 0) for x in ly.values() if x["type"] == "convolution")
            k = sum(float(r[c] or 0) for c in KERNELS)
            runs.setdefault((prec, fc), {}).setdefault(b, []).append((k, fc_ms, gbs, r["check"] == "ok", float(r["total_ms_median"]), conv_ms))
    med = lambda xs: statistics.median(xs) if xs else float("nan")
    name = lambda f: f if f.startswith("conv") else "fc " + f
    # One table per set of labels: precisions measured with the same labels share it.
    groups = {}
    for prec in sorted({p for p, _ in runs}):
        key = tuple(sorted({fc for p, fc in runs if p == prec}, key=lambda x: (not x[:2].isdigit(), x)))
        groups.setdefault(key, []).append(prec)
    for labels, precs in groups.items():
        head = " | ".join(f"total, {name(f)}" for f in labels) + " | " + " | ".join(f"kernels, {name(f)}" for f in labels) + " | " + \
            " | ".join(f"convs ms, {f}" for f in labels) + " | " + \
            " | ".join(f"fc6-8 ms, {f}" for f in labels) + " | " + " | ".join(f"fc6 GB/s, {f}" for f in labels)
        print(f"| precision | batch | {head} | checks |")
        print("|---|---:|" + "---:|" * (5 * len(labels)) + "---|")
        for prec in precs:
            for b in sorted({b for (p, _), v in runs.items() if p == prec for b in v}):
                cell = lambda fc, i: med([x[i] for x in runs.get((prec, fc), {}).get(b, [])])
                ok = all(x[3] for fc in labels for x in runs.get((prec, fc), {}).get(b, []))
                cells = [f"{cell(f, 4):.4f}" for f in labels] + [f"{cell(f, 0):.4f}" for f in labels] + \
                    [f"{cell(f, 5):.4f}" for f in labels] + [f"{cell(f, 1):.4f}" for f in labels] + [f"{cell(f, 2):.0f}" for f in labels]
                print(f"| {prec} | {b} | " + " | ".join(cells) + f" | {'ok' if ok else 'FAILED'} |")
        print()

if __name__ == "__main__":
    main(sys.argv[1])
