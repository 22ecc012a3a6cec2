#include "kernels/model/model.hpp"

#include <algorithm>
#include <filesystem>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "weights_tools/error.hpp"
#include "weights_tools/json_read.hpp"
#include "weights_tools/layout.hpp"
#include "weights_tools/npy.hpp"

namespace bs {

using json = nlohmann::json;

std::string to_string(const Shape& s) {
  return "(" + std::to_string(s.c) + ", " + std::to_string(s.h) + ", " + std::to_string(s.w) + ")";
}

const char* kind_name(LayerKind k) {
  static const char* names[] = {"conv", "act", "pool", "lrn", "flatten", "fc", "softmax"};
  return names[static_cast<int>(k)];
}

std::string Layer::type_name() const {
  struct V {
    std::string operator()(const ConvParams&) const { return "convolution"; }
    std::string operator()(const ActParams& a) const {
      return a.act == Act::relu ? "relu" : a.act == Act::tanh ? "tanh" : a.act == Act::sigmoid ? "sigmoid" : "leaky_relu";
    }
    std::string operator()(const PoolParams& p) const { return p.kind == PoolKind::max ? "max_pool" : "avg_pool"; }
    std::string operator()(const LrnParams&) const { return "lrn"; }
    std::string operator()(const FlattenParams&) const { return "flatten"; }
    std::string operator()(const FcParams&) const { return "fully_connected"; }
    std::string operator()(const SoftmaxParams&) const { return "softmax"; }
  };
  return std::visit(V{}, op);
}

double Layer::flops_per_image() const {
  if (auto* c = std::get_if<ConvParams>(&op))
    return 2.0 * static_cast<double>(out.size()) * (in.c / c->groups) * c->kh * c->kw;
  if (auto* f = std::get_if<FcParams>(&op)) return 2.0 * static_cast<double>(in.size()) * f->outputs;
  if (auto* p = std::get_if<PoolParams>(&op)) return static_cast<double>(out.size()) * p->kh * p->kw;
  if (auto* l = std::get_if<LrnParams>(&op)) return static_cast<double>(out.size()) * (2.0 * l->size + 4);
  if (std::holds_alternative<FlattenParams>(op)) return 0.0;  // a view, no arithmetic
  return static_cast<double>(out.size());
}

int64_t Layer::weight_count() const {
  if (auto* c = std::get_if<ConvParams>(&op)) return static_cast<int64_t>(c->weight.size() + c->bias.size());
  if (auto* f = std::get_if<FcParams>(&op)) return static_cast<int64_t>(f->weight.size() + f->bias.size());
  return 0;
}

size_t Model::logits_layers() const {
  size_t n = layers.size();
  if (n > 0 && layers.back().kind() == LayerKind::softmax) --n;
  return n;
}

double Model::flops_per_image() const {
  double f = 0;
  for (const Layer& l : layers) f += l.flops_per_image();
  return f;
}

namespace {

// Integer fields (sizes, counts) are at most 2^24: enough for any layer, and small enough that no shape
// arithmetic on them can overflow.
constexpr int64_t kMaxField = int64_t{1} << 24;
bool fits(const json& v) {
  if (v.is_number_unsigned()) return v.get<uint64_t>() <= static_cast<uint64_t>(kMaxField);
  return v.get<int64_t>() <= kMaxField && v.get<int64_t>() >= -kMaxField;
}

// Reads fields of one JSON object, rejecting unknown keys so that a typo never passes silently.
class Fields {
 public:
  Fields(const json& j, std::string where) : j_(j), where_(std::move(where)) {
    if (!j_.is_object()) fail(where_, "expected a JSON object");
  }
  bool has(const std::string& k) { seen_.insert(k); return j_.contains(k) && !j_[k].is_null(); }
  int integer(const std::string& k, std::optional<int> def = std::nullopt, int min = 1) {
    if (!has(k)) {
      if (!def) fail(where_, "missing field '" + k + "'");
      return *def;
    }
    const json& v = j_[k];
    if (!v.is_number_integer() || !fits(v)) fail(where_, "field '" + k + "' must be an integer of at most 2^24, found " + json_excerpt(v));
    int x = v.get<int>();
    if (x < min) fail(where_, "field '" + k + "' must be >= " + std::to_string(min) + ", found " + std::to_string(x));
    return x;
  }
  // An int or [h, w].
  std::pair<int, int> pair(const std::string& k, std::optional<std::pair<int, int>> def, int min) {
    if (!has(k)) {
      if (!def) fail(where_, "missing field '" + k + "'");
      return *def;
    }
    const json& v = j_[k];
    auto check = [&](const json& e) {
      if (!e.is_number_integer() || !fits(e) || e.get<int>() < min)
        fail(where_, "field '" + k + "' must be an integer >= " + std::to_string(min) + " or a pair of them, found " + json_excerpt(v));
      return e.get<int>();
    };
    if (v.is_array() && v.size() == 2) return {check(v[0]), check(v[1])};
    int x = check(v);
    return {x, x};
  }
  // Padding: 0 when absent, an int or [h, w] (the same on both sides), or [top, left, bottom, right] (ONNX's order: the
  // begins, then the ends).
  Padding padding(const std::string& k) {
    Padding p;
    if (!has(k)) return p;
    const json& v = j_[k];
    if (v.is_array() && v.size() != 2) {
      const bool ok = v.size() == 4 && std::all_of(v.begin(), v.end(), [](const json& e) { return e.is_number_integer() && fits(e) && e.get<int>() >= 0; });
      if (!ok) fail(where_, "field '" + k + "' must be an integer >= 0, [h, w] or [top, left, bottom, right], found " + json_excerpt(v));
      return {v[0].get<int>(), v[1].get<int>(), v[2].get<int>(), v[3].get<int>()};
    }
    std::tie(p.ph, p.pw) = pair(k, std::nullopt, 0);
    return p;
  }
  double number(const std::string& k, double def) {
    if (!has(k)) return def;
    if (!j_[k].is_number()) fail(where_, "field '" + k + "' must be a number, found " + json_excerpt(j_[k]));
    return j_[k].get<double>();
  }
  bool boolean(const std::string& k, bool def) {
    if (!has(k)) return def;
    if (!j_[k].is_boolean()) fail(where_, "field '" + k + "' must be true or false, found " + json_excerpt(j_[k]));
    return j_[k].get<bool>();
  }
  std::string str(const std::string& k, std::optional<std::string> def = std::nullopt) {
    if (!has(k)) {
      if (!def) fail(where_, "missing field '" + k + "'");
      return *def;
    }
    if (!j_[k].is_string()) fail(where_, "field '" + k + "' must be a string, found " + json_excerpt(j_[k]));
    return j_[k].get<std::string>();
  }
  const json& raw(const std::string& k) {
    seen_.insert(k);
    if (!j_.contains(k)) fail(where_, "missing field '" + k + "'");
    return j_[k];
  }
  void done() {
    for (auto it = j_.begin(); it != j_.end(); ++it)
      if (!seen_.count(it.key())) fail(where_, "unknown field '" + it.key() + "'");
  }
  const std::string& where() const { return where_; }

