#include "weights_tools/onnx/onnx_import.hpp"

#include <climits>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "kernels/model/model.hpp"
#include "weights_tools/error.hpp"
#include "weights_tools/io.hpp"
#include "weights_tools/onnx/onnx_graph.hpp"
#include "weights_tools/onnx/onnx_tensors.hpp"

namespace bs {
namespace {

using onnx_import::Values;
using ojson = nlohmann::ordered_json;

// The feature map between layers: (C, H, W), or C features once flat.
struct Cur {
  int c = 0, h = 0, w = 0;
  bool flat = false;
  int64_t size() const { return int64_t{c} * h * w; }
  std::string text() const { return flat ? "(" + std::to_string(c) + ")" : to_string(Shape{c, h, w}); }
};

// A layer on its way into model.json; convolution and fully connected weights stay as floats until the end, so that a
// BatchNormalization or an Add after them can still be folded in.
struct Pending {
  ojson json;
  std::vector<int64_t> weight_shape;
  std::vector<float> weight, bias;
  int outputs = 0;  // conv: filters, fc: outputs
  int per_output() const { return static_cast<int>(weight.size() / static_cast<size_t>(outputs)); }
};

std::string file_name(const std::string& layer) {
  std::string s;
  for (char ch : layer) s += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' || ch == '.') ? ch : '_';
  return s.empty() ? "layer" : s;
}

class Importer {
 public:
  Importer(const onnx::ModelProto& m, const std::string& base_dir, const OnnxImportOptions& o)
      : g_(m, base_dir, o.model_path), o_(o), opset_(g_.opset()) {}

  OnnxImport run(const onnx::ModelProto& m) {
    start();
    for (const onnx::NodeProto* n = g_.next(); n; n = g_.next()) node(*n);
    g_.finish();
    return finish(m);
  }

 private:
  onnx_import::Graph g_;
  const OnnxImportOptions& o_;
  int opset_;
  Cur cur_;
  std::array<int, 3> input_{};
  std::vector<Pending> layers_;
  std::set<std::string> names_;
  bool foldable_ = false;  // the last layer is a conv or fc whose output the next node reads directly
  std::vector<std::string> notes_;

  std::string where(const onnx::NodeProto& n) const { return g_.where(n); }

  void start() {
    const std::vector<int64_t> dims = g_.input_dims();  // -1 where symbolic
    const std::string in = "input '" + g_.input_name() + "'";
    std::array<int64_t, 3> chw{};
    if (dims.size() == 4) chw = {dims[1], dims[2], dims[3]};
    else if (dims.size() == 2) chw = {dims[1], 1, 1};
    else fail(o_.model_path, in + " has " + std::to_string(dims.size()) + " dimensions; (N, C, H, W) or (N, features) expected");
    const bool given = o_.input_shape[0] > 0;
    for (int i = 0; i < 3; ++i) {
      if (given && chw[i] > 0 && chw[i] != o_.input_shape[i])
        usage_fail("--input-shape", std::to_string(o_.input_shape[0]) + "," + std::to_string(o_.input_shape[1]) + "," +
                                        std::to_string(o_.input_shape[2]) + " disagrees with the file's " + in + ", " +
                                        shape_str(dims));
      if (given) chw[i] = o_.input_shape[i];
      if (chw[i] <= 0 || chw[i] > (1 << 24))
        usage_fail("--input-shape", o_.model_path + "'s " + in + " is " + shape_str(dims) +
                                        ", without a fixed C, H, W: give them, e.g. --input-shape 3,224,224");
    }
    cur_ = {static_cast<int>(chw[0]), static_cast<int>(chw[1]), static_cast<int>(chw[2]), dims.size() == 2};
    input_ = {cur_.c, cur_.h, cur_.w};
  }

  std::string unique_name(const onnx::NodeProto& n) {
    std::string base = n.name().empty() ? n.op_type() + std::to_string(layers_.size()) : n.name();
    if (base.size() > 120) base = base.substr(0, 120);
    std::string name = base;
    for (int k = 2; names_.count(name); ++k) name = base + "_" + std::to_string(k);
    names_.insert(name);
    return name;
  }

  Pending& add(const onnx::NodeProto& n, const char* type) {
    Pending p;
    p.json["name"] = unique_name(n);
    p.json["type"] = type;
    layers_.push_back(std::move(p));
    foldable_ = false;
    return layers_.back();
  }

