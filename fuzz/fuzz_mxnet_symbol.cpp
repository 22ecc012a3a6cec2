// MXNet symbol JSON against the ECE 408 network's real .params: node chains, attributes, parameter lookup.
#include <cstdlib>
#include <string>

#include "fuzz/harness.hpp"
#include "weights_tools/mxnet_import.hpp"
#include "weights_tools/mxnet_params.hpp"

namespace {
std::vector<bs::NamedArray> g_params;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  bs::fuzz::init_limits();
  g_params = bs::read_mxnet_params(std::string(BATCHSCOPE_SOURCE_DIR) + "/data/ece408-2019sp/ece408-0002.params");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return bs::fuzz::run([&] {
    bs::MxnetImportOptions o;
    o.symbol_path = "fuzz-symbol.json";
    o.params_path = "ece408-0002.params";
    o.input_shape = {1, 48, 48};
    (void)bs::convert_mxnet(std::string(reinterpret_cast<const char*>(data), size), g_params, o);
  });
}
