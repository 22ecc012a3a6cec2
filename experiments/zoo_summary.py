#!/usr/bin/env python3
"""Summaries of experiments/zoo_check.sh's results as Markdown tables.
  zoo_summary.py zoo DIR    every sweep DIR/NET-BACKEND-PRECISION.csv: kernel time (warm median) and the check per batch
  zoo_summary.py heur DIR   DIR/NET-PRECISION-{heuristic,tuned}[-rN].csv: the heuristic's kernel time against the tuned one, per round
  zoo_summary.py rel A B    the relative L2 of .npy A against .npy B"""
import csv
import glob
import os
import sys

import numpy as np

KERNELS = ["conv_ms", "pool_ms", "fc_ms", "act_ms", "lrn_ms", "softmax_ms", "flatten_ms", "other_kernel_ms"]


def warm(path):
    with open(path, newline="") as f:
        return {int(r["batch"]): r for r in csv.DictReader(f) if r["run"] == "warm"}


def kernel_ms(r):
    return sum(float(r[k] or 0) for k in KERNELS)


def zoo(d):
    print("| network | backend | precision | batch | kernels ms | check | rel. L2 |")
    print("|---|---|---|---:|---:|---|---:|")
    bad = 0
    for p in sorted(q for q in glob.glob(os.path.join(d, "*.csv")) if not q.endswith(".layers.csv")):
        net, backend, prec = os.path.basename(p)[:-4].rsplit("-", 2)
        for b, r in sorted(warm(p).items()):
            bad += r["check"] != "ok"
            print(f"| {net} | {backend} | {prec} | {b} | {kernel_ms(r):.3f} | {r['check']} | {float(r['check_rel_l2']):.2e} |")
    print(f"\n{bad} points failing their check")


def heur(d):
    """Rounds beyond the first are NET-PRECISION-MODE-rN.csv; each round's ratio is printed, and the check's error of each."""
    print("| network | precision | batch | round | heuristic ms | tuned ms | heuristic / tuned | error heuristic / tuned |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for p in sorted(glob.glob(os.path.join(d, "*-heuristic.csv"))):
        net, prec = os.path.basename(p)[: -len("-heuristic.csv")].rsplit("-", 1)
        n = 1
        while True:  # round n's files, until one is missing
            suffix = "" if n == 1 else f"-r{n}"
            hp, tp = p.replace("-heuristic.csv", f"-heuristic{suffix}.csv"), p.replace("-heuristic.csv", f"-tuned{suffix}.csv")
            if not (os.path.exists(hp) and os.path.exists(tp)):
                break
            h, tu = warm(hp), warm(tp)
            for b in sorted(set(h) & set(tu)):
                a, c = kernel_ms(h[b]), kernel_ms(tu[b])
                errs = " / ".join(f"{float(r['check_rel_l2'] or 'nan'):.2e} {r['check']}" for r in (h[b], tu[b]))
                print(f"| {net} | {prec} | {b} | {n} | {a:.3f} | {c:.3f} | {a / c:.3f} | {errs} |")
            n += 1


def rel(a, b):
    y, r = np.load(a).astype(np.float64).reshape(-1), np.load(b).astype(np.float64).reshape(-1)
    print(f"{np.linalg.norm(y - r) / np.linalg.norm(r):.3e}")


if __name__ == "__main__":
    {"zoo": zoo, "heur": heur, "rel": rel}[sys.argv[1]](*sys.argv[2:])
