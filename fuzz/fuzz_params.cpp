// MXNet .params NDArray lists (V1/V2/V3 and legacy layouts).
#include "fuzz/harness.hpp"
#include "weights_tools/mxnet_params.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) { bs::fuzz::init_limits(); return 0; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return bs::fuzz::run([&] {
    for (const bs::NamedArray& a : bs::parse_mxnet_params(bs::fuzz::bytes(data, size), "fuzz.params")) (void)a.array.to_float();
  });
}
