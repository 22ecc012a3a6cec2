// .npz archives: libzip's parsing plus the member size checks and each member's .npy.
#include "fuzz/harness.hpp"
#include "weights_tools/npz.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) { bs::fuzz::init_limits(); return 0; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return bs::fuzz::run([&] { (void)bs::parse_npz(data, size, "fuzz.npz"); });
}
