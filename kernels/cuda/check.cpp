#include "kernels/cuda/check.hpp"

#include "weights_tools/error.hpp"

namespace bs {

void gpu_fail(const char* lib, const char* call, const char* file, int line, const std::string& msg) {
  std::string f = file;
  if (auto at = f.rfind("kernels/"); at != std::string::npos) f = f.substr(at);
  throw Error(std::string(lib) + " error at " + f + ":" + std::to_string(line) + ": " + call + " failed: " + msg);
}

}  // namespace bs
