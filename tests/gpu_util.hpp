// Helpers shared by the GPU test files: whether a GPU backend can be made (else each test skips, saying why),
// the cpu-ref output of a model, and a conv -> activation -> pool chain with random weights.
#pragma once
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "app/exec/executor.hpp"
#include "kernels/exec/backend.hpp"
#include "kernels/profile/profile.hpp"
#include "kernels/plan/registry.hpp"
#include "op_cases.hpp"
#include "weights_tools/error.hpp"

namespace bs::test {

// Empty when a GPU backend can be made, else the reason (e.g. no CUDA GPU is available).
inline std::string gpu_missing() {
  static const std::string reason = [] {
    try {
      make_backend("cuda");
      return std::string();
    } catch (const Error& e) {
      return std::string(e.what());
    }
  }();
  return reason;
}

#define SKIP_WITHOUT_GPU()                                             \
  do {                                                                 \
    if (!gpu_missing().empty()) GTEST_SKIP() << gpu_missing();         \
  } while (0)

// Empty when CUPTI's activity API can be started here, else why not (compute-sanitizer, for one, holds CUPTI's only
// subscription: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED). Tests that need the profiler skip with that reason.
inline std::string cupti_missing() {
  static const std::string reason = [] {
    if (!gpu_missing().empty()) return gpu_missing();
    try {
      make_cupti_profiler();
      return std::string();
    } catch (const Error& e) {
      return "CUPTI cannot start here: " + std::string(e.what());
    }
  }();
  return reason;
}

#define SKIP_WITHOUT_CUPTI()                                           \
  do {                                                                 \
    if (!cupti_missing().empty()) GTEST_SKIP() << cupti_missing();     \
  } while (0)

// A version from a test table's string: "" or "auto" for auto, else a number or name of the menu.
// n values of T in pinned host memory (cudaMallocHost), for as long as it lives (a CUDA graph may hold its address).
template <class T>
struct PinnedHost {
  T* p = nullptr;
  explicit PinnedHost(size_t n) { EXPECT_EQ(cudaMallocHost(&p, std::max<size_t>(n, 1) * sizeof(T)), cudaSuccess); }
  ~PinnedHost() { cudaFreeHost(p); }
  PinnedHost(const PinnedHost&) = delete;
  PinnedHost& operator=(const PinnedHost&) = delete;
};

inline int conv_version(const std::string& v) { return v.empty() ? kAutoVariant : parse_conv_variant(v); }
inline int fc_version(const std::string& v) { return v.empty() ? kAutoVariant : parse_fc_variant(v); }

// Typed options from the strings a test table holds: a version's number or name ("" or "auto": auto), a cuDNN policy, a
// precision (parsed as the command line parses them).
inline BackendOptions gpu_options(const std::string& conv, const std::string& fc = "", const std::string& cudnn_algos = "fastest",
                                  const std::string& precision = "fp32") {
  BackendOptions o;
  o.conv_variant = conv_version(conv);
  o.fc_variant = fc_version(fc);
  o.cudnn_algos = parse_enum<CudnnAlgos>(cudnn_algos, "--cudnn-algos");
  o.precision = parse_enum<Precision>(precision, "--precision");
  return o;
}

// gpu_options with the activations poisoned with NaN and guard zones after them, checked after each run.
inline BackendOptions guarded_options(const std::string& conv, const std::string& fc = "", const std::string& precision = "fp32") {
  BackendOptions o = gpu_options(conv, fc, "fastest", precision);
  o.guard_check = true;
  return o;
}

// A backend of `backend` ("cuda", "cudnn", ...) running the plans of an executor for m, the weights loaded.
inline std::unique_ptr<Backend> open_backend(const Model& m, const std::string& backend, const BackendOptions& o) {
  return Executor(m, parse_enum<BackendKind>(backend, "--backend"), o).open();
}

inline std::vector<float> cpu_ref_output(const Model& m, const std::vector<float>& in, int n) {
  auto ref = make_backend("cpu-ref");
  ref->load(m);
  return guarded_forward(*ref, m, in, n).out;
}

// conv 5x5 with random weights and bias -> the activation (if has_act) -> 2x2 max pool (if pool).
inline Model conv_chain(const std::string& name, Shape in, int filters, bool has_act, Act act, bool pool, std::mt19937& rng) {
  Model m;
  m.name = name;
  m.input = in;
  ConvParams c = conv_params(filters, 5, 1, 0, 1, true);
  c.weight = random_vector(static_cast<size_t>(filters) * in.c * 25, rng);
  c.bias = random_vector(static_cast<size_t>(filters), rng);
  m.layers.push_back({"conv", c, {}, {}});
  if (has_act) m.layers.push_back({"act", ActParams{act}, {}, {}});
  PoolParams p; p.kh = p.kw = p.sh = p.sw = 2;
  if (pool) m.layers.push_back({"pool", p, {}, {}});
  infer_shapes(m, name);
  return m;
}

}  // namespace bs::test
