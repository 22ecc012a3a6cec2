#include "weights_tools/onnx/onnx_graph.hpp"

#include <cmath>
#include <utility>

#include "weights_tools/array.hpp"
#include "weights_tools/error.hpp"

namespace bs::onnx_import {
namespace {

std::string in_quotes(const std::string& s) { return "'" + s.substr(0, 100) + "'"; }

}  // namespace

Graph::Graph(const onnx::ModelProto& m, std::string base_dir, std::string path)
    : m_(m), base_dir_(std::move(base_dir)), path_(std::move(path)) {
  for (const auto& o : m.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset_ = static_cast<int>(o.version());
  if (opset_ <= 0) fail(path_, "imports no version of the ONNX operator set (opset_import)");
  const onnx::GraphProto& g = m.graph();
  if (g.node_size() == 0) fail(path_, "has no nodes (is it an ONNX model?)");
  for (const auto& t : g.initializer()) consts_[t.name()] = &t;
  for (const auto& n : g.node())
    if (n.op_type() == "Constant" && n.output_size() == 1) {
      for (const auto& a : n.attribute())
        if (a.name() == "value" && a.type() == onnx::AttributeProto::TENSOR) consts_[n.output(0)] = &a.t();
      if (!consts_.count(n.output(0))) fail(where(n), "a Constant without a tensor 'value' is not supported");
    }
  // An Identity of a constant is that constant: PyTorch's exporter writes one for each initializer equal to another
  // (VGG's zero biases), chains of them included.
  const_node_.assign(static_cast<size_t>(g.node_size()), false);
  for (int i = 0; i < g.node_size(); ++i) const_node_[i] = g.node(i).op_type() == "Constant";
  for (bool more = true; more;) {
    more = false;
    for (int i = 0; i < g.node_size(); ++i) {
      const auto& n = g.node(i);
      if (const_node_[i] || n.op_type() != "Identity" || n.input_size() != 1 || n.output_size() != 1) continue;
      if (auto it = consts_.find(n.input(0)); it != consts_.end() && !consts_.count(n.output(0))) {
        consts_[n.output(0)] = it->second;
        const_node_[i] = more = true;
      }
    }
  }
  std::vector<std::string> inputs;
  for (const auto& v : g.input())
    if (!consts_.count(v.name())) {
      inputs.push_back(v.name());
      input_ = &v;
    }
  if (inputs.size() != 1) {
    std::string names;
    for (const auto& s : inputs) names += (names.empty() ? "" : ", ") + in_quotes(s);
    fail(path_, "has " + std::to_string(inputs.size()) + " inputs" + (names.empty() ? "" : " (" + names + ")") +
                    " that are not initializers: batchscope runs models with one input");
  }
  const auto& type = input_->type();
  if (!type.has_tensor_type()) fail(path_, "input " + in_quotes(input_->name()) + " is not a tensor");
  const int elem = type.tensor_type().elem_type();
  if (elem != onnx::TensorProto::FLOAT && elem != onnx::TensorProto::FLOAT16 && elem != onnx::TensorProto::DOUBLE)
    fail(path_, "input " + in_quotes(input_->name()) + " is not a float tensor (batchscope's input is float32)");
  visited_.assign(static_cast<size_t>(g.node_size()), false);
  cur_ = input_->name();
}

std::vector<int64_t> Graph::input_dims() const {
  std::vector<int64_t> d;
  if (!input_->type().tensor_type().has_shape()) return {-1, -1, -1, -1};
  for (const auto& dim : input_->type().tensor_type().shape().dim())
    d.push_back(dim.has_dim_value() && dim.dim_value() > 0 ? dim.dim_value() : -1);
  return d;
}

std::string Graph::where(const onnx::NodeProto& n) const {
  return path_ + ": node " + in_quotes(n.name().empty() ? n.output_size() ? n.output(0) : "?" : n.name()) + " (" + n.op_type().substr(0, 60) + ")";
}

const onnx::NodeProto* Graph::next() {
  const onnx::GraphProto& g = m_.graph();
  std::vector<int> readers;
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    if (const_node_[i]) continue;
    for (const auto& in : n.input())
      if (in == cur_) {
        readers.push_back(i);
        break;
      }
  }
  if (readers.empty()) return nullptr;
  if (readers.size() > 1) {
    const auto& a = g.node(readers[0]);
    const auto& b = g.node(readers[1]);
    fail(where(b), "reads " + in_quotes(cur_) + ", which " + in_quotes(a.name()) + " reads too: a graph that is not a chain (a residual "
                   "connection, branches); batchscope runs chains of layers, each reading the one before");
  }
  const onnx::NodeProto& n = g.node(readers[0]);
  if (visited_[readers[0]]) fail(where(n), "reached twice: the graph has a cycle");
  int seen = 0;
  for (const auto& in : n.input()) {
    if (in == cur_) ++seen;
    else if (!in.empty() && !consts_.count(in))
      fail(where(n), "takes " + in_quotes(in) + ", computed by the graph, besides " + in_quotes(cur_) +
                         ": a graph that is not a chain (a residual Add, a Concat); batchscope runs chains of layers");
  }
  if (seen != 1) fail(where(n), "reads " + in_quotes(cur_) + " twice");
  if (n.output_size() < 1 || n.output(0).empty()) fail(where(n), "has no output");
  visited_[readers[0]] = true;
  cur_ = n.output(0);
  for (int k = 1; k < n.output_size(); ++k)  // Dropout's mask, BatchNormalization's training outputs: unread
    for (const auto& other : g.node())
      for (const auto& in : other.input())
        if (!n.output(k).empty() && in == n.output(k))
          fail(where(n), "its output " + in_quotes(n.output(k)) + " is read by " + in_quotes(other.name()) + ": batchscope runs chains of layers");
  return &n;
}

void Graph::finish() const {
  const onnx::GraphProto& g = m_.graph();
  for (int i = 0; i < g.node_size(); ++i)
    if (!visited_[i] && !const_node_[i])
      fail(where(g.node(i)), "is not on the chain from the input " + in_quotes(input_->name()) + " to the output: batchscope runs chains of layers");
  if (g.output_size() != 1) fail(path_, "has " + std::to_string(g.output_size()) + " outputs: batchscope runs models with one");
  if (g.output(0).name() != cur_)
    fail(path_, "the chain of layers ends at " + in_quotes(cur_) + ", not at the graph's output " + in_quotes(g.output(0).name()));
}

const onnx::AttributeProto* Graph::attr(const onnx::NodeProto& n, const std::string& name) const {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

bool Graph::has_attr(const onnx::NodeProto& n, const std::string& name) const { return attr(n, name) != nullptr; }

int64_t Graph::attr_int(const onnx::NodeProto& n, const std::string& name, int64_t dflt) const {
  const auto* a = attr(n, name);
  if (!a) return dflt;
  if (a->type() != onnx::AttributeProto::INT) fail(where(n), "attribute " + name + " is not an integer");
  return a->i();
}

float Graph::attr_float(const onnx::NodeProto& n, const std::string& name, float dflt) const {
  const auto* a = attr(n, name);
  if (!a) return dflt;
  if (a->type() != onnx::AttributeProto::FLOAT || !std::isfinite(a->f())) fail(where(n), "attribute " + name + " is not a finite float");
  return a->f();
}

std::string Graph::attr_string(const onnx::NodeProto& n, const std::string& name, const std::string& dflt) const {
  const auto* a = attr(n, name);
  if (!a) return dflt;
  if (a->type() != onnx::AttributeProto::STRING) fail(where(n), "attribute " + name + " is not a string");
  return a->s();
}

std::vector<int64_t> Graph::attr_ints(const onnx::NodeProto& n, const std::string& name, std::vector<int64_t> dflt) const {
  const auto* a = attr(n, name);
  if (!a) return dflt;
  if (a->type() != onnx::AttributeProto::INTS || a->ints_size() > 8) fail(where(n), "attribute " + name + " is not a short list of integers");
  return {a->ints().begin(), a->ints().end()};
}

Values Graph::constant(const onnx::NodeProto& n, int i, const std::string& what) {
  if (!has_input(n, i)) fail(where(n), "has no " + what + " input");
  const std::string& name = n.input(i);
  auto it = consts_.find(name);
  if (it == consts_.end())
    fail(where(n), what + " " + in_quotes(name) + " is computed by the graph; batchscope needs it as a constant (an initializer)");
  auto d = decoded_.find(name);
  if (d == decoded_.end()) d = decoded_.emplace(name, decode(*it->second, base_dir_, path_ + ": tensor " + in_quotes(name))).first;
  if (d->second.integer == (what == "shape")) return d->second;
  fail(where(n), what + " " + in_quotes(name) + (d->second.integer ? " holds integers" : " holds floats") + ", not what " + n.op_type() + " takes here");
}

Values Graph::other_constant(const onnx::NodeProto& n, const std::string& what) {
  for (int i = 0; i < n.input_size(); ++i)
    if (consts_.count(n.input(i))) return constant(n, i, what);  // the chain's tensor is never a constant
  fail(where(n), "has no constant operand for " + what);
}

}  // namespace bs::onnx_import