 private:
  const json& j_;
  std::string where_;
  std::set<std::string> seen_;
};

struct TensorRef {
  std::string file, layout;
};

TensorRef tensor_ref(Fields& f, const std::string& key, const std::string& def_layout,
                     const std::set<std::string>& layouts) {
  Fields t(f.raw(key), f.where() + " " + key);
  TensorRef r{t.str("file"), t.str("layout", def_layout)};
  // Tensors live in the model folder: a name may have subfolders, but never leave the folder.
  const std::filesystem::path fp(r.file);
  bool inside = !r.file.empty() && fp.is_relative() && r.file.find('\0') == std::string::npos;
  for (const auto& part : fp)
    if (part == "..") inside = false;
  if (!inside) fail(t.where(), "file '" + r.file.substr(0, 128) + "' must be a relative path inside the model folder");
  if (!layouts.count(r.layout)) {
    std::string all;
    for (const auto& l : layouts) all += (all.empty() ? "" : ", ") + l;
    fail(t.where(), "unknown layout '" + r.layout + "' (expected one of " + all + ")");
  }
  t.done();
  return r;
}

std::vector<float> load_tensor(const std::string& dir, const TensorRef& r, const std::vector<int64_t>& expected,
                               const std::string& layer, const std::string& missing_hint) {
  std::string path = (std::filesystem::path(dir) / r.file).string();
  std::error_code ec;
  if (!missing_hint.empty() && !std::filesystem::exists(path, ec))
    fail(path, "cannot open: this model's weights are not shipped; " + missing_hint);
  try {
    return read_npy_float(path, expected);
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + " (layer '" + layer + "', layout " + r.layout + ")");
  }
}

int out_dim(int in, int k, int s, int pb, int pe, bool ceil_mode) {
  const int64_t span = int64_t{in} + pb + pe - k;
  if (span < 0) return 0;
  if (!ceil_mode) return static_cast<int>(span / s + 1);
  int64_t o = (span + s - 1) / s + 1;
  if (pb + pe > 0 && (o - 1) * s >= int64_t{in} + pb) --o;  // the last window must start inside the input (Caffe)
  return static_cast<int>(o);
}

std::string padding_text(const Padding& p) {
  if (!p.asymmetric()) return std::to_string(p.ph) + (p.pw != p.ph ? "x" + std::to_string(p.pw) : "");
  return "[" + std::to_string(p.ph) + ", " + std::to_string(p.pw) + ", " + std::to_string(p.pad_bottom()) + ", " +
         std::to_string(p.pad_right()) + "]";
}

}  // namespace

