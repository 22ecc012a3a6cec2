#!/usr/bin/env python3
"""AlexNet on the GPU per batch size: the best cuda variant, cuDNN (exact and fastest algorithms), and the
PyTorch figures of DESIGN.md (H100 80GB HBM3, PyTorch 2.11 + cuDNN 9.19). Two views: end to end (pageable
input copied in, output copied back: what batchscope's total measures) and the GPU kernels alone (the sum of
the kernel categories of the breakdown; PyTorch's "forward only" figures are of this kind).
Usage: alexnet_table.py RESULTS_DIR  (reads alexnet-*-resident.csv written by batchscope sweep)"""
import csv
import glob
import os
import sys

PYTORCH_FWD = {1: 0.668, 16: 1.758, 256: 18.21, 1024: 68.06}  # FP32 forward only, ms
PYTORCH_E2E = {1: 0.80, 1024: 126.9}                           # FP32, pageable copy in and out, ms
KERNELS = ["conv", "pool", "fc", "act", "lrn", "softmax", "other_kernel"]


def load(path):
    rows = {}
    for r in csv.DictReader(open(path)):
        if r["run"] == "warm":
            rows[int(r["batch"])] = (float(r["total_ms_median"]), sum(float(r[k + "_ms"] or 0) for k in KERNELS), r["check"])
    return rows


def main():
    d = sys.argv[1]
    sweeps = {}
    for p in sorted(glob.glob(os.path.join(d, "alexnet-*-resident.csv"))):
        name = os.path.basename(p)[len("alexnet-"):-len("-resident.csv")]
        sweeps[name] = load(p)
    cuda = {k: v for k, v in sweeps.items() if k.startswith("cuda-") and v}
    batches = sorted({b for v in sweeps.values() for b in v})
    print("| batch | best cuda variant | cuda total ms | cuda kernels ms | cudnn exact total / kernels ms | "
          "cudnn fastest total / kernels ms (check) | PyTorch FP32 forward ms (H100) | PyTorch end to end ms (H100) |")
    print("|---|---|---|---|---|---|---|---|")
    for b in batches:
        best = min((v[b][0], k) for k, v in cuda.items() if b in v)
        c = cuda[best[1]][b]
        ex = sweeps.get("cudnn-exact", {}).get(b)
        fa = sweeps.get("cudnn-fastest", {}).get(b)
        print(f"| {b} | {best[1]} | {c[0]:.3f} | {c[1]:.3f} | "
              f"{f'{ex[0]:.3f} / {ex[1]:.3f}' if ex else '-'} | {f'{fa[0]:.3f} / {fa[1]:.3f} ({fa[2]})' if fa else '-'} | "
              f"{PYTORCH_FWD.get(b, '-')} | {PYTORCH_E2E.get(b, '-')} |")


if __name__ == "__main__":
    main()
