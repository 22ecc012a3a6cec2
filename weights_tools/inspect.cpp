#include "weights_tools/inspect.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "weights_tools/error.hpp"
#include "weights_tools/mxnet_params.hpp"
#include "weights_tools/npy.hpp"
#include "weights_tools/npz.hpp"

namespace bs {
namespace {

void print_row(std::ostream& out, const std::string& name, const Array& a) {
  std::vector<float> v = a.to_float();
  double mn = 0, mx = 0, sum = 0;
  if (!v.empty()) {
    mn = *std::min_element(v.begin(), v.end());
    mx = *std::max_element(v.begin(), v.end());
    for (float x : v) sum += x;
  }
  char buf[160];
  std::snprintf(buf, sizeof buf, "  %-18s %-8s %12.6g %12.6g %12.6g", shape_str(a.shape).c_str(), dtype_name(a.dtype),
                mn, mx, v.empty() ? 0.0 : sum / static_cast<double>(v.size()));
  out << name << "\n" << buf << "\n";
}

}  // namespace

void inspect_file(const std::string& path, std::ostream& out) {
  char head[8] = {};
  {
    std::ifstream f(path, std::ios::binary);
    if (!f) fail(path, "cannot open");
    f.read(head, sizeof head);
  }
  std::vector<NamedArray> arrays;
  if (std::memcmp(head, "\x93NUMPY", 6) == 0) {
    arrays.push_back({path, read_npy(path)});
  } else if (std::memcmp(head, "PK", 2) == 0) {
    arrays = read_npz(path);
  } else if (static_cast<uint8_t>(head[0]) == 0x12 && head[1] == 0x01) {
    arrays = read_mxnet_params(path);
  } else {
    fail(path, "not a .npy, .npz or MXNet .params file (unrecognised magic)");
  }
  out << "# " << path << ": " << arrays.size() << " tensor(s)\n";
  out << "# name\n#   shape              dtype             min          max         mean\n";
  for (const NamedArray& a : arrays) print_row(out, a.name, a.array);
}

}  // namespace bs
