// ONNX models (protobuf) through import-onnx: tensors (raw, typed, external data beside the committed fixtures), the
// chain walk, attributes, folding and shape arithmetic.
#include <string>

#include "fuzz/harness.hpp"
#include "weights_tools/onnx/onnx_import.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) { bs::fuzz::init_limits(); return 0; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return bs::fuzz::run([&] {
    bs::OnnxImportOptions o;
    o.model_path = "fuzz.onnx";
    (void)bs::convert_onnx(data, size, std::string(BATCHSCOPE_SOURCE_DIR) + "/tests/onnx/fixtures", o);
  });
}