int output_size(int in, int k, int s, int pb, int pe, bool ceil_mode) { return out_dim(in, k, s, pb, pe, ceil_mode); }

void infer_shapes(Model& m, const std::string& where) {
  constexpr int64_t kMaxActivation = INT32_MAX;  // values per image of any layer's input or output
  Shape s = m.input;
  // Values per image, without overflow: every field is at most 2^24, so a product of three may exceed 64 bits.
  auto check_size = [&](const Shape& x, const std::string& at, const char* what) {
    unsigned __int128 n = static_cast<unsigned __int128>(x.c) * static_cast<unsigned __int128>(x.h) * static_cast<unsigned __int128>(x.w);
    if (n > static_cast<unsigned __int128>(kMaxActivation))
      fail(at, std::string(what) + " " + to_string(x) + " holds more than 2^31 - 1 values per image (the limit)");
  };
  check_size(s, where, "input");
  for (Layer& l : m.layers) {
    const std::string at = where + ": layer '" + l.name + "'";
    l.in = s;
    if (auto* c = std::get_if<ConvParams>(&l.op)) {
      if (s.c % c->groups != 0 || c->filters % c->groups != 0)
        fail(at, "groups " + std::to_string(c->groups) + " must divide input channels " + std::to_string(s.c) +
                     " and filters " + std::to_string(c->filters));
      if (c->window_h() > (1 << 24) || c->window_w() > (1 << 24)) fail(at, "dilation makes the kernel window larger than 2^24");
      int oh = out_dim(s.h, static_cast<int>(c->window_h()), c->sh, c->ph, c->pad_bottom(), false);
      int ow = out_dim(s.w, static_cast<int>(c->window_w()), c->sw, c->pw, c->pad_right(), false);
      if (oh < 1 || ow < 1)
        fail(at, "kernel " + std::to_string(c->kh) + "x" + std::to_string(c->kw) + " with padding " + padding_text(*c) +
                     " does not fit input " + to_string(s));
      s = {c->filters, oh, ow};
    } else if (auto* p = std::get_if<PoolParams>(&l.op)) {
      int oh = out_dim(s.h, p->kh, p->sh, p->ph, p->pad_bottom(), p->ceil_mode);
      int ow = out_dim(s.w, p->kw, p->sw, p->pw, p->pad_right(), p->ceil_mode);
      if (oh < 1 || ow < 1 || p->ph >= p->kh || p->pw >= p->kw || p->pad_bottom() >= p->kh || p->pad_right() >= p->kw)
        fail(at, "window " + std::to_string(p->kh) + "x" + std::to_string(p->kw) + " with padding " + padding_text(*p) +
                     " does not fit input " + to_string(s));
      s = {s.c, oh, ow};
    } else if (std::holds_alternative<FlattenParams>(l.op)) {
      s = {static_cast<int>(s.size()), 1, 1};
    } else if (auto* f = std::get_if<FcParams>(&l.op)) {
      s = {f->outputs, 1, 1};
    } else if (auto* n = std::get_if<LrnParams>(&l.op)) {
      if (n->size % 2 == 0) fail(at, "LRN size must be odd, found " + std::to_string(n->size));
    }
    check_size(s, at, "output");
    l.out = s;
  }
}

