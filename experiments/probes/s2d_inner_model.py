#!/usr/bin/env python3
"""Writes a one-layer model folder with the shape v38 gives AlexNet's conv1 after its space-to-depth rewrite
(48 channels of 57 x 57, 96 filters of 3 x 3, stride 1, then ReLU; He-initialised, seed 1), so that `batchscope tune`
can time every engine version on it (v38 picks its engine itself). Run: python3 s2d_inner_model.py DIR"""
import json
import os
import sys

import numpy as np

d = sys.argv[1]
os.makedirs(d, exist_ok=True)
rng = np.random.default_rng(1)
np.save(f"{d}/c_weight.npy", (rng.standard_normal((96, 48, 3, 3)) * np.sqrt(2 / 432)).astype(np.float32))
np.save(f"{d}/c_bias.npy", np.zeros(96, np.float32))
model = {"format": "batchscope-model", "version": 1, "name": "conv1-s2d-inner", "weights": "synthetic: He-initialised, seed 1",
         "input": [48, 57, 57],
         "layers": [{"name": "c", "type": "convolution", "filters": 96, "kernel": 3, "stride": 1, "padding": 0, "groups": 1,
                     "weight": {"file": "c_weight.npy", "layout": "OIHW"}, "bias": {"file": "c_bias.npy"}},
                    {"name": "r", "type": "relu"}]}
with open(f"{d}/model.json", "w") as f:
    json.dump(model, f, indent=1)
