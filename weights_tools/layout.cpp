#include "weights_tools/layout.hpp"

namespace bs {

std::vector<float> hwio_to_oihw(const std::vector<float>& w, int kh, int kw, int i, int o) {
  std::vector<float> out(w.size());
  for (int y = 0; y < kh; ++y)
    for (int x = 0; x < kw; ++x)
      for (int c = 0; c < i; ++c)
        for (int m = 0; m < o; ++m)
          out[((int64_t{m} * i + c) * kh + y) * kw + x] = w[((int64_t{y} * kw + x) * i + c) * o + m];
  return out;
}

std::vector<float> oihw_to_hwio(const std::vector<float>& w, int o, int i, int kh, int kw) {
  std::vector<float> out(w.size());
  for (int m = 0; m < o; ++m)
    for (int c = 0; c < i; ++c)
      for (int y = 0; y < kh; ++y)
        for (int x = 0; x < kw; ++x)
          out[((int64_t{y} * kw + x) * i + c) * o + m] = w[((int64_t{m} * i + c) * kh + y) * kw + x];
  return out;
}

std::vector<float> transpose2d(const std::vector<float>& w, int64_t rows, int64_t cols) {
  std::vector<float> out(w.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) out[c * rows + r] = w[r * cols + c];
  return out;
}

namespace {
// chw_from_hwc=true: out[o][(c*h + y)*wd + x] = w[o][(y*wd + x)*c + ch]
std::vector<float> permute_fc_inputs(const std::vector<float>& w, int64_t out_n, int c, int h, int wd, bool to_chw) {
  const int64_t in = int64_t{c} * h * wd;
  std::vector<float> out(w.size());
  for (int64_t o = 0; o < out_n; ++o)
    for (int ch = 0; ch < c; ++ch)
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < wd; ++x) {
          int64_t chw = (int64_t{ch} * h + y) * wd + x;
          int64_t hwc = (int64_t{y} * wd + x) * c + ch;
          if (to_chw) out[o * in + chw] = w[o * in + hwc];
          else out[o * in + hwc] = w[o * in + chw];
        }
  return out;
}
}  // namespace

std::vector<float> fc_inputs_hwc_to_chw(const std::vector<float>& w, int64_t out, int c, int h, int wd) {
  return permute_fc_inputs(w, out, c, h, wd, true);
}
std::vector<float> fc_inputs_chw_to_hwc(const std::vector<float>& w, int64_t out, int c, int h, int wd) {
  return permute_fc_inputs(w, out, c, h, wd, false);
}

}  // namespace bs
