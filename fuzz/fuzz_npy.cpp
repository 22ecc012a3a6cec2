// .npy images: header dict, dtypes, byte and element order, shape arithmetic.
#include "fuzz/harness.hpp"
#include "weights_tools/npy.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) { bs::fuzz::init_limits(); return 0; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return bs::fuzz::run([&] {
    bs::Array a = bs::parse_npy(data, size, "fuzz.npy");
    (void)a.to_float();  // what inspect and every loader do next
  });
}
