#include "kernels/model/quantize.hpp"

#include <algorithm>
#include <cmath>

#include "weights_tools/error.hpp"

namespace bs {

QuantizedRows quantize_rows(const std::vector<float>& w, int64_t rows) {
  if (rows <= 0 || w.size() % static_cast<size_t>(rows) != 0)
    fail("quantize_rows", std::to_string(w.size()) + " weights do not split into " + std::to_string(rows) + " equal rows");
  const size_t per = w.size() / static_cast<size_t>(rows);
  QuantizedRows r;
  r.q.resize(w.size());
  r.scale.resize(static_cast<size_t>(rows));
  for (size_t row = 0; row < static_cast<size_t>(rows); ++row) {
    const float* at = w.data() + row * per;
    float largest = 0;
    for (size_t k = 0; k < per; ++k) largest = std::max(largest, std::fabs(at[k]));
    const float scale = largest / 127.0f;
    r.scale[row] = scale;
    for (size_t k = 0; k < per; ++k) {
      const float v = scale > 0 ? std::nearbyint(at[k] / scale) : 0.0f;  // ties to even, as the device's rint
      r.q[row * per + k] = static_cast<int8_t>(std::clamp(v, -127.0f, 127.0f));
    }
  }
  return r;
}

namespace {
// The weights of a quantised layer (a convolution or fully connected one) and its output channel count, or null.
const std::vector<float>* channel_weights(const Layer& l, int64_t& rows) {
  if (auto* c = std::get_if<ConvParams>(&l.op)) {
    rows = c->filters;
    return &c->weight;
  }
  if (auto* f = std::get_if<FcParams>(&l.op)) {
    rows = f->outputs;
    return &f->weight;
  }
  return nullptr;
}
}  // namespace

Model quantize_weights(const Model& m) {
  Model q = m;
  for (Layer& l : q.layers) {
    int64_t rows = 0;
    const std::vector<float>* in = channel_weights(l, rows);
    if (!in || in->empty()) continue;
    auto& w = const_cast<std::vector<float>&>(*in);  // q's own copy
    const QuantizedRows r = quantize_rows(w, rows);
    const size_t per = w.size() / static_cast<size_t>(rows);
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(r.q[i]) * r.scale[i / per];
  }
  return q;
}

QuantizationSummary quantization_summary(const Model& original, const Model& quantized) {
  if (original.layers.size() != quantized.layers.size()) fail("quantization_summary", "the two models differ in their layers");
  QuantizationSummary s;
  double num = 0, den = 0;
  for (size_t i = 0; i < original.layers.size(); ++i) {
    int64_t rows = 0;
    const std::vector<float>* wa = channel_weights(original.layers[i], rows);
    const std::vector<float>* wb = channel_weights(quantized.layers[i], rows);
    if (!wa || !wb || wa->size() != wb->size() || wa->empty()) continue;
    double ln = 0, ld = 0;
    for (size_t k = 0; k < wa->size(); ++k) {
      const double d = double((*wb)[k]) - (*wa)[k];
      ln += d * d;
      ld += double((*wa)[k]) * (*wa)[k];
    }
    num += ln;
    den += ld;
    const double rel = ld > 0 ? std::sqrt(ln / ld) : 0.0;
    if (rel >= s.worst_layer_rel_l2) {
      s.worst_layer_rel_l2 = rel;
      s.worst_layer = original.layers[i].name;
    }
  }
  s.rel_l2 = den > 0 ? std::sqrt(num / den) : 0.0;
  return s;
}

}  // namespace bs
