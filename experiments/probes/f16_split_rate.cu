// Probe: the input pass of the FP16-tensor-core versions (kernels/cuda/engine/f16_split.cuh) on AlexNet's shapes and a
// few edge shapes. For each shape and batch it times
//   old:   the pass before per-image scales (a cudaMemset, one max |x| over the whole tensor, the copy kernel),
//   two:   the two passes with per-image scales (a cudaMemset, max |x| per image, the copy kernel),
//   fused: one cluster per image (where it fits),
// median of 20 launches each, 2 rounds, and checks that fused and two give the same words and scales, bit for bit.
// Build: nvcc -std=c++20 -O3 -gencode arch=compute_90a,code=sm_90a -I. experiments/probes/f16_split_rate.cu -o f16_split_rate
// argv[1] (optional): a shape name, launched once per variant (for ncu); or --batches=B1,B2,... to time every shape at
// those batches instead of its own (the small batches of issue 32); or --variants=B1,B2,... for the fused pass's launch
// shapes (threads a block, bands an image) at those batches (variants(), below).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/cuda/buffer.hpp"
#include "kernels/cuda/engine/f16_split.cuh"

namespace bs {
[[noreturn]] void gpu_fail(const char* lib, const char* call, const char* file, int line, const std::string& msg) {
  std::fprintf(stderr, "%s:%d %s %s: %s\n", file, line, lib, call, msg.c_str());
  std::exit(1);
}
}  // namespace bs

using namespace bs::cuda::f16split;

namespace {

// The max pass before this change: one word for the whole tensor.
__global__ void absmax_tensor_kernel(const float* __restrict__ x, long long count, unsigned* __restrict__ out) {
  float m = 0.0f;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count; i += static_cast<long long>(gridDim.x) * blockDim.x)
    m = max_nan(m, fabsf(x[i]));
#pragma unroll
  for (int o = 16; o > 0; o /= 2) m = max_nan(m, __shfl_xor_sync(0xffffffffu, m, o));
  if (threadIdx.x % 32 == 0 && m != 0.0f) atomicMax(out, __float_as_uint(m));
}
// Spreads one word to n (the copy kernels now read a scale per image; the old pass read one).
__global__ void spread_kernel(unsigned* a, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x + 1; i < n; i += gridDim.x * blockDim.x) a[i] = a[0];
}

struct Case {
  const char* name;
  CopyMap g;
  std::vector<int> batches;
  int parts = 2;  // 1: hi alone (--precision tf32)
};

// One shape's device buffers: the input (a copy of h), and two sets of maxima and words (a: the reference, b: the pass
// under test), the words poisoned.
struct Buffers {
  bs::DeviceBuffer<float> in;
  bs::DeviceBuffer<unsigned> amax_a, amax_b;
  bs::DeviceBuffer<uint32_t> dst_a, dst_b;
  Buffers(const std::vector<float>& h, int n, long long words) : amax_a(n), amax_b(n), dst_a(2 * words), dst_b(2 * words) {
    in.upload(h.data(), h.size());
    CUDA_CHECK(cudaMemset(dst_a.get(), 0xff, 2 * words * 4));
    CUDA_CHECK(cudaMemset(dst_b.get(), 0xee, 2 * words * 4));
  }
};

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int variants(const std::vector<Case>& cases, const std::vector<int>& batches, int sms);

