#!/usr/bin/env python3
"""Per-layer kernel times from a folder of sweeps, one row per sweep file and batch: the named layers' warm medians, the
sum of the kernel categories and the check. File names are NET-WHAT-PRECISION.csv (with their .layers.csv); WHAT
labels the row (a forced version, say).
Usage: layer_table.py DIR LAYER[,LAYER...] [COLUMN-TITLE]"""
import csv
import glob
import os
import sys

KERNELS = ["conv_ms", "pool_ms", "fc_ms", "act_ms", "lrn_ms", "softmax_ms", "flatten_ms", "other_kernel_ms"]


def main(d, layers, title="version"):
    names = layers.split(",")
    print(f"| {title} | batch | " + " | ".join(names) + " | all kernels ms | check |")
    print("|---|---:|" + "---:|" * len(names) + "---:|---|")
    for p in sorted(glob.glob(os.path.join(d, "*.layers.csv"))):
        what = os.path.basename(p).split("-")[1]
        per = {}
        for r in csv.DictReader(open(p)):
            if r["run"] == "warm":
                per.setdefault(r["batch"], {})[r["layer"]] = float(r["median_ms"])
        tot = {r["batch"]: r for r in csv.DictReader(open(p.replace(".layers.csv", ".csv"))) if r["run"] == "warm"}
        for b in sorted(per, key=int):
            t = tot[b]
            print(f"| {what} | {b} | " + " | ".join(f"{per[b].get(n, 0):.3f}" for n in names) +
                  f" | {sum(float(t[k] or 0) for k in KERNELS):.3f} | {t['check']} {float(t['check_rel_l2']):.2e} |")


if __name__ == "__main__":
    main(*sys.argv[1:])
