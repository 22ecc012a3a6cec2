#include "weights_tools/bvlc.hpp"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>

#include "weights_tools/error.hpp"
#include "weights_tools/io.hpp"
#include "weights_tools/layout.hpp"
#include "weights_tools/npy.hpp"
#include "weights_tools/unpickle.hpp"

namespace bs {
namespace {

constexpr const char* kMarker = "__batchscope__";
const char* kConvs[] = {"conv1", "conv2", "conv3", "conv4", "conv5"};
const char* kFcs[] = {"fc6", "fc7", "fc8"};

std::string text(const PyValue& v) { return v.s; }  // str (UTF-8) or bytes (latin1): keys are ASCII

}  // namespace

BvlcFile read_bvlc(const std::string& path) {
  const std::vector<uint8_t> bytes = read_file(path);
  return parse_bvlc(bytes, path);
}

BvlcFile parse_bvlc(const std::vector<uint8_t>& bytes, const std::string& path) {
  size_t offset = 0;
  if (bytes.size() >= 6 && std::memcmp(bytes.data(), "\x93NUMPY", 6) == 0) {
    NpyHeader h = parse_npy_header(bytes.data(), bytes.size(), path);
    if (h.descr != "|O") fail(path, "holds a plain " + h.descr + " array, not the pickled dict of a bvlc_alexnet.npy");
    offset = h.data_offset;
  }
  const Pickle pickle = unpickle(bytes.data() + offset, bytes.size() - offset, path);
  PyPtr top = pickle.root;
  if (top->kind == PyValue::Kind::ndarray && top->object_array && top->items.size() == 1) top = top->items[0];
  if (top->kind != PyValue::Kind::dict) fail(path, "the pickle holds a " + top->repr() + ", expected a dict {layer: [weights, biases]}");
  BvlcFile f;
  uint64_t copied = 0;  // an array referenced from many lists is copied each time: bounded like the unpickler
  for (const auto& [k, v] : top->entries) {
    if (k->kind != PyValue::Kind::str && k->kind != PyValue::Kind::bytes) fail(path, "a dict key is a " + k->repr());
    const std::string key = text(*k);
    if (key.size() > 256) fail(path, "a dict key of " + std::to_string(key.size()) + " characters (layer names are short)");
    if (v->kind != PyValue::Kind::list && v->kind != PyValue::Kind::tuple)
      fail(path, "entry '" + key + "' is a " + v->repr() + ", expected a list of arrays");
    std::vector<Array> arrays;
    for (const PyPtr& a : v->items) {
      if (a->kind != PyValue::Kind::ndarray || a->object_array) fail(path, "entry '" + key + "' holds a " + a->repr() + ", expected arrays");
      copied += a->array.bytes.size();
      if (copied > 2 * uint64_t{bytes.size()} + 4096)
        fail(path, "corrupt pickle: its lists reference the same arrays over and over (more bytes than the file)");
      arrays.push_back(a->array);
    }
    if (key == kMarker) {
      if (arrays.empty() || arrays[0].size() < 1) fail(path, "entry '" + key + "' holds no seed");
      f.synthetic_note = "synthetic: He-initialised by batchscope-weights synthesize, seed " +
                         std::to_string(static_cast<long long>(arrays[0].to_float()[0]));
      continue;
    }
    f.layers.emplace_back(key, std::move(arrays));
  }
  return f;
}

void write_bvlc(const std::string& path, const BvlcFile& f) {
  std::vector<std::pair<std::string, std::vector<Array>>> entries = f.layers;
  if (!f.synthetic_note.empty()) {
    const auto at = f.synthetic_note.rfind(' ');
    const float seed = static_cast<float>(std::stod(f.synthetic_note.substr(at + 1)));
    entries.emplace_back(kMarker, std::vector<Array>{Array::from_float({1}, {seed})});
  }
  std::vector<uint8_t> pickle = pickle_dict_of_arrays(entries);
  // The .npy header of a 0-d object array, as np.save writes it (version 1.0, aligned to 64 bytes).
  std::string dict = "{'descr': '|O', 'fortran_order': False, 'shape': (), }";
  size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<uint8_t>(dict.size() & 0xff),
                              static_cast<uint8_t>(dict.size() >> 8)};
  out.insert(out.end(), dict.begin(), dict.end());
  out.insert(out.end(), pickle.begin(), pickle.end());
  atomic_write_bytes(path, out.data(), out.size());
}

ModelFolder convert_bvlc(const BvlcImportOptions& o) {
  return convert_bvlc(read_bvlc(o.path), o);
}

