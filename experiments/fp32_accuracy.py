#!/usr/bin/env python3
"""Independent references for AlexNet's FP32 outputs (issue 35's accuracy target): PyTorch's forward of the model
folder's own weights (data/models/alexnet: conv1-conv5 OIHW, fc6-fc8 OI, the architecture of pytorch_alexnet.py) on the
same input, in FP64 (the exact reference) and in FP32 with TF32 off; then each batchscope output (infer --input X
--output Y.npy) against both: relative L2 of the logits and top-1 agreement.
Usage: fp32_accuracy.py --model DIR --input X.npy NAME=Y.npy [NAME=Y.npy ...]  (prints a Markdown table)"""
import argparse
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pytorch_alexnet import alexnet  # noqa: E402


def forward(model_dir, x, dtype):
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    net = alexnet().to("cuda", dtype).eval()
    names = ["conv1", "conv2", "conv3", "conv4", "conv5", "fc6", "fc7", "fc8"]
    layers = [m for m in net if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear))]
    with torch.no_grad():
        for name, m in zip(names, layers):
            w = np.load(os.path.join(model_dir, f"{name}_weight.npy"))
            b = np.load(os.path.join(model_dir, f"{name}_bias.npy"))
            assert tuple(w.shape) == tuple(m.weight.shape), (name, w.shape, m.weight.shape)
            m.weight.copy_(torch.from_numpy(w).to(dtype))
            m.bias.copy_(torch.from_numpy(b).to(dtype))
        out = []
        for i in range(0, len(x), 32):
            out.append(net(torch.from_numpy(x[i:i + 32]).to("cuda", dtype)).double().cpu().numpy())
    return np.concatenate(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--input", required=True)
    ap.add_argument("outputs", nargs="+")
    a = ap.parse_args()
    x = np.load(a.input).astype(np.float32)
    ref64 = forward(a.model, x, torch.float64)
    ref32 = forward(a.model, x, torch.float32)
    rel = lambda y, r: float(np.linalg.norm(y - r) / np.linalg.norm(r))
    top1 = lambda y, r: float(np.mean(y.argmax(1) == r.argmax(1)))
    print(f"{len(x)} images; PyTorch FP32 (TF32 off) against FP64: rel. L2 {rel(ref32, ref64):.2e}\n")
    print("| output | rel. L2 vs FP64 | rel. L2 vs PyTorch FP32 | top-1 agreement vs FP64 |")
    print("|---|---:|---:|---:|")
    for spec in a.outputs:
        name, path = spec.split("=", 1)
        y = np.load(path).astype(np.float64)
        print(f"| {name} | {rel(y, ref64):.2e} | {rel(y, ref32):.2e} | {top1(y, ref64):.4f} |")


if __name__ == "__main__":
    main()
