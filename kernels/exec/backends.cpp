// Maps backend kinds to constructors (GPU backends exist only in builds with CUDA), and what every backend shares:
// the planner whose plans it runs.
#include "kernels/exec/backend.hpp"
#include "kernels/exec/device_info.hpp"
#include "kernels/plan/plan.hpp"
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
DeviceSpec current_device() { return {}; }
void init_gpu() {}
bool gpu_available() { return false; }
std::string gpu_absence() { return "this build of batchscope has no CUDA (built without the CUDA toolkit)"; }
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

std::vector<BackendKind> backend_kinds() {
#ifdef BATCHSCOPE_HAVE_CUDA
  return {BackendKind::cpu_ref, BackendKind::cpu, BackendKind::cuda, BackendKind::cudnn};
#else
  return {BackendKind::cpu_ref, BackendKind::cpu};
#endif
}

std::string backend_list() {
  std::string all;
  for (BackendKind b : backend_kinds()) all += (all.empty() ? "" : ", ") + name_of(b);
  return all;
}

std::unique_ptr<Backend> make_backend(BackendKind kind, const BackendOptions& opts) {
  check_backend_options(kind, opts);
  switch (kind) {
    case BackendKind::cpu_ref: return make_cpu_backend(false, opts);
    case BackendKind::cpu: return make_cpu_backend(true, opts);
#ifdef BATCHSCOPE_HAVE_CUDA
    case BackendKind::cuda: return make_cuda_backend(opts);
    case BackendKind::cudnn: return make_cudnn_backend(opts);
#else
    default: break;
#endif
  }
  fail("--backend", "unknown backend '" + name_of(kind) + "' (this build has: " + backend_list() + ")");
}

std::unique_ptr<Backend> make_backend(std::string_view name, const BackendOptions& opts) {
  const std::optional<BackendKind> k = enum_from<BackendKind>(name);
  if (!k) fail("--backend", "unknown backend '" + std::string(name) + "' (this build has: " + backend_list() + ")");
  return make_backend(*k, opts);
}

Support Backend::supports(const Layer& layer) const { return layer_support(kind_, opts_, layer); }

const Planner& Backend::planner() const {
  if (!planner_) fail(name(), "planner() before load() (internal)");
  return *planner_;
}

void Backend::adopt_planner(const Model& m, std::shared_ptr<const Planner> given) {
  if (given && (&given->model() != &m || given->backend() != kind_))
    fail(name(), "a planner made for another model or backend (internal)");
  planner_ = given ? std::move(given)
                   : std::make_shared<Planner>(m, kind_, opts_, kind_ == BackendKind::cuda || kind_ == BackendKind::cudnn
                                                                    ? current_device() : DeviceSpec{});
}

std::string Backend::describe(size_t layer) const { return planner().pass(last_n_).steps.at(layer).describe; }

}  // namespace bs