  void check_shape(const onnx::NodeProto& n) {
    if (cur_.c <= 0 || cur_.h <= 0 || cur_.w <= 0 || cur_.size() > INT32_MAX)
      fail(where(n), "its output would be " + cur_.text() + " values an image: the input is too small for it (or too large)");
  }

  void node(const onnx::NodeProto& n) {
    const std::string& op = n.op_type();
    if (op == "Conv") return conv(n);
    if (op == "BatchNormalization") return batchnorm(n);
    if (op == "Relu" || op == "Tanh" || op == "Sigmoid") {
      add(n, op == "Relu" ? "relu" : op == "Tanh" ? "tanh" : "sigmoid");
      return;
    }
    if (op == "LeakyRelu") {
      const float alpha = g_.attr_float(n, "alpha", 0.01f);
      if (!std::isfinite(alpha) || std::fabs(alpha) > 1e6f) fail(where(n), "alpha " + std::to_string(alpha) + " is out of range");
      add(n, "leaky_relu").json["alpha"] = alpha;
      return;
    }
    if (op == "MaxPool" || op == "AveragePool") return pool(n);
    if (op == "GlobalAveragePool" || op == "GlobalMaxPool") return global_pool(n);
    if (op == "LRN") return lrn(n);
    if (op == "Flatten") {
      if (g_.attr_int(n, "axis", 1) != 1) fail(where(n), "axis " + std::to_string(g_.attr_int(n, "axis", 1)) + ": batchscope flattens from axis 1");
      return flatten(n);
    }
    if (op == "Reshape") return reshape(n);
    if (op == "Gemm") return gemm(n);
    if (op == "MatMul") return matmul(n);
    if (op == "Add") return add_bias(n);
    if (op == "Dropout" || op == "Identity") {
      notes_.push_back("removed " + op + " '" + n.name() + "' (the identity at inference)");
      return;  // foldable_ stays: a BatchNormalization after a Dropout still follows its Conv
    }
    if (op == "Softmax") return softmax(n);
    fail(where(n), "op type '" + (n.domain().empty() ? "" : n.domain() + ".") + op +
                       "' is not supported (supported: Conv, BatchNormalization, Relu, LeakyRelu, Tanh, Sigmoid, MaxPool, AveragePool, "
                       "GlobalAveragePool, GlobalMaxPool, LRN, Flatten, Reshape, Gemm, MatMul, Add, Dropout, Identity, Softmax)");
  }

  // Pads of a 2-D window op as (top, left, bottom, right): auto_pad resolved (k: the window as dilated); a pool's
  // dilations refused (a convolution's are read by conv()).
  std::array<int, 4> pads_of(const onnx::NodeProto& n, std::array<int, 2> k, std::array<int, 2> s) {
    if (n.op_type() != "Conv")
      for (int64_t d : g_.attr_ints(n, "dilations", {1, 1}))
        if (d != 1) fail(where(n), "dilations " + shape_str(g_.attr_ints(n, "dilations", {})) + ": pooling with dilation is not supported");
    const std::string autopad = g_.attr_string(n, "auto_pad", "NOTSET");
    std::vector<int64_t> p = g_.attr_ints(n, "pads", {0, 0, 0, 0});
    if (autopad == "VALID") p = {0, 0, 0, 0};
    else if (autopad == "SAME_UPPER" || autopad == "SAME_LOWER") {
      const int in[2] = {cur_.h, cur_.w};
      p.assign(4, 0);
      for (int a = 0; a < 2; ++a) {
        const int64_t out = (in[a] + s[a] - 1) / s[a], total = std::max<int64_t>((out - 1) * s[a] + k[a] - in[a], 0);
        p[a] = autopad == "SAME_UPPER" ? total / 2 : total - total / 2;
        p[a + 2] = total - p[a];
      }
    } else if (autopad != "NOTSET") fail(where(n), "auto_pad '" + autopad.substr(0, 20) + "' is not one ONNX defines");
    if (p.size() != 4) fail(where(n), "pads " + shape_str(p) + ": four values (top, left, bottom, right) expected");
    for (int64_t v : p)
      if (v < 0 || v > 4096) fail(where(n), "pads " + shape_str(p) + ": out of range");
    return {static_cast<int>(p[0]), static_cast<int>(p[1]), static_cast<int>(p[2]), static_cast<int>(p[3])};
  }
  // model.json's padding: [top, left] where both sides agree, [top, left, bottom, right] where they do not.
  static ojson padding_json(const std::array<int, 4>& p) {
    if (p[0] == p[2] && p[1] == p[3]) return {p[0], p[1]};
    return {p[0], p[1], p[2], p[3]};
  }

