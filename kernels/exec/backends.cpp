// Maps backend names to constructors; GPU backends exist only in builds with CUDA.
#include "kernels/exec/backend.hpp"
#include "kernels/exec/device_info.hpp"
#include "kernels/plan/menus.hpp"
#include "weights_tools/error.hpp"

namespace bs {

std::unique_ptr<Backend> make_cpu_backend(bool fast, const BackendOptions& opts);
#ifdef BATCHSCOPE_HAVE_CUDA
std::unique_ptr<Backend> make_cuda_backend(const BackendOptions& opts);
std::unique_ptr<Backend> make_cudnn_backend(const BackendOptions& opts);
#endif

#ifndef BATCHSCOPE_HAVE_CUDA
std::unique_ptr<Profiler> make_cupti_profiler() { fail("profiler", "this build has no CUDA, so no CUPTI"); }
nlohmann::json gpu_info() { return nlohmann::json{{"gpu", nullptr}}; }
void init_gpu() {}
bool gpu_available() { return false; }
int gpu_count() { return 0; }
void select_gpu(int index) {
  fail("GPU", "GPU " + std::to_string(index) + " requested, but this build has no CUDA");
}
int selected_gpu() { return 0; }
void use_selected_gpu() {}
std::shared_ptr<float> host_buffer(size_t floats, bool pinned) {
  if (pinned) fail("--host-memory", "pinned memory needs a build with CUDA");
  return std::shared_ptr<float>(new float[floats], std::default_delete<float[]>());
}
#endif

std::vector<std::string> backend_names() {
#ifdef BATCHSCOPE_HAVE_CUDA
  return {"cpu-ref", "cpu", "cuda", "cudnn"};
#else
  return {"cpu-ref", "cpu"};
#endif
}

std::unique_ptr<Backend> make_backend(const std::string& name, const BackendOptions& opts) {
  check_precision(opts.precision);
  if ((name == "cpu-ref" || name == "cpu") && opts.precision != "fp32")
    fail("--precision", "the " + name + " backend computes in fp32 only (it is the reference); " + opts.precision +
                            " runs on --backend cuda or cudnn");
  if (name == "cpu-ref") return make_cpu_backend(false, opts);
  if (name == "cpu") return make_cpu_backend(true, opts);
#ifdef BATCHSCOPE_HAVE_CUDA
  if (name == "cuda") return make_cuda_backend(opts);
  if (name == "cudnn") return make_cudnn_backend(opts);
#endif
  std::string all;
  for (const auto& b : backend_names()) all += (all.empty() ? "" : ", ") + b;
  fail("--backend", "unknown backend '" + name + "' (this build has: " + all + ")");
}

}  // namespace bs
