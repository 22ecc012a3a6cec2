#!/usr/bin/env python3
"""Base against new binaries, from experiments/plan_check.sh's folder: per configuration and batch size the AlexNet
kernel time (sum of the warm row's kernel categories, median over the profiled passes) of each round, the median over
rounds, new / base, and both checks; then ECE 408's Op Times (conv1 + conv2) per precision.
Usage: ab_compare.py AB_DIR"""
import csv
import glob
import os
import re
import statistics
import sys

KERNELS = ["conv", "pool", "fc", "act", "lrn", "softmax", "other_kernel"]


def kernels(path):
    out = {}
    for r in csv.DictReader(open(path)):
        if r["run"] == "warm":
            out[int(r["batch"])] = (sum(float(r[k + "_ms"] or 0) for k in KERNELS), r["check"], float(r["check_rel_l2"] or 0))
    return out


def main():
    d = sys.argv[1]
    runs = {}  # (who, cfg) -> [ {batch: (ms, check, l2)} per round ]
    for p in sorted(glob.glob(os.path.join(d, "*-r*.csv"))):
        m = re.match(r"(base|new)-(.+)-r(\d+)\.csv$", os.path.basename(p))
        if m and not p.endswith(".layers.csv"):
            runs.setdefault((m.group(1), m.group(2)), []).append(kernels(p))
    print("| config | batch | base ms (rounds) | new ms (rounds) | new / base | checks (rel L2 new) |")
    print("|---|---|---|---|---|---|")
    for cfg in ["fp32", "fp32-tuned", "tf32", "tf32-tuned", "fp16", "fp16-tuned", "bf16", "bf16-tuned"]:
        for b in (1, 1024):
            cells = {}
            for who in ("base", "new"):
                ms = [r[b][0] for r in runs.get((who, cfg), []) if b in r]
                cells[who] = (ms, [r[b][1] for r in runs.get((who, cfg), []) if b in r], [r[b][2] for r in runs.get((who, cfg), []) if b in r])
            bm, nm = cells["base"][0], cells["new"][0]
            if not bm or not nm:
                print(f"| {cfg} | {b} | {bm} | {nm} | - | missing |")
                continue
            ratio = statistics.median(nm) / statistics.median(bm)
            checks = ",".join(cells["base"][1] + cells["new"][1])
            print(f"| {cfg} | {b} | {statistics.median(bm):.4f} ({', '.join(f'{x:.4f}' for x in bm)}) | "
                  f"{statistics.median(nm):.4f} ({', '.join(f'{x:.4f}' for x in nm)}) | {ratio:.3f} | {checks} ({max(cells['new'][2]):.2g}) |")
    print()
    print("| ECE 408 | base conv1 + conv2 ms | new | new / base | Correctness base / new |")
    print("|---|---|---|---|---|")
    for p in ("fp32", "fp16"):
        tot, corr = {}, {}
        for who in ("base", "new"):
            for f in sorted(glob.glob(os.path.join(d, f"{who}-ece408-{p}-r*.txt"))):
                t = open(f).read()
                ops = [float(x) for x in re.findall(r"^Op Time: ([0-9.e-]+)", t, re.M)]
                if ops:
                    tot.setdefault(who, []).append(sum(ops) * 1e3)
                c = re.findall(r"^Correctness: ([0-9.]+)", t, re.M)
                corr.setdefault(who, []).extend(c)
        if "base" in tot and "new" in tot:
            b, n = statistics.median(tot["base"]), statistics.median(tot["new"])
            print(f"| {p} | {b:.4f} ({', '.join(f'{x:.4f}' for x in tot['base'])}) | {n:.4f} ({', '.join(f'{x:.4f}' for x in tot['new'])}) "
                  f"| {n / b:.3f} | {'/'.join(sorted(set(corr.get('base', []))))} / {'/'.join(sorted(set(corr.get('new', []))))} |")


if __name__ == "__main__":
    main()