Model parse_model(const std::string& text, const std::string& dir, const std::string& where) {
  const json j = parse_json(text, where);
  Fields top(j, where);
  Model m;
  m.dir = dir;
  m.name = top.str("name");
  if (top.has("format") && top.str("format") != "batchscope-model")
    fail(where, "field 'format' must be \"batchscope-model\"");
  top.integer("version", 1);
  m.weights_note = top.str("weights", "real");
  top.str("description", "");
  // What makes the weights when the folder ships only model.json (AlexNet's: 244 MB are made or imported, not shipped).
  const std::string missing_hint = top.str("missing_weights", "");
  if (top.has("provenance")) top.raw("provenance");
  if (top.has("preprocess")) {
    Fields p(top.raw("preprocess"), where + ": preprocess");
    m.preprocess.present = true;
    m.preprocess.channel_order = p.str("channel_order", "BGR");
    if (m.preprocess.channel_order != "BGR" && m.preprocess.channel_order != "RGB")
      fail(p.where(), "channel_order must be BGR or RGB, found '" + m.preprocess.channel_order + "'");
    m.preprocess.resize_shorter = p.integer("resize_shorter", 256);
    m.preprocess.crop = p.integer("crop", 227);
    if (p.has("mean")) {
      const json& mean = p.raw("mean");
      if (!mean.is_array() || mean.size() != 3 || !mean[0].is_number() || !mean[1].is_number() || !mean[2].is_number())
        fail(p.where(), "mean must be three numbers, found " + json_excerpt(mean));
      m.preprocess.mean = {mean[0].get<float>(), mean[1].get<float>(), mean[2].get<float>()};
    }
    p.done();
  }
  {
    const json& in = top.raw("input");
    if (!in.is_array() || in.size() != 3 || !in[0].is_number_integer() || !in[1].is_number_integer() ||
        !in[2].is_number_integer() || !fits(in[0]) || !fits(in[1]) || !fits(in[2]) || in[0].get<int>() < 1 ||
        in[1].get<int>() < 1 || in[2].get<int>() < 1)
      fail(where, "field 'input' must be [channels, height, width] of positive integers, found " + json_excerpt(in));
    m.input = {in[0].get<int>(), in[1].get<int>(), in[2].get<int>()};
  }
  const json& layers = top.raw("layers");
  if (!layers.is_array() || layers.empty()) fail(where, "field 'layers' must be a non-empty array");
  top.done();

  // First pass: parameters, so that shape inference can give the expected weight shapes.
  std::vector<std::pair<TensorRef, TensorRef>> refs;
  std::set<std::string> names;
  for (size_t i = 0; i < layers.size(); ++i) {
    std::string lw = where + ": layers[" + std::to_string(i) + "]";
    Fields f(layers[i], lw);
    std::string type = f.str("type");
    Layer l;
    l.name = f.str("name", type + std::to_string(i));
    if (!names.insert(l.name).second) fail(lw, "duplicate layer name '" + l.name + "'");
    lw = where + ": layer '" + l.name + "'";
    Fields g(layers[i], lw);
    g.str("type"); g.str("name", "");
    TensorRef wref, bref;
    if (type == "convolution") {
      ConvParams c;
      c.filters = g.integer("filters");
      std::tie(c.kh, c.kw) = g.pair("kernel", std::nullopt, 1);
      std::tie(c.sh, c.sw) = g.pair("stride", std::pair{1, 1}, 1);
      static_cast<Padding&>(c) = g.padding("padding");
      c.groups = g.integer("groups", 1);
      std::tie(c.dh, c.dw) = g.pair("dilation", std::pair{1, 1}, 1);
      wref = tensor_ref(g, "weight", "OIHW", {"OIHW", "HWIO"});
      if (g.has("bias")) bref = tensor_ref(g, "bias", "O", {"O"});
      l.op = c;
    } else if (type == "relu" || type == "tanh" || type == "sigmoid") {
      l.op = ActParams{type == "relu" ? Act::relu : type == "tanh" ? Act::tanh : Act::sigmoid};
    } else if (type == "leaky_relu") {
      ActParams a{Act::leaky_relu};
      a.alpha = static_cast<float>(g.number("alpha", 0.01));
      if (!std::isfinite(a.alpha) || std::fabs(a.alpha) > 1e6f) fail("layer '" + l.name + "'", "alpha must be a number of magnitude at most 1e6");
      l.op = a;
    } else if (type == "max_pool" || type == "avg_pool") {
      PoolParams p;
      p.kind = type == "max_pool" ? PoolKind::max : PoolKind::avg;
      std::tie(p.kh, p.kw) = g.pair("kernel", std::nullopt, 1);
      std::tie(p.sh, p.sw) = g.pair("stride", std::pair{p.kh, p.kw}, 1);
      static_cast<Padding&>(p) = g.padding("padding");
      p.ceil_mode = g.boolean("ceil_mode", false);
      p.count_include_pad = g.boolean("count_include_pad", true);
      l.op = p;
    } else if (type == "lrn") {
      LrnParams n;
      n.size = g.integer("size", 5);
      n.alpha = static_cast<float>(g.number("alpha", 1e-4));
      n.beta = static_cast<float>(g.number("beta", 0.75));
      n.k = static_cast<float>(g.number("k", 1.0));
      l.op = n;
    } else if (type == "flatten") {
      l.op = FlattenParams{};
    } else if (type == "fully_connected") {
      FcParams fc;
      fc.outputs = g.integer("outputs");
      wref = tensor_ref(g, "weight", "OI", {"OI", "IO"});
      if (g.has("bias")) bref = tensor_ref(g, "bias", "O", {"O"});
      l.op = fc;
    } else if (type == "softmax") {
      l.op = SoftmaxParams{};
    } else {
      fail(lw, "unknown layer type '" + type +
                   "' (expected convolution, relu, tanh, sigmoid, leaky_relu, max_pool, avg_pool, lrn, flatten, "
                   "fully_connected, softmax)");
    }
    g.done();
    m.layers.push_back(std::move(l));
    refs.push_back({wref, bref});
  }
  infer_shapes(m, where);

  for (size_t i = 0; i < m.layers.size(); ++i) {
    Layer& l = m.layers[i];
    const auto& [wref, bref] = refs[i];
    if (auto* c = std::get_if<ConvParams>(&l.op)) {
      const int cin = l.in.c / c->groups;
      if (wref.layout == "OIHW") {
        c->weight = load_tensor(dir, wref, {c->filters, cin, c->kh, c->kw}, l.name, missing_hint);
      } else {
        c->weight = hwio_to_oihw(load_tensor(dir, wref, {c->kh, c->kw, cin, c->filters}, l.name, missing_hint), c->kh, c->kw, cin,
                                 c->filters);
      }
      if (!bref.file.empty()) c->bias = load_tensor(dir, bref, {c->filters}, l.name, missing_hint);
    } else if (auto* f = std::get_if<FcParams>(&l.op)) {
      const int64_t in = l.in.size();
      if (wref.layout == "OI") {
        f->weight = load_tensor(dir, wref, {f->outputs, in}, l.name, missing_hint);
      } else {
        f->weight = transpose2d(load_tensor(dir, wref, {in, f->outputs}, l.name, missing_hint), in, f->outputs);
      }
      if (!bref.file.empty()) f->bias = load_tensor(dir, bref, {f->outputs}, l.name, missing_hint);
    }
  }
  return m;
}

Model load_model(const std::string& dir) {
  std::filesystem::path p = std::filesystem::path(dir) / "model.json";
  std::ifstream in(p);
  if (!in) fail(p.string(), "cannot open (is --model a model folder?)");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_model(ss.str(), dir, p.string());
}

}  // namespace bs
