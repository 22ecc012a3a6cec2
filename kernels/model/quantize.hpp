// Weight-only INT8 (--weights int8): symmetric quantisation per output channel. A channel's weights (a convolution's
// (C/groups, KH, KW) filter, a fully connected layer's row of inputs) share one scale, its largest magnitude / 127, and
// each weight becomes the whole number q = round(w / scale) in [-127, 127] (-128 is left out so that the range is
// symmetric); an all-zero channel keeps scale 0. The error of one weight is at most scale / 2, a 1/254 of the channel's
// largest; biases stay FP32. Activations are not quantised: they stay in the run's precision.
#pragma once
#include <cstdint>
#include <vector>

#include "kernels/model/model.hpp"

namespace bs {

struct QuantizedRows {
  std::vector<int8_t> q;     // (rows, per_row)
  std::vector<float> scale;  // (rows,)
};

// w: (rows, w.size() / rows), row-major. Fails when rows does not divide the size.
QuantizedRows quantize_rows(const std::vector<float>& w, int64_t rows);

// The model with each convolution's and fully connected layer's weights replaced by q x scale, in FP32: the values an
// 8-bit kernel multiplies by (exactly: q x scale rounded once to FP32), so cpu-ref on this model is the reference for
// a --weights int8 run.
Model quantize_weights(const Model& m);

// How far quantisation moved the weights: over all quantised layers, the relative L2 of (w' - w), and the largest
// per-layer one with its layer's name.
struct QuantizationSummary {
  double rel_l2 = 0, worst_layer_rel_l2 = 0;
  std::string worst_layer;
};
QuantizationSummary quantization_summary(const Model& original, const Model& quantized);

}  // namespace bs
