// import-onnx in a build without the ONNX and protobuf libraries: the command says what to install.
#include "weights_tools/error.hpp"
#include "weights_tools/onnx/onnx_import.hpp"

namespace bs {

bool onnx_import_available() { return false; }

OnnxImport convert_onnx(const uint8_t*, size_t, const std::string&, const OnnxImportOptions& o) {
  fail(o.model_path, "this build reads no ONNX: install libonnx-dev and libprotobuf-dev (scripts/setup.sh) and build again");
}

OnnxImport convert_onnx(const OnnxImportOptions& o) { return convert_onnx(nullptr, 0, "", o); }

}  // namespace bs
