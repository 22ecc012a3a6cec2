#include "weights_tools/mxnet_import.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "weights_tools/error.hpp"
#include "weights_tools/io.hpp"
#include "weights_tools/json_read.hpp"
#include "weights_tools/mxnet_params.hpp"

namespace bs {
namespace {

using ojson = nlohmann::ordered_json;
using json = nlohmann::json;

// MXNet stores every attribute as a string: "(5, 5)", "6", "True", "tanh".
class Attrs {
 public:
  Attrs(const json& node, std::string where) : where_(std::move(where)) {
    for (const char* key : {"attrs", "attr", "param"})
      if (node.contains(key) && node[key].is_object())
        for (auto it = node[key].begin(); it != node[key].end(); ++it)
          if (it.value().is_string()) a_[it.key()] = it.value().get<std::string>();
  }
  bool has(const std::string& k) const { return a_.count(k) > 0; }
  std::string str(const std::string& k, const std::string& def) const {
    auto it = a_.find(k);
    return it == a_.end() ? def : it->second;
  }
  std::vector<int> ints(const std::string& k, std::vector<int> def) const {
    auto it = a_.find(k);
    if (it == a_.end()) return def;
    std::vector<int> v;
    static const std::regex num("-?[0-9]+");
    for (auto m = std::sregex_iterator(it->second.begin(), it->second.end(), num); m != std::sregex_iterator(); ++m) {
      const std::string d = m->str();
      int x = 0;
      const auto [end, ec] = std::from_chars(d.data(), d.data() + d.size(), x);
      if (ec != std::errc() || end != d.data() + d.size() || x < -(1 << 24) || x > (1 << 24))
        fail(where_, "attribute " + k + "='" + it->second.substr(0, 64) + "' holds a number outside -2^24..2^24");
      v.push_back(x);
      if (v.size() > 8) fail(where_, "attribute " + k + "='" + it->second.substr(0, 64) + "' holds more than 8 numbers");
    }
    if (v.empty()) fail(where_, "attribute " + k + "='" + it->second.substr(0, 64) + "' is not a number or tuple");
    return v;
  }
  int integer(const std::string& k, std::optional<int> def = std::nullopt) const {
    if (!has(k)) {
      if (!def) fail(where_, "missing attribute '" + k + "'");
      return *def;
    }
    return ints(k, {})[0];
  }
  double number(const std::string& k, const char* def) const {
    const std::string v = str(k, def);
    char* end = nullptr;
    errno = 0;
    const double x = std::strtod(v.c_str(), &end);
    if (v.empty() || end != v.c_str() + v.size() || errno == ERANGE || !std::isfinite(x))
      fail(where_, "attribute " + k + "='" + v.substr(0, 64) + "' is not a finite number");
    return x;
  }
  bool boolean(const std::string& k, bool def) const {
    std::string v = str(k, def ? "True" : "False");
    if (v == "True" || v == "true" || v == "1") return true;
    if (v == "False" || v == "false" || v == "0") return false;
    fail(where_, "attribute " + k + "='" + v + "' is not a boolean");
  }

