#!/usr/bin/env python3
"""Writes a one-layer model folder with the shape v38 gives a layer after its space-to-depth rewrite, so that
`batchscope tune` can time every engine version on it (v38 picks its engine itself): by default AlexNet's conv1
(48 channels of 57 x 57, 96 filters of 3 x 3); --vgg: VGG's conv1_1 (8 channels of 226 x 226, 64 filters of 3 x 3).
Stride 1, no padding, then ReLU; He-initialised, seed 1. Run: python3 s2d_inner_model.py DIR [--vgg]"""
import json
import os
import sys

import numpy as np

d = sys.argv[1]
vgg = "--vgg" in sys.argv[2:]
c, size, filters, name = (8, 226, 64, "conv1_1-s2d-inner") if vgg else (48, 57, 96, "conv1-s2d-inner")
os.makedirs(d, exist_ok=True)
rng = np.random.default_rng(1)
np.save(f"{d}/c_weight.npy", (rng.standard_normal((filters, c, 3, 3)) * np.sqrt(2 / (9 * c))).astype(np.float32))
np.save(f"{d}/c_bias.npy", np.zeros(filters, np.float32))
model = {"format": "batchscope-model", "version": 1, "name": name, "weights": "synthetic: He-initialised, seed 1",
         "input": [c, size, size],
         "layers": [{"name": "c", "type": "convolution", "filters": filters, "kernel": 3, "stride": 1, "padding": 0, "groups": 1,
                     "weight": {"file": "c_weight.npy", "layout": "OIHW"}, "bias": {"file": "c_bias.npy"}},
                    {"name": "r", "type": "relu"}]}
with open(f"{d}/model.json", "w") as f:
    json.dump(model, f, indent=1)
