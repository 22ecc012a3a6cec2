#include "weights_tools/rearrange.hpp"

#include <cstdint>

#include "weights_tools/error.hpp"
#include "weights_tools/layout.hpp"
#include "weights_tools/npy.hpp"

namespace bs {

void rearrange_file(const RearrangeOptions& o) {
  Array a = read_npy(o.in);
  const auto& s = a.shape;
  std::vector<float> v = a.to_float();
  const std::string pair = o.from + "->" + o.to;
  auto need_dims = [&](size_t n) {
    if (s.size() != n) fail(o.in, "a " + o.from + " tensor must have " + std::to_string(n) + " dimensions, file has " + shape_str(s));
    for (int64_t d : s)  // the layout functions index with int
      if (d > INT32_MAX) fail(o.in, "shape " + shape_str(s) + " has a dimension above 2^31 - 1");
  };
  Array out;
  if (pair == "HWIO->OIHW") {
    need_dims(4);
    if (s[3] % o.groups) fail("--groups", std::to_string(o.groups) + " does not divide the " + std::to_string(s[3]) + " filters");
    out = Array::from_float({s[3], s[2], s[0], s[1]}, hwio_to_oihw(v, int(s[0]), int(s[1]), int(s[2]), int(s[3])));
  } else if (pair == "OIHW->HWIO") {
    need_dims(4);
    if (s[0] % o.groups) fail("--groups", std::to_string(o.groups) + " does not divide the " + std::to_string(s[0]) + " filters");
    out = Array::from_float({s[2], s[3], s[1], s[0]}, oihw_to_hwio(v, int(s[0]), int(s[1]), int(s[2]), int(s[3])));
  } else if (pair == "IO->OI" || pair == "OI->IO") {
    need_dims(2);
    out = Array::from_float({s[1], s[0]}, transpose2d(v, s[0], s[1]));
  } else if (pair == "fc-hwc->fc-chw" || pair == "fc-chw->fc-hwc") {
    need_dims(2);
    const auto [c, h, w] = o.chw;
    if (c <= 0 || int64_t{c} * h * w != s[1])
      fail("--input-chw", std::to_string(c) + "," + std::to_string(h) + "," + std::to_string(w) + " does not match the " +
                              std::to_string(s[1]) + " inputs of " + o.in + " (shape " + shape_str(s) + ", (out, in) expected)");
    out = Array::from_float(s, pair == "fc-hwc->fc-chw" ? fc_inputs_hwc_to_chw(v, s[0], c, h, w) : fc_inputs_chw_to_hwc(v, s[0], c, h, w));
  } else {
    fail("--from/--to", "unsupported rearrangement " + pair + " (HWIO<->OIHW, IO<->OI, fc-hwc<->fc-chw)");
  }
  write_npy(o.out, out);
}

}  // namespace bs
