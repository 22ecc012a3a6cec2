// bvlc_alexnet.npy: the .npy header of an object array, the strict unpickler, the dict walk and the
// conversion to a model folder (shapes read off the arrays).
#include "fuzz/harness.hpp"
#include "weights_tools/bvlc.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) { bs::fuzz::init_limits(); return 0; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return bs::fuzz::run([&] {
    bs::BvlcFile f = bs::parse_bvlc(bs::fuzz::bytes(data, size), "fuzz.npy");
    bs::BvlcImportOptions o;
    o.path = "fuzz.npy";
    o.input_size = 67;  // small enough that a fuzzed AlexNet-shaped dict converts quickly
    (void)bs::convert_bvlc(f, o);
  });
}