int main(int argc, char** argv) {
  const bool var = argc > 1 && std::strncmp(argv[1], "--variants=", 11) == 0;
  const char* only = argc > 1 && !var && std::strncmp(argv[1], "--batches=", 10) != 0 ? argv[1] : nullptr;
  std::vector<int> given;  // --batches= or --variants=
  if (argc > 1 && !only)
    for (const char* q = argv[1] + (var ? 11 : 10); *q;) {
      given.push_back(std::atoi(q));
      while (*q && *q != ',') ++q;
      if (*q == ',') ++q;
    }
  // CopyMap: c, h, w, s, ct, ph, pw, h2, w2, cs (as conv_wgmma_3xf16.cu's geometry() builds it)
  const std::vector<Case> cases = {
      {"conv1", {3, 227, 227, 4, 3, 0, 0, 57, 57, 24}, {1024, 128}},  // space-to-depth, K = 3 x 3 x 48
      {"conv2", {96, 27, 27, 1, 96, 0, 0, 27, 27, 48}, {1024, 128}},  // two groups: no channel padding
      {"conv2-tf32", {96, 27, 27, 1, 96, 0, 0, 27, 27, 48}, {1024}, 1},
      {"conv3", {256, 13, 13, 1, 256, 0, 0, 13, 13, 128}, {1024, 128}},
      {"conv4", {384, 13, 13, 1, 384, 0, 0, 13, 13, 192}, {1024, 128}},
      {"fc6", {9216, 1, 1, 1, 9216, 0, 0, 1, 1, 4608}, {1024, 128}},
      {"vgg-conv5_1", {512, 14, 14, 1, 512, 0, 0, 14, 14, 256}, {256}},  // 2 rows x 14 x 514: fits
      {"vgg-conv3_1", {128, 56, 56, 1, 128, 0, 0, 56, 56, 64}, {256}},   // too big for a cluster: two passes
      {"edge-s2d-pad", {3, 64, 61, 2, 4, 1, 2, 34, 33, 8}, {64, 3}},     // padding, a band partly outside the image
      {"edge-chpad", {3, 50, 50, 1, 8, 0, 0, 50, 50, 4}, {64, 3}},       // 3 channels padded to 8
      {"edge-odd", {40, 9, 7, 1, 40, 0, 0, 9, 7, 20}, {64, 3}},
  };
  int sms = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  if (var) return variants(cases, given, sms);
  uint64_t state = 88172645463325252ull;
  auto uniform = [&] {  // xorshift64: in [-1, 1)
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return static_cast<float>(static_cast<int64_t>(state >> 11) - (1ll << 52)) * 0x1p-52f;
  };
  bool all_same = true;
  std::printf("%-14s %5s %6s %5s %8s | %9s %9s %9s | %7s %7s | %s\n", "shape", "batch", "fused", "cl", "MB", "old ms", "two ms",
              "fused ms", "GB/s", "f/old", "same");
  for (const Case& cs : cases)
    for (int n : given.empty() ? cs.batches : given) {
        if (only && std::strcmp(only, cs.name) != 0) continue;
        if (only && n != cs.batches[0]) continue;
        const CopyMap& g = cs.g;
        const long long per = static_cast<long long>(g.c) * g.h * g.w, count = per * n;
        const long long words = static_cast<long long>(n) * g.h2 * g.w2 * g.cs;
        const long long lo = cs.parts == 2 ? words : 0;
        std::vector<float> h(static_cast<size_t>(count));
        for (long long i = 0; i < count; ++i) h[i] = uniform() * std::ldexp(1.0f, static_cast<int>(i / per % 7) - 3);
        const Buffers buf(h, n, words);
        float* in = buf.in.get();
        unsigned *amax_a = buf.amax_a.get(), *amax_b = buf.amax_b.get();
        uint32_t *dst_a = buf.dst_a.get(), *dst_b = buf.dst_b.get();
        auto old_pass = [&] {
          CUDA_CHECK(cudaMemsetAsync(amax_a, 0, 4));
          absmax_tensor_kernel<<<static_cast<unsigned>(std::min<long long>((count + 255) / 256, 2048)), 256>>>(in, count, amax_a);
          const long long hw2 = static_cast<long long>(g.h2) * g.w2;
          if (hw2 == 1) {
            flat_split_f16_kernel<<<static_cast<unsigned>(std::min<long long>((words + 255) / 256, 8192)), 256>>>(in, g.c, g.cs, words, amax_a, dst_a, lo);
          } else {
            const dim3 grid3((g.cs + 31) / 32, static_cast<unsigned>((hw2 + 31) / 32), n);
            nhwc_split_f16_kernel<<<grid3, dim3(32, 8)>>>(in, g, 0, amax_a, dst_a, lo);
          }
        };
        // the old pass needs amax_a[img] = the tensor's maximum for every img: spread it once before timing (outside it)
        CUDA_CHECK(cudaMemset(amax_a, 0, n * 4));
        absmax_tensor_kernel<<<2048, 256>>>(in, count, amax_a);
        spread_kernel<<<8, 256>>>(amax_a, n);
        CUDA_CHECK(cudaDeviceSynchronize());
        auto two = [&] { run_split(in, n, g, amax_a, dst_a, lo, sms, nullptr, true); };
        auto fused = [&] { run_split(in, n, g, amax_b, dst_b, lo, sms, nullptr, false); };
        auto fused_at = [&](size_t target) {  // the fused pass with bands aimed at `target` bytes
          const Band bt = band_of(g, target);
          if (bt.smem > kFusedSmemMax) return;
          if (g.s > 1) launch_fused<true>(in, n, g, bt, amax_b, dst_b, lo, nullptr);
          else launch_fused<false>(in, n, g, bt, amax_b, dst_b, lo, nullptr);
        };
        const bool fits = fused_runs(g);
        const Band b = band_of(g);
        // correctness: two against fused
        two();
        fused();
        CUDA_CHECK(cudaDeviceSynchronize());
        std::vector<uint32_t> wa(cs.parts * words), wb(cs.parts * words);
        std::vector<unsigned> aa(n), ab(n);
        CUDA_CHECK(cudaMemcpy(wa.data(), dst_a, cs.parts * words * 4, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(wb.data(), dst_b, cs.parts * words * 4, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(aa.data(), amax_a, n * 4, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(ab.data(), amax_b, n * 4, cudaMemcpyDeviceToHost));
        // the per-image maxima, independently on the host
        bool amax_ok = true;
        for (int i = 0; i < n; ++i) {
          float m = 0;
          for (long long k = 0; k < per; ++k) m = std::max(m, std::fabs(h[i * per + k]));
          unsigned bits;
          std::memcpy(&bits, &m, 4);
          // fused holds the maximum over the values the copy reads; conv1's last input row and column are not read
          if (aa[i] != bits) amax_ok = false;
        }
        const bool same = wa == wb && (aa == ab || !fits) && amax_ok;
        size_t diff = 0;
        for (size_t i = 0; i < wa.size(); ++i) diff += wa[i] != wb[i];
        all_same = all_same && same;
        if (only) {
          old_pass();
          two();
          fused();
          CUDA_CHECK(cudaDeviceSynchronize());
        } else {
          cudaEvent_t e0, e1;
          cudaEventCreate(&e0);
          cudaEventCreate(&e1);
          auto time = [&](auto f) {
            std::vector<float> t;
            for (int r = 0; r < 22; ++r) {
              cudaEventRecord(e0);
              f();
              cudaEventRecord(e1);
              cudaEventSynchronize(e1);
              float ms;
              cudaEventElapsedTime(&ms, e0, e1);
              if (r >= 2) t.push_back(ms);
            }
            return median(t);
          };
          for (int round = 0; round < 2; ++round) {
          const float to = time(old_pass), tt = time(two), tf = time(fused);
          const float t24 = fits ? time([&] { fused_at(24 * 1024); }) : 0, t96 = fits ? time([&] { fused_at(96 * 1024); }) : 0;
          const Band b24 = band_of(g, 24 * 1024), b96 = band_of(g, 96 * 1024);
          const double mb = (count * 4.0 + cs.parts * words * 4.0) / 1e6;
          std::printf("%-14s %5d %6s %5d %8.1f | %9.4f %9.4f %9.4f | %7.0f %7.3f | %s (amax %s, %zu words differ)\n", cs.name, n,
                      fits ? "yes" : "no", fits ? b.blocks : 0, mb, to, tt, tf, mb / 1e3 / tf * 1e3, tf / to, same ? "same" : "DIFFER",
                      amax_ok ? "ok" : "WRONG", diff);
          if (fits)
            std::printf("%-14s %5d   bands: default %d x %d rows %zu B; 24K: %d x %d %zu B %.4f ms; 96K: %d x %d %zu B %.4f ms\n", cs.name, n,
                        b.blocks, b.rows, b.smem, b24.blocks, b24.rows, b24.smem, t24, b96.blocks, b96.rows, b96.smem, t96);
          }
          cudaEventDestroy(e0);
          cudaEventDestroy(e1);
        }
        CUDA_CHECK(cudaGetLastError());
      }
  std::printf("%s\n", all_same ? "ALL SAME" : "SOME DIFFER");
  return all_same ? 0 : 1;
}

// --variants=B1,B2,...: the fused pass's launch shapes at those batches, each against the two passes bit for bit, timed
// as 20 launches back to back between two events (so the time a launch is what a pass costs in a stream of kernels,
// not one launch's latency), median of 7: band_of's bands with 256 threads (the shape before band_for), the most bands a
// cluster holds with 256 (band_for's where the grid is small), 512 and 1,024 threads, band_of's bands with 1,024, and
// run_split as it is (band_for).
int variants(const std::vector<Case>& cases, const std::vector<int>& batches, int sms) {
  std::printf("| shape | batch | bands 48K x 256 | max x 256 | max x 512 | max x 1024 | 48K x 1024 | run_split (band_for) | chosen | all equal |\n"
              "|---|---:|---:|---:|---:|---:|---:|---:|---|---|\n");
  bool all = true;
  uint64_t state = 2463534242ull;
  for (const Case& cs : cases)
    for (int n : batches) {
      const CopyMap& g = cs.g;
      if (!fused_runs(g)) continue;
      const long long per = static_cast<long long>(g.c) * g.h * g.w, count = per * n;
      const long long words = static_cast<long long>(n) * g.h2 * g.w2 * g.cs, lo = cs.parts == 2 ? words : 0;
      std::vector<float> h(static_cast<size_t>(count));
      for (long long i = 0; i < count; ++i) {
        state ^= state << 13; state ^= state >> 7; state ^= state << 17;
        h[i] = (static_cast<float>(state >> 40) / 16777216.0f - 0.5f) * std::ldexp(1.0f, static_cast<int>(i / per % 9) - 4);
      }
      const Buffers buf(h, n, words);
      float* in = buf.in.get();
      unsigned *amax_a = buf.amax_a.get(), *amax_b = buf.amax_b.get();
      uint32_t *dst_a = buf.dst_a.get(), *dst_b = buf.dst_b.get();
      run_split(in, n, g, amax_a, dst_a, lo, sms, nullptr, true);
      std::vector<uint32_t> wa(cs.parts * words), wb(cs.parts * words);
      std::vector<unsigned> aa(n), ab(n);
      CUDA_CHECK(cudaMemcpy(wa.data(), dst_a, cs.parts * words * 4, cudaMemcpyDeviceToHost));
      CUDA_CHECK(cudaMemcpy(aa.data(), amax_a, n * 4, cudaMemcpyDeviceToHost));
      const Band shapes[5] = {band_of(g), band_of(g, 0), band_of(g, 0), band_of(g, 0), band_of(g)};
      auto launch = [&](int v) {
        if (v == 5) return run_split(in, n, g, amax_b, dst_b, lo, sms, nullptr, false);
        const Band& b = shapes[v];
        const int t = v == 2 ? 512 : v >= 3 ? 1024 : 256;
        if (g.s > 1) {
          if (t == 256) launch_fused_at<true, 256>(in, n, g, b, amax_b, dst_b, lo, nullptr);
          else if (t == 512) launch_fused_at<true, 512>(in, n, g, b, amax_b, dst_b, lo, nullptr);
          else launch_fused_at<true, 1024>(in, n, g, b, amax_b, dst_b, lo, nullptr);
        } else {
          if (t == 256) launch_fused_at<false, 256>(in, n, g, b, amax_b, dst_b, lo, nullptr);
          else if (t == 512) launch_fused_at<false, 512>(in, n, g, b, amax_b, dst_b, lo, nullptr);
          else launch_fused_at<false, 1024>(in, n, g, b, amax_b, dst_b, lo, nullptr);
        }
      };
      cudaEvent_t e0, e1;
      cudaEventCreate(&e0);
      cudaEventCreate(&e1);
      float t[6];
      bool eq = true;
      for (int v = 0; v < 6; ++v) {
        CUDA_CHECK(cudaMemset(dst_b, 0xee, 2 * words * 4));
        CUDA_CHECK(cudaMemset(amax_b, 0x77, n * 4));
        launch(v);
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaMemcpy(wb.data(), dst_b, cs.parts * words * 4, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(ab.data(), amax_b, n * 4, cudaMemcpyDeviceToHost));
        eq = eq && wa == wb && aa == ab;
        std::vector<float> r;
        for (int k = 0; k < 8; ++k) {
          cudaEventRecord(e0);
          for (int i = 0; i < 20; ++i) launch(v);
          cudaEventRecord(e1);
          cudaEventSynchronize(e1);
          float ms;
          cudaEventElapsedTime(&ms, e0, e1);
          if (k) r.push_back(ms * 1000.0f / 20.0f);
        }
        t[v] = median(r);
      }
      const Band c = band_for(g, n, sms);
      all = all && eq;
      std::printf("| %s | %d | %.2f (%d) | %.2f (%d) | %.2f | %.2f | %.2f | %.2f | %d x %d rows | %s |\n", cs.name, n, t[0],
                  shapes[0].blocks, t[1], shapes[1].blocks, t[2], t[3], t[4], t[5], c.blocks, c.rows, eq ? "yes" : "NO");
      CUDA_CHECK(cudaGetLastError());
      cudaEventDestroy(e0);
      cudaEventDestroy(e1);
    }
  std::printf("(us a launch; bands in parentheses)\n%s\n", all ? "ALL EQUAL" : "SOME DIFFER");
  return all ? 0 : 1;
}
