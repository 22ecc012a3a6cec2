#!/usr/bin/env python3
"""On the GPU machine (PyTorch, torchvision, onnx, onnxruntime): exports torchvision's AlexNet and VGG-11 (seeded
random initialisation: the machine cannot download the pretrained weights) to ONNX and writes, per network and
opset, OUT/NAME-opsetK.onnx, the input OUT/NAME.in.npy (4 seeded images, 3x224x224) and PyTorch's FP32 CPU output
OUT/NAME.out.npy, with onnxruntime's relative L2 against PyTorch on stdout (a check of the export itself).
Usage: torch_onnx_export.py OUT"""
import os
import sys

import numpy as np
import torch
import torchvision

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
torch.manual_seed(0)
x = torch.randn(4, 3, 224, 224, generator=torch.Generator().manual_seed(1))


def export(model, path, opset):
    kw = dict(input_names=["input"], output_names=["logits"], dynamic_axes={"input": {0: "batch"}}, opset_version=opset)
    try:
        torch.onnx.export(model, x[:1], path, dynamo=False, **kw)  # the TorchScript exporter: every opset
    except TypeError:
        torch.onnx.export(model, x[:1], path, **kw)


for name, ctor, opsets in (("alexnet-torchvision", torchvision.models.alexnet, (9, 17)),
                           ("vgg11", torchvision.models.vgg11, (17,))):
    m = ctor(weights=None).eval()
    with torch.no_grad():
        y = m(x).numpy()
    np.save(os.path.join(out, name + ".in.npy"), x.numpy())
    np.save(os.path.join(out, name + ".out.npy"), y)
    for k in opsets:
        p = os.path.join(out, f"{name}-opset{k}.onnx")
        try:
            export(m, p, k)
        except Exception as e:  # noqa: BLE001 - reported, the rest go on
            print(f"{name} opset {k}: export failed: {type(e).__name__}: {str(e)[:300]}")
            continue
        try:
            import onnxruntime as ort
            r = ort.InferenceSession(p, providers=["CPUExecutionProvider"]).run(None, {"input": x.numpy()})[0]
            e = np.linalg.norm(r.astype(np.float64) - y) / np.linalg.norm(y)
            print(f"{name} opset {k}: exported, onnxruntime vs PyTorch relative L2 {e:.2e}")
        except Exception as e:  # noqa: BLE001
            print(f"{name} opset {k}: exported; onnxruntime failed: {type(e).__name__}: {str(e)[:200]}")
print(f"torch {torch.__version__}, torchvision {torchvision.__version__}")
