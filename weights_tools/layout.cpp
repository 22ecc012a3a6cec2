#include "weights_tools/layout.hpp"

namespace bs {

namespace {

// Moves every value of a 4-D index space (d0 x d1 x d2 x d3) between two layouts, `a` and `b`: each gives an index's
// offset in its layout. to_a: the input is in layout b and the result in a; otherwise the other way round.
template <class A, class B>
std::vector<float> relayout(const std::vector<float>& w, const int64_t (&d)[4], A a, B b, bool to_a) {
  std::vector<float> out(w.size());
  for (int64_t i0 = 0; i0 < d[0]; ++i0)
    for (int64_t i1 = 0; i1 < d[1]; ++i1)
      for (int64_t i2 = 0; i2 < d[2]; ++i2)
        for (int64_t i3 = 0; i3 < d[3]; ++i3) {
          const int64_t ia = a(i0, i1, i2, i3), ib = b(i0, i1, i2, i3);
          if (to_a) out[ia] = w[ib];
          else out[ib] = w[ia];
        }
  return out;
}

// Weight (m, c, y, x) of an o x i x kh x kw filter bank between OIHW (a) and HWIO (b).
std::vector<float> move_filters(const std::vector<float>& w, int o, int i, int kh, int kw, bool to_oihw) {
  return relayout(
      w, {o, i, kh, kw}, [&](int64_t m, int64_t c, int64_t y, int64_t x) { return ((m * i + c) * kh + y) * kw + x; },
      [&](int64_t m, int64_t c, int64_t y, int64_t x) { return ((y * kw + x) * i + c) * o + m; }, to_oihw);
}

// A fully connected layer's weight (o, ch, y, x) between inputs in CHW order (a) and in HWC order (b).
std::vector<float> permute_fc_inputs(const std::vector<float>& w, int64_t out_n, int c, int h, int wd, bool to_chw) {
  const int64_t in = int64_t{c} * h * wd;
  return relayout(
      w, {out_n, c, h, wd}, [&](int64_t o, int64_t ch, int64_t y, int64_t x) { return o * in + (ch * h + y) * wd + x; },
      [&](int64_t o, int64_t ch, int64_t y, int64_t x) { return o * in + (y * wd + x) * c + ch; }, to_chw);
}

}  // namespace

std::vector<float> hwio_to_oihw(const std::vector<float>& w, int kh, int kw, int i, int o) {
  return move_filters(w, o, i, kh, kw, true);
}

std::vector<float> oihw_to_hwio(const std::vector<float>& w, int o, int i, int kh, int kw) {
  return move_filters(w, o, i, kh, kw, false);
}

std::vector<float> transpose2d(const std::vector<float>& w, int64_t rows, int64_t cols) {
  std::vector<float> out(w.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) out[c * rows + r] = w[r * cols + c];
  return out;
}

std::vector<float> fc_inputs_hwc_to_chw(const std::vector<float>& w, int64_t out, int c, int h, int wd) {
  return permute_fc_inputs(w, out, c, h, wd, true);
}
std::vector<float> fc_inputs_chw_to_hwc(const std::vector<float>& w, int64_t out, int c, int h, int wd) {
  return permute_fc_inputs(w, out, c, h, wd, false);
}

}  // namespace bs
