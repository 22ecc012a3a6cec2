// Probe: the FP32 LRN + pooling kernels' rate on AlexNet's shapes (norm1 + pool1, norm2 + pool2, and LRN alone),
// batches 1024, 128 and 64, and the walk kernel's depth of loads in flight (STAGES). It compiles lrn_pool.cu into
// itself, so one build measures one version of that file: build it once from the commit before a change and once
// after, run both in the same device call, and compare the times and the output hashes (the same hash: the same
// bits).
// Build: nvcc -std=c++20 -O3 -gencode arch=compute_90a,code=sm_90a -I. --expt-relaxed-constexpr
//   -DLRN_POOL_SRC='"kernels/cuda/ops/lrn_pool.cu"' [-DSTAGED] experiments/probes/lrn_pool_rate.cu -o lrn_pool_rate
// STAGED: the file has the staged walk (launch_walk<W, STAGES>); each depth below is timed too.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include LRN_POOL_SRC

namespace bs {
[[noreturn]] void gpu_fail(const char* lib, const char* call, const char* file, int line, const std::string& msg) {
  std::fprintf(stderr, "%s:%d %s %s: %s\n", file, line, lib, call, msg.c_str());
  std::exit(1);
}
namespace cuda {
int sm_count() {
  int d = 0, v = 0;
  cudaGetDevice(&d);
  cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, d);
  return v;
}
}  // namespace cuda
}  // namespace bs

using namespace bs;

namespace {

uint64_t fnv(const std::vector<float>& v) {
  uint64_t h = 1469598103934665603ull;
  const auto* p = reinterpret_cast<const unsigned char*>(v.data());
  for (size_t i = 0; i < v.size() * sizeof(float); ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

const char* only_shape = nullptr;  // argv: shape, batch, variant: that one alone, launched once (for ncu)
int only_n = 0;
const char* only_variant = nullptr;

template <class F>
void time_it(const char* shape, int n, const char* variant, double bytes, float* out, size_t out_n, F launch) {
  if (only_shape && (std::string(shape) != only_shape || n != only_n || std::string(variant) != only_variant)) return;
  if (only_shape) {
    launch();
    CUDA_CHECK(cudaDeviceSynchronize());
    return;
  }
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  cudaMemset(out, 0xff, out_n * sizeof(float));
  launch();  // warm
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> ms;
  for (int r = 0; r < 15; ++r) {
    cudaEventRecord(a);
    launch();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float t = 0;
    cudaEventElapsedTime(&t, a, b);
    ms.push_back(t);
  }
  CUDA_CHECK(cudaGetLastError());
  std::sort(ms.begin(), ms.end());
  std::vector<float> h(out_n);
  CUDA_CHECK(cudaMemcpy(h.data(), out, out_n * sizeof(float), cudaMemcpyDeviceToHost));
  const double med = ms[ms.size() / 2];
  std::printf("%-12s %5d %-10s median %.4f ms  min %.4f  max %.4f  %.0f GB/s  hash %016llx\n", shape, n, variant, med, ms.front(),
              ms.back(), bytes / (med * 1e-3) / 1e9, static_cast<unsigned long long>(fnv(h)));
  cudaEventDestroy(a);
  cudaEventDestroy(b);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4) {
    only_shape = argv[1];
    only_n = std::atoi(argv[2]);
    only_variant = argv[3];
  }
  LrnParams lp;
  lp.size = 5; lp.alpha = 1e-4f; lp.beta = 0.75f; lp.k = 1.0f;
  PoolParams pp;
  pp.kind = PoolKind::max; pp.kh = pp.kw = 3; pp.sh = pp.sw = 2;
  struct S { const char* name; Shape in, out; bool pool; };
  const std::vector<S> shapes = {{"norm1+pool1", {96, 55, 55}, {96, 27, 27}, true},
                                 {"norm2+pool2", {256, 27, 27}, {256, 13, 13}, true},
                                 {"norm1", {96, 55, 55}, {96, 55, 55}, false}};
  const int max_n = 1024;
  const size_t in_n = static_cast<size_t>(max_n) * 96 * 55 * 55;
  std::vector<float> h(in_n);
  uint32_t x = 12345;
  for (float& v : h) {
    x = x * 1664525u + 1013904223u;
    v = static_cast<float>((x >> 8) & 0xffff) / 65536.0f * 8.0f - 2.0f;  // values of a ReLU'd convolution's scale
  }
  float *in = nullptr, *out = nullptr;
  CUDA_CHECK(cudaMalloc(&in, in_n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&out, in_n * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(in, h.data(), in_n * sizeof(float), cudaMemcpyHostToDevice));
  for (const S& s : shapes)
    for (int n : {1024, 128, 64}) {
      const size_t in_vals = static_cast<size_t>(n) * s.in.c * s.in.h * s.in.w, out_vals = static_cast<size_t>(n) * s.out.c * s.out.h * s.out.w;
      const double bytes = 4.0 * (in_vals + out_vals);
      auto run_default = [&] {
        if (s.pool) bs::cuda::lrn_pool_forward(in, n, s.in, lp, pp, s.out, out, nullptr);
        else bs::cuda::lrn_forward(in, n, s.in, lp, out, nullptr);
      };
      time_it(s.name, n, "default", bytes, out, out_vals, run_default);
#ifdef STAGED
      const PoolParams* p = s.pool ? &pp : nullptr;
      // the default is <5, kWalkStages, kWalkMinBlocks>; these vary the depth and the registers (with pooling: LRN
      // alone runs 4 stages, 1 block)
      time_it(s.name, n, "s4min1", bytes, out, out_vals, [&] { bs::cuda::launch_walk<5, 4, 1>(in, n, s.in, lp, p, s.out, out, nullptr); });
      time_it(s.name, n, "s6min4", bytes, out, out_vals, [&] { bs::cuda::launch_walk<5, 6, 4>(in, n, s.in, lp, p, s.out, out, nullptr); });
      time_it(s.name, n, "s8min4", bytes, out, out_vals, [&] { bs::cuda::launch_walk<5, 8, 4>(in, n, s.in, lp, p, s.out, out, nullptr); });
      time_it(s.name, n, "s4min5", bytes, out, out_vals, [&] { bs::cuda::launch_walk<5, 4, 5>(in, n, s.in, lp, p, s.out, out, nullptr); });
      time_it(s.name, n, "s3min4", bytes, out, out_vals, [&] { bs::cuda::launch_walk<5, 3, 4>(in, n, s.in, lp, p, s.out, out, nullptr); });
#endif
    }
  return 0;
}
