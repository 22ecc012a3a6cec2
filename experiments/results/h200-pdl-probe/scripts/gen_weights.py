# The device's pack had no room for batchscope-weights: AlexNet's .npy files made with NumPy in the shapes, means and
# spreads of `batchscope-weights synthesize --model alexnet --seed 1` (weights.json, measured from that tool's output).
import json, os, sys
import numpy as np
here = os.path.dirname(os.path.abspath(__file__))
spec = json.load(open(os.path.join(here, "weights.json")))
rng = np.random.default_rng(1)
out = sys.argv[1]
for name, (shape, mean, std, dtype) in spec.items():
    np.save(os.path.join(out, name), (rng.standard_normal(shape) * std + mean).astype(dtype))