  std::array<int, 2> pair_attr(const onnx::NodeProto& n, const char* name, std::array<int, 2> dflt) {
    std::vector<int64_t> v = g_.attr_ints(n, name, {dflt[0], dflt[1]});
    if (v.size() != 2) fail(where(n), std::string(name) + " " + shape_str(v) + ": two values expected (batchscope runs 2-D layers)");
    for (int64_t x : v)
      if (x < 1 || x > 65536) fail(where(n), std::string(name) + " " + shape_str(v) + ": out of range");
    return {static_cast<int>(v[0]), static_cast<int>(v[1])};
  }

  void conv(const onnx::NodeProto& n) {
    const Values w = g_.constant(n, 1, "W");
    if (w.dims.size() != 4) fail(where(n), "weight " + shape_str(w.dims) + ": batchscope runs 2-D convolutions ((M, C/group, kH, kW))");
    const int64_t group = g_.attr_int(n, "group", 1);
    const std::array<int, 2> k = {static_cast<int>(w.dims[2]), static_cast<int>(w.dims[3])};
    if (g_.has_attr(n, "kernel_shape") && pair_attr(n, "kernel_shape", k) != k)
      fail(where(n), "kernel_shape disagrees with the weight's " + shape_str(w.dims));
    const std::array<int, 2> s = pair_attr(n, "strides", {1, 1}), d = pair_attr(n, "dilations", {1, 1});
    const int64_t eh = int64_t{k[0] - 1} * d[0] + 1, ew = int64_t{k[1] - 1} * d[1] + 1;  // the dilated window
    if (eh > (1 << 20) || ew > (1 << 20)) fail(where(n), "dilations " + shape_str({d[0], d[1]}) + " make the window too large");
    const std::array<int, 2> ek = {static_cast<int>(eh), static_cast<int>(ew)};
    const std::array<int, 4> p = pads_of(n, ek, s);
    if (group < 1 || group > 65536 || w.dims[0] % group || w.dims[1] * group != cur_.c)
      fail(where(n), "weight " + shape_str(w.dims) + " with group " + std::to_string(group) + " does not take the input " + cur_.text());
    Pending& l = add(n, "convolution");
    l.json["filters"] = w.dims[0];
    l.json["kernel"] = {k[0], k[1]};
    l.json["stride"] = {s[0], s[1]};
    l.json["padding"] = padding_json(p);
    l.json["groups"] = group;
    if (d[0] != 1 || d[1] != 1) l.json["dilation"] = {d[0], d[1]};
    l.weight_shape = w.dims;
    l.weight = w.floats;
    l.outputs = static_cast<int>(w.dims[0]);
    if (g_.has_input(n, 2)) {
      const Values b = g_.constant(n, 2, "B");
      if (b.size() != w.dims[0]) fail(where(n), "bias " + shape_str(b.dims) + " for " + std::to_string(w.dims[0]) + " filters");
      l.bias = b.floats;
    }
    if (w.half) notes_.push_back("widened the float16 weights of Conv '" + n.name() + "' to float32");
    cur_ = {l.outputs, output_size(cur_.h, ek[0], s[0], p[0], p[2], false), output_size(cur_.w, ek[1], s[1], p[1], p[3], false), false};
    check_shape(n);
    foldable_ = true;
  }