ModelFolder convert_bvlc(const BvlcFile& f, const BvlcImportOptions& o) {
  if (o.input_size < 1 || o.input_size > 65536) fail("--input-size", "expected 1 to 65536, found " + std::to_string(o.input_size));
  std::map<std::string, std::vector<Array>> by;
  for (auto& [k, v] : f.layers) by[k] = v;
  auto get = [&](const std::string& layer) -> std::pair<const Array&, const Array&> {
    auto it = by.find(layer);
    if (it == by.end()) fail(o.path, "has no entry '" + layer + "' (expected conv1..conv5, fc6..fc8)");
    if (it->second.size() != 2) fail(o.path, "entry '" + layer + "' holds " + std::to_string(it->second.size()) + " arrays, expected [weights, biases]");
    return {it->second[0], it->second[1]};
  };

  ModelFolder folder;
  using ojson = nlohmann::ordered_json;
  ojson layers = ojson::array();
  int c = 3, h = o.input_size, w = o.input_size;  // running (C, H, W) for groups and fc6's input order
  auto add_tensor = [&](const std::string& name, std::vector<int64_t> shape, const std::vector<float>& v) {
    folder.tensors.push_back({name, Array::from_float(std::move(shape), v)});
    return ojson{{"file", name + ".npy"}};
  };
  auto pool = [&](const std::string& name) {
    layers.push_back({{"name", name}, {"type", "max_pool"}, {"kernel", 3}, {"stride", 2}});
    h = (h - 3) / 2 + 1;
    w = (w - 3) / 2 + 1;
  };
  auto lrn = [&](const std::string& name) {
    const double alpha = o.lrn_caffe ? o.lrn_alpha : o.lrn_alpha * o.lrn_size;
    layers.push_back({{"name", name}, {"type", "lrn"}, {"size", o.lrn_size}, {"alpha", alpha}, {"beta", o.lrn_beta}, {"k", o.lrn_k}});
  };
  for (int i = 0; i < 5; ++i) {
    const std::string name = kConvs[i];
    auto [W, B] = get(name);
    if (W.shape.size() != 4) fail(o.path, "'" + name + "' weights have shape " + shape_str(W.shape) + ", expected (H, W, I/groups, O)");
    for (int64_t d : W.shape)
      if (d < 1 || d > (1 << 20)) fail(o.path, "'" + name + "' weights have shape " + shape_str(W.shape) + ": every dimension must be 1 to 2^20");
    const int kh = static_cast<int>(W.shape[0]), kw = static_cast<int>(W.shape[1]);
    const int cin = static_cast<int>(W.shape[2]), m = static_cast<int>(W.shape[3]);
    if (cin <= 0 || c % cin != 0)
      fail(o.path, "'" + name + "' weights " + shape_str(W.shape) + " take " + std::to_string(cin) + " input channels per group, but the layer receives " + std::to_string(c));
    const int groups = c / cin;
    if (B.shape != std::vector<int64_t>{m}) fail(o.path, "'" + name + "' biases have shape " + shape_str(B.shape) + ", expected (" + std::to_string(m) + ",)");
    const int stride = i == 0 ? 4 : 1;
    int pad = i == 0 ? 0 : kh / 2;
    if (i == 0 && o.conv1_same) {  // TensorFlow SAME: output ceil(in / stride)
      const int out = (h + stride - 1) / stride;
      pad = std::max(0, ((out - 1) * stride + kh - h) / 2);
    }
    ojson l = {{"name", name}, {"type", "convolution"}, {"filters", m}, {"kernel", kh == kw ? ojson(kh) : ojson::array({kh, kw})},
               {"stride", stride}, {"padding", pad}, {"groups", groups}};
    l["weight"] = add_tensor(name + "_weight", {m, cin, kh, kw}, hwio_to_oihw(W.to_float(), kh, kw, cin, m));
    l["weight"]["layout"] = "OIHW";
    l["bias"] = add_tensor(name + "_bias", {m}, B.to_float());
    layers.push_back(l);
    layers.push_back({{"name", "relu" + std::to_string(i + 1)}, {"type", "relu"}});
    c = m;
    if (h + 2 * pad < kh || w + 2 * pad < kw)
      fail(o.path, "'" + name + "' kernel " + std::to_string(kh) + "x" + std::to_string(kw) + " does not fit its " + std::to_string(h) + "x" + std::to_string(w) + " input");
    h = (h + 2 * pad - kh) / stride + 1;
    w = (w + 2 * pad - kw) / stride + 1;
    if (i < 2 || i == 4) {
      if (h < 3 || w < 3) fail(o.path, "'" + name + "' leaves a " + std::to_string(h) + "x" + std::to_string(w) + " map, too small for its 3x3 pooling");
    }
    if (i < 2) lrn("norm" + std::to_string(i + 1));
    if (i < 2 || i == 4) pool("pool" + std::to_string(i == 4 ? 5 : i + 1));
  }
  layers.push_back({{"name", "flatten"}, {"type", "flatten"}});
  int64_t in = static_cast<int64_t>(c) * h * w;
  for (int i = 0; i < 3; ++i) {
    const std::string name = kFcs[i];
    auto [W, B] = get(name);
    if (W.shape.size() != 2 || W.shape[0] != in)
      fail(o.path, "'" + name + "' weights have shape " + shape_str(W.shape) + ", expected (" + std::to_string(in) + ", outputs)");
    const int64_t out = W.shape[1];
    if (B.shape != std::vector<int64_t>{out}) fail(o.path, "'" + name + "' biases have shape " + shape_str(B.shape) + ", expected (" + std::to_string(out) + ",)");
    std::vector<float> oi = transpose2d(W.to_float(), in, out);  // (in, out) -> (out, in)
    if (i == 0 && o.fc6_hwc) oi = fc_inputs_hwc_to_chw(oi, out, c, h, w);
    ojson l = {{"name", name}, {"type", "fully_connected"}, {"outputs", out}};
    l["weight"] = add_tensor(name + "_weight", {out, in}, oi);
    l["weight"]["layout"] = "OI";
    l["bias"] = add_tensor(name + "_bias", {out}, B.to_float());
    layers.push_back(l);
    if (i < 2) layers.push_back({{"name", "relu" + std::to_string(i + 6)}, {"type", "relu"}});
    in = out;
  }
  layers.push_back({{"name", "prob"}, {"type", "softmax"}});

  ojson& m = folder.model;
  m["format"] = "batchscope-model";
  m["version"] = 1;
  m["name"] = o.name;
  m["weights"] = f.synthetic_note.empty() ? "real" : f.synthetic_note;
  m["description"] = "BVLC AlexNet with Caffe's deploy semantics (bvlc_alexnet_deploy.prototxt)";
  m["missing_weights"] = kAlexnetMissingWeights;
  m["provenance"] = {{"tool", "batchscope-weights import-bvlc"},
                     {"source", std::filesystem::path(o.path).filename().string()},
                     {"conventions", {{"fc6_flatten_in_file", o.fc6_hwc ? "hwc" : "chw"}, {"conv1_padding", o.conv1_same ? "same" : "valid"},
                                      {"lrn_alpha", o.lrn_alpha}, {"lrn_alpha_convention", o.lrn_caffe ? "caffe" : "tensorflow"}}}};
  m["preprocess"] = {{"channel_order", "BGR"}, {"resize_shorter", 256}, {"crop", o.input_size}, {"mean", {104, 117, 123}}};
  m["input"] = {3, o.input_size, o.input_size};
  m["layers"] = layers;
  return folder;
}