 private:
  std::map<std::string, std::string> a_;
  std::string where_;
};

ojson pair_json(const std::vector<int>& v, const std::string& where, const std::string& what) {
  if (v.size() == 1) return v[0];
  if (v.size() != 2) fail(where, what + " must have 2 dimensions, found " + std::to_string(v.size()));
  if (v[0] == v[1]) return v[0];
  return ojson::array({v[0], v[1]});
}

ModelFolder convert_symbol(const json& sym, const std::vector<NamedArray>& arrays, const MxnetImportOptions& o);

}  // namespace

ModelFolder convert_mxnet(const MxnetImportOptions& o) {
  const std::vector<uint8_t> text = read_file(o.symbol_path);
  return convert_mxnet(std::string(text.begin(), text.end()), read_mxnet_params(o.params_path), o);
}

ModelFolder convert_mxnet(const std::string& symbol_text, const std::vector<NamedArray>& arrays, const MxnetImportOptions& o) {
  const json sym = parse_json(symbol_text, o.symbol_path);
  try {
    return convert_symbol(sym, arrays, o);
  } catch (const json::exception& e) {  // a field of the wrong type or a node index out of range
    fail(o.symbol_path, "not a usable MXNet symbol file (" + json_error_text(e) + ")");
  }
}

namespace {

ModelFolder convert_symbol(const json& sym, const std::vector<NamedArray>& arrays, const MxnetImportOptions& o) {
  if (!sym.is_object() || !sym.contains("nodes") || !sym["nodes"].is_array()) fail(o.symbol_path, "not an MXNet symbol file (no 'nodes')");
  std::map<std::string, const Array*> params;
  for (const NamedArray& p : arrays) {
    std::string n = p.name;
    if (n.rfind("arg:", 0) == 0 || n.rfind("aux:", 0) == 0) n = n.substr(4);
    params[n] = &p.array;
  }

  const json& nodes = sym["nodes"];
  ModelFolder folder;
  ojson layers = ojson::array();
  std::map<std::string, bool> used;
  int prev = -1;  // index of the node whose output the chain carries
  bool flat = false;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const json& node = nodes[i];
    const std::string op = node.value("op", "");
    const std::string name = node.value("name", "node" + std::to_string(i));
    const std::string where = o.symbol_path + ": node '" + name + "' (" + op + ")";
    if (op == "null") {
      if (prev < 0) prev = static_cast<int>(i);  // the first argument is the data input
      continue;
    }
    const json& inputs = node.value("inputs", json::array());
    // An input is [node index, output index, ...]: the index must name an earlier node.
    auto source = [&](size_t k) -> int {
      const json& e = inputs.at(k);
      if (!e.is_array() || e.empty() || !e[0].is_number_integer() || e[0].get<int64_t>() < 0 ||
          e[0].get<int64_t>() >= static_cast<int64_t>(i))
        fail(where, "input " + std::to_string(k) + " is " + json_excerpt(e) + ", not [index of an earlier node, ...]");
      return static_cast<int>(e[0].get<int64_t>());
    };
    if (!inputs.is_array() || inputs.empty() || source(0) != prev)
      fail(where, "not a sequential chain: its first input is not the previous layer's output");
    // The remaining inputs are parameters: weight, bias (null nodes with arrays in the .params file).
    std::vector<std::string> param_names;
    for (size_t k = 1; k < inputs.size(); ++k) {
      const json& src = nodes[static_cast<size_t>(source(k))];
      if (src.value("op", "") != "null") fail(where, "input " + std::to_string(k) + " is not a parameter");
      param_names.push_back(src.value("name", ""));
    }
    auto tensor = [&](size_t k, const std::string& role) -> ojson {
      if (k >= param_names.size()) fail(where, "has no " + role + " input");
      const std::string& pn = param_names[k];
      auto it = params.find(pn);
      if (it == params.end()) fail(o.params_path, "has no array '" + pn + "' (needed by node '" + name + "')");
      used[pn] = true;
      Array a = *it->second;
      if (a.dtype != DType::f32) a = Array::from_float(a.shape, a.to_float());
      folder.tensors.push_back({pn, std::move(a)});
      return ojson{{"file", pn + ".npy"}};
    };
    Attrs at(node, where);
    ojson l;
    // Convolution and FullyConnected: the weight (input 1) in `layout`, and the bias (input 2) unless no_bias.
    auto weight_and_bias = [&](const char* layout) {
      l["weight"] = tensor(0, "weight");
      l["weight"]["layout"] = layout;
      if (!at.boolean("no_bias", param_names.size() < 2)) l["bias"] = tensor(1, "bias");
    };
    l["name"] = name;
    if (op == "Convolution" || op == "New") {
      if (at.has("dilate") && at.ints("dilate", {1, 1}) != std::vector<int>{1, 1}) fail(where, "dilated convolution is not supported");
      if (at.str("layout", "NCHW") != "NCHW") fail(where, "only NCHW layout is supported");
      l["type"] = "convolution";
      l["filters"] = at.integer("num_filter");
      l["kernel"] = pair_json(at.ints("kernel", {}), where, "kernel");
      l["stride"] = pair_json(at.ints("stride", {1, 1}), where, "stride");
      l["padding"] = pair_json(at.ints("pad", {0, 0}), where, "pad");
      l["groups"] = at.integer("num_group", 1);
      weight_and_bias("OIHW");
      flat = false;
    } else if (op == "Activation") {
      std::string act = at.str("act_type", "");
      if (act != "relu" && act != "tanh" && act != "sigmoid")
        fail(where, "act_type '" + act + "' is not supported (relu, tanh, sigmoid)");
      l["type"] = act;
    } else if (op == "Pooling") {
      if (at.boolean("global_pool", false)) fail(where, "global_pool is not supported; give the kernel size");
      std::string pt = at.str("pool_type", "max");
      if (pt != "max" && pt != "avg") fail(where, "pool_type '" + pt + "' is not supported (max, avg)");
      std::vector<int> pad = at.ints("pad", {0, 0});
      if (pt == "avg" && !at.boolean("count_include_pad", true) && (pad[0] || pad.back()))
        fail(where, "average pooling with count_include_pad=False and padding is not supported");
      l["type"] = pt + "_pool";
      l["kernel"] = pair_json(at.ints("kernel", {}), where, "kernel");
      l["stride"] = pair_json(at.ints("stride", {1, 1}), where, "stride");  // MXNet's default stride is 1
      l["padding"] = pair_json(pad, where, "pad");
      std::string conv = at.str("pooling_convention", "valid");
      if (conv != "valid" && conv != "full") fail(where, "pooling_convention '" + conv + "' is not supported");
      if (conv == "full") l["ceil_mode"] = true;
    } else if (op == "Flatten" || op == "flatten") {
      l["type"] = "flatten";
      flat = true;
    } else if (op == "FullyConnected") {
      if (!flat && at.boolean("flatten", true)) {  // MXNet flattens the input implicitly
        layers.push_back(ojson{{"name", name + "_flatten"}, {"type", "flatten"}});
      }
      l["type"] = "fully_connected";
      l["outputs"] = at.integer("num_hidden");
      weight_and_bias("OI");
      flat = true;
    } else if (op == "LRN") {
      l["type"] = "lrn";
      l["size"] = at.integer("nsize");
      l["alpha"] = at.number("alpha", "0.0001");
      l["beta"] = at.number("beta", "0.75");
      l["k"] = at.number("knorm", "2");
    } else if (op == "Dropout") {
      prev = static_cast<int>(i);
      continue;
    } else if (op == "SoftmaxOutput" || op == "softmax" || op == "SoftmaxActivation") {
      l["type"] = "softmax";
    } else {
      fail(where, "op '" + op + "' is not supported (Convolution, New, Activation, Pooling, Flatten, "
                  "FullyConnected, LRN, Dropout, SoftmaxOutput)");
    }
    layers.push_back(l);
    prev = static_cast<int>(i);
  }
  if (layers.empty()) fail(o.symbol_path, "holds no layers");

  ojson& m = folder.model;
  m["format"] = "batchscope-model";
  m["version"] = 1;
  std::string stem = std::filesystem::path(o.symbol_path).stem().string();  // "ece408-symbol" -> "ece408"
  if (stem.size() > 7 && stem.compare(stem.size() - 7, 7, "-symbol") == 0) stem.resize(stem.size() - 7);
  m["name"] = o.name.empty() ? stem : o.name;
  m["weights"] = "real";
  m["provenance"] = {{"tool", "batchscope-weights import-mxnet"},
                     {"symbol", std::filesystem::path(o.symbol_path).filename().string()},
                     {"params", std::filesystem::path(o.params_path).filename().string()}};
  m["input"] = {o.input_shape[0], o.input_shape[1], o.input_shape[2]};
  m["layers"] = layers;
  return folder;
}

}  // namespace

}  // namespace bs