  // y = scale * (x - mean) / sqrt(var + epsilon) + B per channel, folded into the weights and bias before it; on its
  // own (after an activation, a pool, the input), a per-channel scale and shift written as a 1x1 depthwise convolution.
  void batchnorm(const onnx::NodeProto& n) {
    if (g_.attr_int(n, "spatial", 1) != 1) fail(where(n), "spatial 0 (per-element statistics) is not supported");
    const bool alone = !foldable_;
    if (alone) {  // an identity 1x1 depthwise convolution (the shape kept, flat or not) for the statistics to fold into
      const int c = cur_.c;
      Pending& l = add(n, "convolution");
      l.json["filters"] = c;
      l.json["kernel"] = 1;
      l.json["stride"] = 1;
      l.json["padding"] = 0;
      l.json["groups"] = c;
      l.weight_shape = {c, 1, 1, 1};
      l.weight.assign(static_cast<size_t>(c), 1.0f);
      l.outputs = c;
      foldable_ = true;  // a following BatchNormalization or Add folds into it as well
      notes_.push_back("BatchNormalization '" + n.name() + "' on its own runs as a per-channel scale and shift: a 1x1 "
                       "depthwise convolution '" + l.json["name"].get<std::string>() + "'");
    }
    Pending& l = layers_.back();
    const Values scale = g_.constant(n, 1, "scale"), shift = g_.constant(n, 2, "B"), mean = g_.constant(n, 3, "mean"),
                 var = g_.constant(n, 4, "var");
    for (const Values* v : {&scale, &shift, &mean, &var})
      if (v->size() != l.outputs) fail(where(n), "statistics of " + std::to_string(v->size()) + " channels after a layer of " + std::to_string(l.outputs));
    const double eps = g_.attr_float(n, "epsilon", 1e-5f);
    if (l.bias.empty()) l.bias.assign(static_cast<size_t>(l.outputs), 0.0f);
    const int per = l.per_output();
    for (int c = 0; c < l.outputs; ++c) {
      const double f = scale.floats[c] / std::sqrt(static_cast<double>(var.floats[c]) + eps);
      for (int i = 0; i < per; ++i) l.weight[static_cast<size_t>(c) * per + i] = static_cast<float>(l.weight[static_cast<size_t>(c) * per + i] * f);
      l.bias[c] = static_cast<float>((l.bias[c] - mean.floats[c]) * f + shift.floats[c]);
    }
    if (!alone) notes_.push_back("folded BatchNormalization '" + n.name() + "' into '" + l.json["name"].get<std::string>() + "'");
  }

  void pool(const onnx::NodeProto& n) {
    const bool avg = n.op_type() == "AveragePool";
    if (!g_.has_attr(n, "kernel_shape")) fail(where(n), "has no kernel_shape");
    const std::array<int, 2> k = pair_attr(n, "kernel_shape", {1, 1}), s = pair_attr(n, "strides", {1, 1});
    const std::array<int, 4> p = pads_of(n, k, s);
    const bool ceil = g_.attr_int(n, "ceil_mode", 0) != 0;
    if (!avg && g_.attr_int(n, "storage_order", 0) != 0) fail(where(n), "storage_order 1 (an index output) is not supported");
    Pending& l = add(n, avg ? "avg_pool" : "max_pool");
    l.json["kernel"] = {k[0], k[1]};
    l.json["stride"] = {s[0], s[1]};
    l.json["padding"] = padding_json(p);
    if (ceil) l.json["ceil_mode"] = true;
    if (avg && (p[0] || p[1] || p[2] || p[3]) && g_.attr_int(n, "count_include_pad", 0) == 0) l.json["count_include_pad"] = false;
    cur_ = {cur_.c, output_size(cur_.h, k[0], s[0], p[0], p[2], ceil), output_size(cur_.w, k[1], s[1], p[1], p[3], ceil), false};
    check_shape(n);
  }

  void global_pool(const onnx::NodeProto& n) {
    if (cur_.flat) fail(where(n), "global pooling of flat features " + cur_.text());
    Pending& l = add(n, n.op_type() == "GlobalAveragePool" ? "avg_pool" : "max_pool");
    l.json["kernel"] = {cur_.h, cur_.w};
    l.json["stride"] = 1;
    notes_.push_back(n.op_type() + " '" + n.name() + "' runs as a " + std::to_string(cur_.h) + "x" + std::to_string(cur_.w) + " pool");
    cur_ = {cur_.c, 1, 1, false};
  }

  void lrn(const onnx::NodeProto& n) {
    const int64_t size = g_.attr_int(n, "size", 0);
    if (size < 1 || size % 2 == 0 || size > 1023) fail(where(n), "size " + std::to_string(size) + ": an odd window of 1 to 1023 channels expected");
    Pending& l = add(n, "lrn");  // ONNX's alpha is divided by the window, as batchscope's (Caffe's) convention
    l.json["size"] = size;
    l.json["alpha"] = g_.attr_float(n, "alpha", 1e-4f);
    l.json["beta"] = g_.attr_float(n, "beta", 0.75f);
    l.json["k"] = g_.attr_float(n, "bias", 1.0f);
  }

