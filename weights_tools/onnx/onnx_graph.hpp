// The graph of an ONNX model walked as a chain: from its one input, each node the only reader of the tensor before it
// and every other input of a node a constant (an initializer, also where old files list it among the graph inputs, or
// a Constant node's value). Anything else (a residual Add, a Concat, a tensor read twice, a node off the chain) is an
// error naming the node: batchscope runs chains of layers.
#pragma once
#include <map>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "weights_tools/onnx/onnx_tensors.hpp"

namespace bs::onnx_import {

class Graph {
 public:
  Graph(const onnx::ModelProto& m, std::string base_dir, std::string path);

  int opset() const { return opset_; }  // of the default (ai.onnx) domain
  const std::string& input_name() const { return input_->name(); }
  std::vector<int64_t> input_dims() const;  // -1 where a dimension is symbolic or missing

  // The next node on the chain (null at its end). finish() then checks that every node was on it and that it ends
  // at the graph's output.
  const onnx::NodeProto* next();
  void finish() const;

  std::string where(const onnx::NodeProto& n) const;  // "node 'conv1' (Conv)"

  bool has_attr(const onnx::NodeProto& n, const std::string& name) const;
  int64_t attr_int(const onnx::NodeProto& n, const std::string& name, int64_t dflt) const;
  float attr_float(const onnx::NodeProto& n, const std::string& name, float dflt) const;
  std::string attr_string(const onnx::NodeProto& n, const std::string& name, const std::string& dflt) const;
  std::vector<int64_t> attr_ints(const onnx::NodeProto& n, const std::string& name, std::vector<int64_t> dflt) const;

  bool has_input(const onnx::NodeProto& n, int i) const { return i < n.input_size() && !n.input(i).empty(); }
  // Input i of n as a constant; `what` names it in errors ("W", "the bias").
  Values constant(const onnx::NodeProto& n, int i, const std::string& what);
  // The input of n that is not the chain's tensor (Add's other operand).
  Values other_constant(const onnx::NodeProto& n, const std::string& what);

 private:
  const onnx::ModelProto& m_;
  std::string base_dir_, path_;
  int opset_ = 0;
  const onnx::ValueInfoProto* input_ = nullptr;
  std::map<std::string, const onnx::TensorProto*> consts_;  // initializers and Constant nodes' values
  std::map<std::string, Values> decoded_;
  std::vector<bool> visited_;
  std::vector<bool> const_node_;  // Constant nodes, and Identity nodes of a constant
  std::string cur_;  // the chain's tensor so far
  const onnx::AttributeProto* attr(const onnx::NodeProto& n, const std::string& name) const;
};

}  // namespace bs::onnx_import
