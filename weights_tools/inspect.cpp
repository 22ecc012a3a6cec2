#include "weights_tools/inspect.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "weights_tools/bvlc.hpp"
#include "weights_tools/error.hpp"
#include "weights_tools/io.hpp"
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
  const std::vector<uint8_t> bytes = read_file(path);  // read once; each format parses from memory
  auto starts = [&](const char* magic, size_t n) { return bytes.size() >= n && std::memcmp(bytes.data(), magic, n) == 0; };
  std::vector<NamedArray> arrays;
  if (starts("\x93NUMPY", 6) && parse_npy_header(bytes.data(), bytes.size(), path).descr == "|O") {
    // A pickled dict of arrays (bvlc_alexnet.npy), read through the strict unpickler import-bvlc uses.
    const BvlcFile f = parse_bvlc(bytes, path);
    for (const auto& [layer, list] : f.layers)
      for (size_t i = 0; i < list.size(); ++i) arrays.push_back({layer + "[" + std::to_string(i) + "]", list[i]});
    if (!f.synthetic_note.empty()) out << "# " << f.synthetic_note << "\n";
  } else if (starts("\x93NUMPY", 6)) {
    arrays.push_back({path, parse_npy(bytes.data(), bytes.size(), path)});
  } else if (starts("PK", 2)) {
    arrays = parse_npz(bytes.data(), bytes.size(), path);
  } else if (starts("\x12\x01", 2)) {
    arrays = parse_mxnet_params(bytes, path);
  } else {
    fail(path, "not a .npy, .npz, MXNet .params or pickled bvlc file (unrecognised magic)");
  }
  out << "# " << path << ": " << arrays.size() << " tensor(s)\n";
  out << "# name\n#   shape              dtype             min          max         mean\n";
  for (const NamedArray& a : arrays) print_row(out, a.name, a.array);
}

}  // namespace bs