BvlcFile synthesize_alexnet(uint64_t seed) {
  struct Spec { const char* name; std::vector<int64_t> shape; };
  const Spec specs[] = {{"conv1", {11, 11, 3, 96}},   {"conv2", {5, 5, 48, 256}},  {"conv3", {3, 3, 256, 384}},
                        {"conv4", {3, 3, 192, 384}},  {"conv5", {3, 3, 192, 256}}, {"fc6", {9216, 4096}},
                        {"fc7", {4096, 4096}},        {"fc8", {4096, 1000}}};
  std::mt19937_64 rng(seed);
  // Box-Muller on the raw engine, so the values do not depend on the standard library's distributions.
  auto uniform = [&] { return (static_cast<double>(rng() >> 11) + 0.5) * (1.0 / 9007199254740992.0); };
  auto normal = [&] { return std::sqrt(-2.0 * std::log(uniform())) * std::cos(6.283185307179586 * uniform()); };
  BvlcFile f;
  for (const Spec& s : specs) {
    const int64_t n = shape_size(s.shape);
    const int64_t fan_in = n / s.shape.back();  // H*W*I for conv, inputs for FC
    const double stddev = std::sqrt(2.0 / static_cast<double>(fan_in));
    std::vector<float> wv(static_cast<size_t>(n)), bv(static_cast<size_t>(s.shape.back()));
    for (float& x : wv) x = static_cast<float>(normal() * stddev);
    for (float& x : bv) x = static_cast<float>(0.01 * normal());
    f.layers.emplace_back(s.name, std::vector<Array>{Array::from_float(s.shape, wv), Array::from_float({s.shape.back()}, bv)});
  }
  f.synthetic_note = "synthetic: He-initialised by batchscope-weights synthesize, seed " + std::to_string(seed);
  return f;
}

}  // namespace bs
