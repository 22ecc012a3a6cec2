// ONNX tensors (initializers, Constant nodes' values) as float or integer values, from every place a file may keep
// them: raw_data, the typed fields (float_data, int32_data holding float16 bits, int64_data, double_data), or an
// external data file beside the model. Sizes are checked before anything is allocated (weights_tools/limits.hpp).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace bs::onnx_import {

struct Values {
  std::vector<int64_t> dims;
  bool integer = false;          // int32 / int64 tensors (Reshape's shape) land in `ints`, the rest in `floats`
  std::vector<float> floats;     // float32, float16 (widened exactly) and float64 (rounded) tensors
  std::vector<int64_t> ints;
  bool half = false;             // the file held float16 values
  int64_t size() const;
};

// `base_dir`: the model file's folder, where external data must lie (a relative path without ".."). `where` names
// the tensor in errors.
Values decode(const onnx::TensorProto& t, const std::string& base_dir, const std::string& where);

}  // namespace bs::onnx_import
