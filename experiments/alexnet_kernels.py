#!/usr/bin/env python3
"""AlexNet kernel time per batch size: every cuda configuration measured against cuDNN exact and PyTorch FP32
from the same run, and each layer's TFLOP/s against the H100's floors.
Usage: alexnet_kernels.py SWEEP_DIR [PYTORCH_JSON]
SWEEP_DIR holds alexnet-<config>.csv (+ .layers.csv) from `batchscope sweep`; kernel time is the sum of the
breakdown's kernel categories of the warm row (median over its repetitions)."""
import csv
import glob
import json
import os
import sys

KERNELS = ["conv", "pool", "fc", "act", "lrn", "softmax", "other_kernel"]
FP32_TFLOPS, TF32_TC_TFLOPS = 66.9, 494.7  # H100 SXM datasheet: FP32 FMA, dense TF32 tensor cores (wgmma)


def sweep(path):
    rows = {}
    for r in csv.DictReader(open(path)):
        if r["run"] == "warm":
            rows[int(r["batch"])] = {"kernels": sum(float(r[k + "_ms"] or 0) for k in KERNELS),
                                     "total": float(r["total_ms_median"]), "check": r["check"]}
    return rows


def layers(path):
    out = {}
    for r in csv.DictReader(open(path)):
        if r["run"] == "warm":
            out.setdefault(int(r["batch"]), []).append(r)
    return out


def main():
    d = sys.argv[1]
    torch = {}
    if len(sys.argv) > 2 and os.path.exists(sys.argv[2]):
        for r in json.load(open(sys.argv[2]))["results"]:
            torch[(r["mode"], r["batch"])] = r["median_ms"]
    configs = {}
    for p in sorted(glob.glob(os.path.join(d, "alexnet-*.csv"))):
        if p.endswith(".layers.csv"):
            continue
        configs[os.path.basename(p)[len("alexnet-"):-4]] = sweep(p)
    ours = {k: v for k, v in configs.items() if k.startswith("cuda")}
    ref = configs.get("cudnn-exact", {})
    batches = sorted({b for v in configs.values() for b in v})
    names = sorted(ours)
    print("| batch | " + " | ".join(f"{n} ms" for n in names) + " | cudnn exact ms | PyTorch FP32 ms | PyTorch TF32 ms | best own / cuDNN |")
    print("|---" * (len(names) + 5) + "|")
    for b in batches:
        cells = []
        best = None
        for n in names:
            r = ours[n].get(b)
            cells.append(f"{r['kernels']:.3f}" + ("" if r["check"] == "ok" else f" ({r['check']})") if r else "-")
            if r and r["check"] == "ok" and (best is None or r["kernels"] < best):
                best = r["kernels"]
        c = ref.get(b)
        ratio = f"{best / c['kernels']:.2f}x" if best and c else "-"
        pt = torch.get(("fp32", b))
        tf = torch.get(("tf32", b))
        print(f"| {b} | " + " | ".join(cells) + f" | {c['kernels']:.3f} |" if c else f"| {b} | " + " | ".join(cells) + " | - |",
              f"{pt:.3f}" if pt else "-", "|", f"{tf:.3f}" if tf else "-", "|", ratio, "|")
    # per layer at the largest batch, for every config
    for n in names + (["cudnn-exact"] if ref else []):
        lp = os.path.join(d, f"alexnet-{n}.layers.csv")
        if not os.path.exists(lp):
            continue
        ls = layers(lp)
        b = max(ls)
        print(f"\n{n}, batch {b}: layer, implementation, ms, TFLOP/s, % of FP32 peak")
        for r in ls[b]:
            ms = float(r["median_ms"])
            if ms <= 0:
                continue
            tf = float(r["gflop_per_s"]) / 1e3
            print(f"  {r['layer']:8s} {r['implementation'][:48]:48s} {ms:9.3f} {tf:8.2f} {100 * tf / FP32_TFLOPS:6.1f}%")


if __name__ == "__main__":
    main()
