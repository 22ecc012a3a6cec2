// IDX files, plain and gzipped: header, dimensions, the declared size against what the file can hold.
#include "fuzz/harness.hpp"
#include "weights_tools/idx.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) { bs::fuzz::init_limits(); return 0; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  bs::fuzz::run([&] { (void)bs::parse_idx(data, size, "fuzz.idx"); });
  return bs::fuzz::run([&] { (void)bs::parse_idx(data, size, "fuzz.idx", 2); });  // as infer --images 2 reads it
}