  void flatten(const onnx::NodeProto& n) {
    add(n, "flatten");
    cur_ = {static_cast<int>(cur_.size()), 1, 1, true};
  }

  // Reshape to (batch, features) is a flatten; the batch written as 0 (copy), -1 (infer) or 1 (an export at batch 1).
  void reshape(const onnx::NodeProto& n) {
    std::vector<int64_t> shape;
    if (g_.has_input(n, 1)) shape = g_.constant(n, 1, "shape").ints;
    else shape = g_.attr_ints(n, "shape", {});  // opset < 5
    const int64_t features = cur_.size();
    if (shape.size() != 2 || !(shape[0] == 0 || shape[0] == -1 || shape[0] == 1) || !(shape[1] == -1 || shape[1] == features) ||
        (shape[0] == -1 && shape[1] == -1))
      fail(where(n), "Reshape to " + shape_str(shape) + " of " + cur_.text() + ": batchscope reads only a reshape to (batch, " +
                         std::to_string(features) + "), a flatten");
    if (shape[0] == 1) notes_.push_back("Reshape '" + n.name() + "' to (1, ...) read as a flatten of every image");
    flatten(n);
  }

  // A fully connected layer of `w` (N x K, row-major: outputs by inputs) and bias b (empty: none).
  void fc(const onnx::NodeProto& n, std::vector<float> w, int outputs, std::vector<float> b) {
    if (!cur_.flat && (cur_.h != 1 || cur_.w != 1))
      fail(where(n), n.op_type() + " on a feature map " + cur_.text() + ": a Flatten must come first");
    if (!cur_.flat) flatten(n);  // (C, 1, 1): the same values, flat
    Pending& l = add(n, "fully_connected");
    l.json["outputs"] = outputs;
    l.weight_shape = {outputs, cur_.c};
    l.weight = std::move(w);
    l.bias = std::move(b);
    l.outputs = outputs;
    cur_ = {outputs, 1, 1, true};
    foldable_ = true;
  }

  // B as (K, N) with K the features: transposed to (N, K).
  std::vector<float> transposed(const Values& b, int64_t rows, int64_t cols) {
    std::vector<float> t(b.floats.size());
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) t[c * rows + r] = b.floats[r * cols + c];
    return t;
  }

  std::vector<float> bias_of(const onnx::NodeProto& n, const Values& c, int outputs, float beta) {
    const bool broadcast = c.size() == 1;
    if (!broadcast && c.size() != outputs) fail(where(n), "bias " + shape_str(c.dims) + " for " + std::to_string(outputs) + " outputs");
    std::vector<float> b(static_cast<size_t>(outputs));
    for (int i = 0; i < outputs; ++i) b[i] = beta * c.floats[broadcast ? 0 : i];
    return b;
  }

  void gemm(const onnx::NodeProto& n) {
    if (g_.attr_int(n, "transA", 0) != 0) fail(where(n), "transA 1: the activations must be the left operand as they are");
    const Values b = g_.constant(n, 1, "B");
    const bool trans = g_.attr_int(n, "transB", 0) != 0;
    if (b.dims.size() != 2) fail(where(n), "B " + shape_str(b.dims) + ": a matrix expected");
    const int64_t k = trans ? b.dims[1] : b.dims[0], outputs = trans ? b.dims[0] : b.dims[1];
    if (k != cur_.size()) fail(where(n), "B " + shape_str(b.dims) + (trans ? " (transB 1)" : "") + " does not take " + cur_.text() + " features");
    std::vector<float> w = trans ? b.floats : transposed(b, k, outputs);
    const float alpha = g_.attr_float(n, "alpha", 1.0f), beta = g_.attr_float(n, "beta", 1.0f);
    if (alpha != 1.0f)
      for (float& v : w) v *= alpha;
    std::vector<float> bias;
    if (g_.has_input(n, 2)) bias = bias_of(n, g_.constant(n, 2, "C"), static_cast<int>(outputs), beta);
    fc(n, std::move(w), static_cast<int>(outputs), std::move(bias));
  }

