// model.json: fields, shape inference and tensor references. The folder holds two small tensors that a
// fuzzed document may name (w.npy (2, 1, 3, 3), b.npy (2,)).
#include <filesystem>
#include <string>

#include "fuzz/harness.hpp"
#include "kernels/model/model.hpp"
#include "weights_tools/npy.hpp"

namespace {
std::string g_dir;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  bs::fuzz::init_limits();
  g_dir = BATCHSCOPE_FUZZ_MODEL_DIR;
  std::filesystem::create_directories(g_dir);
  bs::write_npy(g_dir + "/w.npy", bs::Array::from_float({2, 1, 3, 3}, std::vector<float>(18, 0.5f)));
  bs::write_npy(g_dir + "/b.npy", bs::Array::from_float({2}, {1.0f, -1.0f}));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return bs::fuzz::run([&] {
    bs::Model m = bs::parse_model(std::string(reinterpret_cast<const char*>(data), size), g_dir, "fuzz/model.json");
    (void)m.flops_per_image();
  });
}
