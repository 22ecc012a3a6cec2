// Turns an MXNet symbol graph (-symbol.json) and its .params into a batchscope model folder.
// Handles sequential chains of Convolution (and the ECE 408 custom conv op "New"), Activation, Pooling,
// Flatten, FullyConnected, LRN, Dropout (dropped: identity at inference) and SoftmaxOutput/softmax.
#pragma once
#include <array>
#include <functional>
#include <string>
#include <vector>

#include "weights_tools/model_writer.hpp"
#include "weights_tools/npz.hpp"  // NamedArray

namespace bs {

struct MxnetImportOptions {
  std::string symbol_path, params_path, out_dir, name;  // name: defaults to the symbol file's stem
  std::array<int, 3> input_shape{};                      // C, H, W
};

// Builds the folder contents (model.json document + tensors) without writing anything.
ModelFolder convert_mxnet(const MxnetImportOptions& o);
// The same from the symbol file's text and the arrays of its .params (the paths in `o` name them in errors).
ModelFolder convert_mxnet(const std::string& symbol_text, const std::vector<NamedArray>& arrays, const MxnetImportOptions& o);

}  // namespace bs
