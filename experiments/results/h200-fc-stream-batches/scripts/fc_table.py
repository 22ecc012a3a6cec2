#!/usr/bin/env python3
"""The probe's table: for every sweep DIR/WHO-CONFIG-rR.csv (one image), the warm row's kernel sum and the fully
connected layers' medians (its .layers.csv), median over rounds, with the rounds' spread and the check.
Usage: fc_table.py DIR"""
import csv
import glob
import os
import re
import statistics
import sys

KERNELS = ["conv", "pool", "fc", "act", "lrn", "softmax", "other_kernel"]
LAYERS = ["fc6", "fc7", "fc8"]


def one(path):
    row = {}
    for r in csv.DictReader(open(path)):
        if r["run"] == "warm" and r["batch"] == "1":
            row["kernels"] = sum(float(r[k + "_ms"] or 0) for k in KERNELS) * 1000
            row["check"] = f'{r["check"]} {r["check_rel_l2"]}' if r["check"] else "-"
    lp = path[:-4] + ".layers.csv"
    if os.path.exists(lp):
        for r in csv.DictReader(open(lp)):
            if r["run"] == "warm" and r["batch"] == "1" and r["layer"] in LAYERS:
                row[r["layer"]] = float(r["median_ms"]) * 1000
                row[r["layer"] + "_impl"] = r["implementation"]
    return row


def main():
    d = sys.argv[1]
    runs = {}
    for p in sorted(glob.glob(os.path.join(d, "*-r*.csv"))):
        m = re.match(r"(.+)-r(\d+)\.csv$", os.path.basename(p))
        if m and not p.endswith(".layers.csv"):
            runs.setdefault(m.group(1), []).append(one(p))
    cols = ["kernels"] + LAYERS + ["fc6+fc7+fc8"]
    print("| sweep (who-config) | " + " | ".join(c + " us (rounds)" for c in cols) + " | checks | fc6's version |")
    print("|---|" + "---|" * (len(cols) + 2))
    for name, rs in runs.items():
        for r in rs:
            if all(l in r for l in LAYERS):
                r["fc6+fc7+fc8"] = sum(r[l] for l in LAYERS)
        cells = []
        for c in cols:
            v = [r[c] for r in rs if c in r]
            cells.append(f"{statistics.median(v):.2f} ({', '.join(f'{x:.2f}' for x in v)})" if v else "-")
        checks = ", ".join(r.get("check", "-") for r in rs)
        print(f"| {name} | " + " | ".join(cells) + f" | {checks} | {rs[0].get('fc6_impl', '-')} |")


if __name__ == "__main__":
    main()
