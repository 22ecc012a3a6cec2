// batchscope-weights import-onnx: an ONNX model (read with the ONNX library's protobuf classes) into a model folder.
// Chains of Conv, BatchNormalization (folded into the Conv or Gemm before it), Relu, Tanh, Sigmoid, MaxPool,
// AveragePool, GlobalAveragePool, GlobalMaxPool, LRN, Flatten, Reshape to two dimensions, Gemm, MatMul (+ Add),
// Dropout and Identity (removed) and Softmax; opsets 3 to 21; initializers in raw_data, typed fields or external data,
// also where they are listed among the graph inputs; float32, float16 and float64 weights. Everything else, and
// every graph that is not a chain, is refused with one line naming the node.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "weights_tools/model_writer.hpp"

namespace bs {

struct OnnxImportOptions {
  std::string model_path, out_dir, name;  // name: defaults to the graph's name, else the file's stem
  std::array<int, 3> input_shape{};        // C, H, W; zeros: the file's
};

struct OnnxImport {
  ModelFolder folder;
  std::vector<std::string> notes;  // what was folded, removed or read as something else: "folded BatchNormalization ..."
};

// Whether this build reads ONNX (the ONNX and protobuf libraries were found).
bool onnx_import_available();
OnnxImport convert_onnx(const OnnxImportOptions& o);
// The same from the file's bytes; external data is looked for in base_dir (the fuzzer passes an empty folder).
OnnxImport convert_onnx(const uint8_t* data, size_t size, const std::string& base_dir, const OnnxImportOptions& o);

}  // namespace bs
