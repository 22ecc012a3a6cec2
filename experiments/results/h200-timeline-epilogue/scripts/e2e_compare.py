#!/usr/bin/env python3
"""End to end per round from DIR/WHO-CONFIG-rR.csv (batchscope sweep --cuda-graph): the warm row's total_ms_median, its
kernel sum and the input copy, medians over rounds, each WHO against the first. Usage: e2e_compare.py DIR WHO[,WHO...]"""
import csv, glob, os, re, statistics, sys
from collections import defaultdict

K = ["conv", "pool", "fc", "act", "lrn", "softmax", "other_kernel"]
d, whos = sys.argv[1], sys.argv[2].split(",")
rows = defaultdict(list)  # (who, config, batch) -> [(total, kernels, htod, check)]
for f in sorted(glob.glob(os.path.join(d, "*.csv"))):
    m = re.match(r"(\w+)-(.+)-r(\d+)\.csv$", os.path.basename(f))
    if not m or f.endswith(".layers.csv"):
        continue
    for r in csv.DictReader(open(f)):
        if r["run"] == "warm":
            rows[(m[1], m[2], int(r["batch"]))].append((float(r["total_ms_median"]), sum(float(r[k + "_ms"] or 0) for k in K),
                                                          float(r["htod_ms"] or 0), r["check"]))
configs = sorted({(c, b) for (_, c, b) in rows})
print("| config | batch | " + " | ".join(f"{w}: total ms (rounds), kernels, htod" for w in whos) + " | " +
      " | ".join(f"{w} / {whos[0]}" for w in whos[1:]) + " | checks |")
print("|---|---|" + "---|" * (2 * len(whos) - 1) + "---|")
for c, b in configs:
    cells, meds, checks = [], [], []
    for w in whos:
        v = rows.get((w, c, b), [])
        if not v:
            cells.append("-"); meds.append(None); continue
        t = statistics.median(x[0] for x in v)
        meds.append(t)
        cells.append(f"{t:.4f} ({', '.join(f'{x[0]:.4f}' for x in v)}), {statistics.median(x[1] for x in v):.4f}, "
                     f"{statistics.median(x[2] for x in v):.4f}")
        checks += [x[3] for x in v]
    ratios = [f"{m / meds[0]:.3f}" if m and meds[0] else "-" for m in meds[1:]]
    print(f"| {c} | {b} | " + " | ".join(cells) + " | " + " | ".join(ratios) + f" | {','.join(checks)} |")
