#include "kernels/cpu/ref_ops.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace bs::ref {

void conv(const float* in, int n, Shape is, const ConvParams& p, Shape os, float* out) {
  const int cg = is.c / p.groups, mg = p.filters / p.groups;
  for (int b = 0; b < n; ++b)
    for (int m = 0; m < p.filters; ++m) {
      const int g = m / mg;
      for (int oy = 0; oy < os.h; ++oy)
        for (int ox = 0; ox < os.w; ++ox) {
          double acc = p.bias.empty() ? 0.0 : p.bias[m];
          for (int c = 0; c < cg; ++c)
            for (int ky = 0; ky < p.kh; ++ky)
              for (int kx = 0; kx < p.kw; ++kx) {
                const int y = oy * p.sh - p.ph + ky * p.dh, x = ox * p.sw - p.pw + kx * p.dw;
                if (y < 0 || y >= is.h || x < 0 || x >= is.w) continue;  // zero padding
                const float v = in[((int64_t{b} * is.c + g * cg + c) * is.h + y) * is.w + x];
                const float w = p.weight[((int64_t{m} * cg + c) * p.kh + ky) * p.kw + kx];
                acc += static_cast<double>(v) * w;
              }
          out[((int64_t{b} * os.c + m) * os.h + oy) * os.w + ox] = static_cast<float>(acc);
        }
    }
}

void activation(float* x, int64_t count, Act act, float alpha) {
  for (int64_t i = 0; i < count; ++i) {
    switch (act) {
      case Act::relu: x[i] = x[i] > 0.0f ? x[i] : 0.0f; break;
      case Act::tanh: x[i] = std::tanh(x[i]); break;
      case Act::sigmoid: x[i] = 1.0f / (1.0f + std::exp(-x[i])); break;
      case Act::leaky_relu: x[i] = x[i] >= 0.0f ? x[i] : alpha * x[i]; break;
    }
  }
}

void pool(const float* in, int n, Shape is, const PoolParams& p, Shape os, float* out) {
  for (int b = 0; b < n; ++b)
    for (int c = 0; c < is.c; ++c) {
      const float* src = in + (int64_t{b} * is.c + c) * is.h * is.w;
      for (int oy = 0; oy < os.h; ++oy)
        for (int ox = 0; ox < os.w; ++ox) {
          const PoolWindow w = p.window(is.h, is.w, oy, ox);
          double acc = p.kind == PoolKind::max ? -std::numeric_limits<double>::infinity() : 0.0;
          for (int y = w.y0; y < w.y1; ++y)
            for (int x = w.x0; x < w.x1; ++x) {
              const double v = src[y * is.w + x];
              acc = p.kind == PoolKind::max ? std::max(acc, v) : acc + v;
            }
          if (p.kind == PoolKind::avg) acc /= w.count;
          out[((int64_t{b} * os.c + c) * os.h + oy) * os.w + ox] = static_cast<float>(acc);
        }
    }
}

void lrn(const float* in, int n, Shape s, const LrnParams& p, float* out) {
  const int half = p.size / 2;
  const int64_t plane = int64_t{s.h} * s.w;
  for (int b = 0; b < n; ++b)
    for (int c = 0; c < s.c; ++c)
      for (int64_t i = 0; i < plane; ++i) {
        double sum = 0.0;
        for (int j = std::max(0, c - half); j <= std::min(s.c - 1, c + half); ++j) {
          const double v = in[(int64_t{b} * s.c + j) * plane + i];
          sum += v * v;
        }
        const int64_t at = (int64_t{b} * s.c + c) * plane + i;
        const double scale = p.k + p.alpha / p.size * sum;
        out[at] = static_cast<float>(in[at] * std::pow(scale, -static_cast<double>(p.beta)));
      }
}

void fc(const float* in, int n, int64_t inputs, const FcParams& p, float* out) {
  for (int b = 0; b < n; ++b)
    for (int o = 0; o < p.outputs; ++o) {
      double acc = p.bias.empty() ? 0.0 : p.bias[o];
      for (int64_t i = 0; i < inputs; ++i) acc += static_cast<double>(in[b * inputs + i]) * p.weight[o * inputs + i];
      out[int64_t{b} * p.outputs + o] = static_cast<float>(acc);
    }
}

void softmax(const float* in, int n, int64_t features, float* out) {
  for (int b = 0; b < n; ++b) {
    const float* x = in + b * features;
    float* y = out + b * features;
    double mx = -std::numeric_limits<double>::infinity(), sum = 0.0;
    for (int64_t i = 0; i < features; ++i) mx = std::max<double>(mx, x[i]);
    for (int64_t i = 0; i < features; ++i) sum += std::exp(x[i] - mx);
    for (int64_t i = 0; i < features; ++i) y[i] = static_cast<float>(std::exp(x[i] - mx) / sum);
  }
}

}  // namespace bs::ref
