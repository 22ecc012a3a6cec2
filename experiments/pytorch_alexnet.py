#!/usr/bin/env python3
"""PyTorch's BVLC AlexNet (grouped conv2/4/5, LRN, 227x227; the layers of data/models/alexnet/model.json), or with
--net vgg11 / vgg16 torchvision's VGG (224x224, the layers of `batchscope-weights synthesize --model vgg16`), forward
only, timed with CUDA events: median (and min, max) of REPS passes after WARMUP, per batch size and mode:
  fp32        FP32, TF32 off for cuDNN and cuBLAS
  fp32-graph  the same captured once in a CUDA graph and replayed (batches up to 256)
  tf32        TF32 tensor cores allowed
  fp16-cl     FP16 weights and activations, channels-last
cudnn.benchmark is on (cuDNN times its algorithms once per shape, as a practitioner would run it). Random
weights and inputs: times do not depend on the values. Prints a table; writes JSON to --json.
Usage: pytorch_alexnet.py [--net alexnet|vgg11|vgg16] [--batches 1,16,128,1024] [--modes fp32,tf32,...] [--reps 10] [--warmup 3] [--json F]"""
import argparse
import json
import statistics

import torch
import torch.nn as nn


def alexnet():
    lrn = lambda: nn.LocalResponseNorm(5, alpha=1e-4, beta=0.75, k=1.0)  # Caffe's alpha/size convention, as PyTorch's
    return nn.Sequential(
        nn.Conv2d(3, 96, 11, stride=4), nn.ReLU(inplace=True), lrn(), nn.MaxPool2d(3, 2),
        nn.Conv2d(96, 256, 5, padding=2, groups=2), nn.ReLU(inplace=True), lrn(), nn.MaxPool2d(3, 2),
        nn.Conv2d(256, 384, 3, padding=1), nn.ReLU(inplace=True),
        nn.Conv2d(384, 384, 3, padding=1, groups=2), nn.ReLU(inplace=True),
        nn.Conv2d(384, 256, 3, padding=1, groups=2), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2),
        nn.Flatten(), nn.Linear(9216, 4096), nn.ReLU(inplace=True), nn.Linear(4096, 4096), nn.ReLU(inplace=True),
        nn.Linear(4096, 1000))


def time_it(fn, reps, warmup):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times), min(times), max(times)


def network(net):
    """The module and its input's side."""
    if net == "alexnet":
        return alexnet(), 227
    import torchvision
    return getattr(torchvision.models, net)(weights=None), 224


def run(net, mode, n, reps, warmup):
    tf32 = mode == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cudnn.benchmark = True
    model, side = network(net)
    model = model.cuda().eval()
    x = torch.randn(n, 3, side, side, device="cuda") * 50
    if mode in ("fp16-cl", "bf16-cl"):
        dt = torch.float16 if mode == "fp16-cl" else torch.bfloat16
        model = model.to(dt).to(memory_format=torch.channels_last)
        x = x.to(dt).to(memory_format=torch.channels_last)
    with torch.no_grad():
        if mode == "fp32-graph":
            for _ in range(3):
                model(x)
            torch.cuda.synchronize()
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                y = model(x)
            return time_it(g.replay, reps, warmup)
        return time_it(lambda: model(x), reps, warmup)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--net", default="alexnet", choices=["alexnet", "vgg11", "vgg16"])
    ap.add_argument("--batches", default="1,16,128,1024")
    ap.add_argument("--modes", default="fp32,fp32-graph,tf32,fp16-cl")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--json")
    a = ap.parse_args()
    out = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
           "net": a.net, "reps": a.reps, "warmup": a.warmup, "results": []}
    print(f"# {a.net}: PyTorch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, {out['device']}")
    print("mode        batch   median ms      min ms      max ms")
    for mode in a.modes.split(","):
        for n in map(int, a.batches.split(",")):
            if mode == "fp32-graph" and n > 256:
                continue
            med, lo, hi = run(a.net, mode, n, a.reps, a.warmup)
            out["results"].append({"mode": mode, "batch": n, "median_ms": med, "min_ms": lo, "max_ms": hi})
            print(f"{mode:10s} {n:6d} {med:11.4f} {lo:11.4f} {hi:11.4f}", flush=True)
            torch.cuda.empty_cache()
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
