// `batchscope-weights rearrange`: one weight file from one layout to another, each with its inverse.
//   HWIO -> OIHW and back (conv, any groups: I is per group, O spans the groups)
//   IO -> OI and back (fully connected)
//   fc-hwc -> fc-chw and back: an (out, in) FC weight whose inputs were flattened in (H, W, C) order made to
//   take (C, H, W)-flattened inputs (needs the C,H,W of the flattened map)
#pragma once
#include <array>
#include <string>

namespace bs {

struct RearrangeOptions {
  std::string in, out, from, to;
  int groups = 1;
  std::array<int, 3> chw{};  // for fc-hwc / fc-chw
};

void rearrange_file(const RearrangeOptions& o);

}  // namespace bs