  void matmul(const onnx::NodeProto& n) {
    const Values b = g_.constant(n, 1, "B");
    if (b.dims.size() != 2 || b.dims[0] != cur_.size())
      fail(where(n), "B " + shape_str(b.dims) + " does not take " + cur_.text() + " features (a (features, outputs) matrix expected)");
    fc(n, transposed(b, b.dims[0], b.dims[1]), static_cast<int>(b.dims[1]), {});
  }

  // Add of a constant right after a Conv (one value per filter) or a MatMul / Gemm (one per output): its bias.
  void add_bias(const onnx::NodeProto& n) {
    if (!foldable_) fail(where(n), "Add not right after a Conv, Gemm or MatMul (where it would be a bias): not supported");
    Pending& l = layers_.back();
    const Values c = g_.other_constant(n, "the bias");
    std::vector<float> b = bias_of(n, c, l.outputs, 1.0f);
    if (l.bias.empty()) l.bias.assign(b.size(), 0.0f);
    for (size_t i = 0; i < b.size(); ++i) l.bias[i] += b[i];
    notes_.push_back("Add '" + n.name() + "' taken as the bias of '" + l.json["name"].get<std::string>() + "'");
  }

  void softmax(const onnx::NodeProto& n) {
    const int64_t axis = g_.attr_int(n, "axis", opset_ < 13 ? 1 : -1);
    const bool features = cur_.flat ? (axis == 1 || axis == -1) : (cur_.h == 1 && cur_.w == 1 && (axis == 1 || axis == -3 || axis == -1));
    if (!features) fail(where(n), "Softmax over axis " + std::to_string(axis) + " of " + cur_.text() + ": batchscope's softmax is over the features");
    add(n, "softmax");
  }

  OnnxImport finish(const onnx::ModelProto& m) {
    OnnxImport r;
    ojson& j = r.folder.model;
    j["format"] = "batchscope-model";
    j["version"] = 1;
    std::string name = o_.name;
    if (name.empty()) name = m.graph().name().empty() ? std::filesystem::path(o_.model_path).stem().string() : m.graph().name();
    j["name"] = name.substr(0, 120);
    j["weights"] = "real";
    j["provenance"] = {{"tool", "batchscope-weights import-onnx"},
                       {"file", std::filesystem::path(o_.model_path).filename().string()},
                       {"producer", (m.producer_name() + " " + m.producer_version()).substr(0, 200)},
                       {"ir_version", m.ir_version()},
                       {"opset", opset_}};
    if (!notes_.empty()) j["provenance"]["notes"] = notes_;
    j["input"] = {input_[0], input_[1], input_[2]};
    j["layers"] = ojson::array();
    for (Pending& l : layers_) {
      if (!l.weight.empty()) {
        const std::string f = file_name(l.json["name"].get<std::string>());
        l.json["weight"] = {{"file", f + "_weight.npy"}, {"layout", l.weight_shape.size() == 4 ? "OIHW" : "OI"}};
        r.folder.tensors.push_back({f + "_weight", Array::from_float(l.weight_shape, l.weight)});
        if (!l.bias.empty()) {
          l.json["bias"] = {{"file", f + "_bias.npy"}};
          r.folder.tensors.push_back({f + "_bias", Array::from_float({static_cast<int64_t>(l.bias.size())}, l.bias)});
        }
      }
      j["layers"].push_back(l.json);
    }
    if (layers_.empty()) fail(o_.model_path, "has no layer batchscope runs (only removed nodes)");
    r.notes = notes_;
    return r;
  }
};

}  // namespace

bool onnx_import_available() { return true; }

OnnxImport convert_onnx(const uint8_t* data, size_t size, const std::string& base_dir, const OnnxImportOptions& o) {
  if (size > static_cast<size_t>(INT_MAX)) fail(o.model_path, "larger than 2 GiB: keep the weights as external data");
  onnx::ModelProto m;
  if (!m.ParseFromArray(data, static_cast<int>(size))) fail(o.model_path, "not an ONNX model (it does not parse as a ModelProto)");
  Importer imp(m, base_dir, o);
  return imp.run(m);
}

OnnxImport convert_onnx(const OnnxImportOptions& o) {
  const std::vector<uint8_t> bytes = read_file(o.model_path);
  const std::string dir = std::filesystem::path(o.model_path).parent_path().string();
  return convert_onnx(bytes.data(), bytes.size(), dir.empty() ? "." : dir, o);
}

}  // namespace bs
