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
                                     "total": float(r["total_ms_median"]), "check": r["check"],
                                     "rel_l2": float(r.get("check_rel_l2") or 0), "top1": r.get("check_top1", "")}
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
    reduced = ("tf32", "fp16", "bf16")
    ours = {k: v for k, v in configs.items() if k.startswith("cuda") and not any(p in k for p in reduced)}
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
    # --precision tf32 / fp16 / bf16: own (cuda-<p>-*) against cudnn-<p> and PyTorch in the same precision
    # (channels-last for the 16-bit ones), with the accuracy each kept
    pt_mode = {"tf32": "tf32", "fp16": "fp16-cl", "bf16": "bf16-cl"}
    reduced_names = []
    for p in reduced:
        p_own = {k: v for k, v in configs.items() if k.startswith("cuda") and p in k}
        p_ref = configs.get("cudnn-" + p, {})
        if not p_own and not p_ref:
            continue
        pnames = sorted(p_own)
        reduced_names += pnames + (["cudnn-" + p] if p_ref else [])
        print(f"\n| batch ({p}) | " + " | ".join(f"{n} ms (rel L2)" for n in pnames) +
              f" | cudnn {p} ms (rel L2) | PyTorch {pt_mode[p]} ms | own / cuDNN {p} | own / PyTorch {pt_mode[p]} |")
        print("|---" * (len(pnames) + 5) + "|")
        for b in batches:
            cells, best = [], None
            for n in pnames:
                r = p_own[n].get(b)
                cells.append(f"{r['kernels']:.3f} ({r['rel_l2']:.1e}, {r['check']})" if r else "-")
                if r and r["check"] == "ok" and (best is None or r["kernels"] < best):
                    best = r["kernels"]
            c = p_ref.get(b)
            tf = torch.get((pt_mode[p], b))
            print(f"| {b} | " + " | ".join(cells) + " | " + (f"{c['kernels']:.3f} ({c['rel_l2']:.1e}, {c['check']})" if c else "-") +
                  " | " + (f"{tf:.3f}" if tf else "-") + " | " + (f"{best / c['kernels']:.2f}x" if best and c else "-") +
                  " | " + (f"{best / tf:.2f}x" if best and tf else "-") + " |")
    # per layer at the largest batch, for every config
    for n in names + (["cudnn-exact"] if ref else []) + reduced_names:
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
