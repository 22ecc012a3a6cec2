#!/usr/bin/env python3
"""Base against new binaries, from experiments/plan_check.sh's folder: per configuration and batch size the AlexNet
kernel time (sum of the warm row's kernel categories, median over the profiled passes) of each round, the median over
rounds, new / base, and both checks, for every configuration and batch size the folder has; with LAYERS (comma-separated
layer names) the same for those layers' summed times (the layer CSVs; a layer fused into another counts as 0); then
ECE 408's Op Times (conv1 + conv2) per precision.
Usage: ab_compare.py AB_DIR [LAYERS]"""
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


def layer_sum(path, names):
    out = {}
    for r in csv.DictReader(open(path)):
        if r["run"] == "warm" and r["layer"] in names:
            b = int(r["batch"])
            out[b] = (out.get(b, (0.0,))[0] + float(r["median_ms"] or 0), "ok", 0.0)
    return out


ORDER = ["fp32", "fp32-tuned", "tf32", "tf32-tuned", "fp16", "fp16-tuned", "bf16", "bf16-tuned"]


def main():
    d = sys.argv[1]
    layers = sys.argv[2].split(",") if len(sys.argv) > 2 else []
    runs, lruns = {}, {}  # (who, cfg) -> [ {batch: (ms, check, l2)} per round ]
    for p in sorted(glob.glob(os.path.join(d, "*-r*.csv"))):
        m = re.match(r"(base|new)-(.+)-r(\d+)\.csv$", os.path.basename(p))
        if m and not p.endswith(".layers.csv"):
            runs.setdefault((m.group(1), m.group(2)), []).append(kernels(p))
            if layers and os.path.exists(p[:-4] + ".layers.csv"):
                lruns.setdefault((m.group(1), m.group(2)), []).append(layer_sum(p[:-4] + ".layers.csv", layers))
    table(runs, "kernels")
    if layers:
        print()
        table(lruns, " + ".join(layers))
    ece408(d)


def table(runs, what):
    cfgs = sorted({c for _, c in runs}, key=lambda c: (ORDER.index(c) if c in ORDER else len(ORDER), c))
    batches = sorted({b for rs in runs.values() for r in rs for b in r})
    print(f"| config | batch | base ms, {what} (rounds) | new ms (rounds) | new / base | checks (rel L2 new) |")
    print("|---|---|---|---|---|---|")
    for cfg in cfgs:
        for b in batches:
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


def ece408(d):
    if not glob.glob(os.path.join(d, "*-ece408-*.txt")):
        return
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
