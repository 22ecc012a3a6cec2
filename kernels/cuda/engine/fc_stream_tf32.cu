// Fully connected version v20 stream-mma-3xtf32: FP32 at 2-16 images, the weights streamed once a pass on the tensor cores.
//
// At a few images an FP32 layer is its weights (AlexNet's fc6-fc8: 234 MB, 70 us at the H100's 3.35 TB/s). v5 streams
// them with FFMA, one multiply-add per weight per image; v8, the GEMM engine on 64 x 64 tiles, wastes most of a tile's
// rows on 16 images. At 16 images AlexNet's fc6-fc8 took 169 us on v8 (issue 32: FP32 at batch 16 at most 0.30 ms).
// v20 is fc v17's schedule (16-bit, half/fc_stream_half.cu) in FP32: the images are the m of mma.sync m16n8k8 (TF32), a
// block's 8 warps split K into 32-value chunks (a 128-byte line of each row), and in a chunk lane (g, t) loads, in two
// loads of 16 bytes (u = 0, 1), weight row g and images g and g + 8 at k = 32 c + 8 t + 4 u (as v17: each load of a warp
// touches every sector of its lines). Each 4 values feed two k-steps: values 2 s and 2 s + 1 are the mma's k = t and t + 4 of
// step s, the same order for the weights and the images, so every product meets its pair. Each value is split into two
// TF32 parts (hi rounded to nearest, lo = x - hi) and multiplied three times (lo*hi, hi*lo, hi*hi: FP32 accuracy, as the
// 3xTF32 engine versions); each stage's products go to a tile that starts at zero and is added to the FP32 sums with
// FADD (the tensor cores' own accumulation rounds toward zero: gemm_math.cuh). Two register stages: a stage's loads are
// issued before the other stage's products. The warps' sums meet in shared memory in warp order; bias and activation
// follow. Needs K a multiple of 4 (16-byte rows); reads the model's (O, K) weights as they are (no preparation).
#include <algorithm>
#include <cstdint>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/engine/epilogue.cuh"
#include "kernels/cuda/engine/fc_stream_mma.cuh"
#include "kernels/cuda/engine/gemm_math.cuh"
#include "kernels/cuda/impl_hooks.hpp"
#include "kernels/cuda/ops/ops.hpp"
#include "weights_tools/error.hpp"

namespace bs::cuda {
namespace {

constexpr int kWarps = 8;
constexpr int kImages = 16;  // images per pass: the mma's m

struct Split {
  uint32_t hi[4], lo[4];
};
__device__ __forceinline__ Split split4(float4 v) {
  Split s;
  gemm::tf32_split<3>(v.x, s.hi[0], s.lo[0]);
  gemm::tf32_split<3>(v.y, s.hi[1], s.lo[1]);
  gemm::tf32_split<3>(v.z, s.hi[2], s.lo[2]);
  gemm::tf32_split<3>(v.w, s.hi[3], s.lo[3]);
  return s;
}

// w: (O, K) FP32; x: (N, K); out: (N, O).
// SPLIT: K split over the `splits` blocks of a cluster (fc_stream_mma.cuh), rank blockIdx.z.
template <int NT, bool SPLIT>
__global__ void __launch_bounds__(kWarps * 32) fc_stream_tf32_kernel(const float* __restrict__ w, const float* __restrict__ x, int k, int n,
                                                                     int outputs, const float* __restrict__ bias, int act,
                                                                     float* __restrict__ out, int splits) {
  __shared__ float partial[kWarps][NT * 8][kImages + 1];
  __shared__ float block_sum[SPLIT ? NT * 8 * kImages : 1];  // the cluster's sum
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4;
  const int o0 = blockIdx.x * NT * 8;
  // the warp's place among the cluster's warps, and their count
  const int cwarp = SPLIT ? static_cast<int>(blockIdx.z) * kWarps + warp : warp, cwarps = SPLIT ? splits * kWarps : kWarps;
  const int chunks = (k + 31) / 32;  // 32-value chunks (one 128-byte line of each row); the last may be short (zeros past K)
  const float* rows[NT];
#pragma unroll
  for (int j = 0; j < NT; ++j) rows[j] = w + static_cast<long long>(min(o0 + 8 * j + g, outputs - 1)) * k;
  for (int n0 = 0; n0 < n; n0 += kImages) {
    const int nb = min(kImages, n - n0);
    const bool has_a = g < nb, has_b = g + 8 < nb;
    const float* xa = x + static_cast<long long>(n0 + (has_a ? g : 0)) * k;
    const float* xb = x + static_cast<long long>(n0 + (has_b ? g + 8 : 0)) * k;
    float acc[NT][4];
#pragma unroll
    for (int j = 0; j < NT; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;
    constexpr int U = 2;
    struct Stage {
      float4 w[U][NT], a[U], b[U];
    };
    const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    auto load = [&](Stage& st, int c0) {
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int kk = 32 * c0 + 8 * t + 4 * u;  // this lane's 4 values: its U loads, one line a warp (v17's note)
        const bool in = c0 < chunks && kk < k;
#pragma unroll
        for (int j = 0; j < NT; ++j) st.w[u][j] = in ? __ldcs(reinterpret_cast<const float4*>(rows[j] + kk)) : zero;
        st.a[u] = in && has_a ? __ldg(reinterpret_cast<const float4*>(xa + kk)) : zero;
        st.b[u] = in && has_b ? __ldg(reinterpret_cast<const float4*>(xb + kk)) : zero;
      }
    };
    auto multiply = [&](const Stage& st) {
      float part[NT][4];
#pragma unroll
      for (int j = 0; j < NT; ++j) part[j][0] = part[j][1] = part[j][2] = part[j][3] = 0.0f;
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const Split a = split4(st.a[u]), b = split4(st.b[u]);
#pragma unroll
        for (int s = 0; s < 2; ++s) {
          // A (m16 x k8): a0 = (g, t), a1 = (g + 8, t), a2 = (g, t + 4), a3 = (g + 8, t + 4)
          const uint32_t ahi[4] = {a.hi[2 * s], b.hi[2 * s], a.hi[2 * s + 1], b.hi[2 * s + 1]};
          const uint32_t alo[4] = {a.lo[2 * s], b.lo[2 * s], a.lo[2 * s + 1], b.lo[2 * s + 1]};
#pragma unroll
          for (int j = 0; j < NT; ++j) {
            const Split wv = split4(st.w[u][j]);  // B (k8 x n8): b0 = (t, g), b1 = (t + 4, g)
            gemm::mma_m16n8k8_tf32(part[j], alo, wv.hi[2 * s], wv.hi[2 * s + 1]);  // the small terms first
            gemm::mma_m16n8k8_tf32(part[j], ahi, wv.lo[2 * s], wv.lo[2 * s + 1]);
            gemm::mma_m16n8k8_tf32(part[j], ahi, wv.hi[2 * s], wv.hi[2 * s + 1]);
          }
        }
      }
#pragma unroll
      for (int j = 0; j < NT; ++j)
#pragma unroll
        for (int i = 0; i < 4; ++i) acc[j][i] += part[j][i];
    };
    stream_mma::two_stages<Stage>(cwarp, chunks, cwarps, load, multiply);
    stream_mma::store_tiles<NT>(partial[warp], acc, g, t);
    __syncthreads();
    const auto store = [&](int img, int o, float v) { out[static_cast<long long>(n0 + img) * outputs + o] = activate_or_keep(v, act); };
    if constexpr (SPLIT) stream_mma::sum_cluster<NT, kImages, kWarps>(partial, block_sum, splits, o0, nb, outputs, bias, store);
    else stream_mma::sum_warps<NT, kImages, kWarps>(partial, o0, nb, outputs, bias, store);
    __syncthreads();  // partial is reused by the next pass
  }
}

void forward(int, const FcArgs& a, cudaStream_t s) {
  if (a.inputs % 4 != 0 || (reinterpret_cast<uintptr_t>(a.in) | reinterpret_cast<uintptr_t>(a.w)) % 16 != 0)
    fail("fc v20", "needs 16-byte aligned rows (inputs a multiple of 4)");
  const int nt = stream_mma::tiles_for(a.outputs, sm_count());
  const int rounds = (a.inputs + 31) / 32 / kWarps;  // register stages a warp, in one block
  auto go = [&](auto tiles) {
    constexpr int NT = decltype(tiles)::value;
    const int blocks = (a.outputs + 8 * NT - 1) / (8 * NT);
    if constexpr (NT == 1)  // 8-output tiles split where they are too few (fc_stream_mma.cuh)
      if (stream_mma::launch_split<&fc_stream_tf32_kernel<1, true>>(blocks, sm_count(), kWarps * 32, rounds, s, a.w, a.in, a.inputs, a.n,
                                                                    a.outputs, a.bias, a.act, a.out))
        return;
    if constexpr (NT == 2) {
      // Where 32-output tiles give at least half the multiprocessors a block, they run split 2 ways over a cluster in
      // place of 16-output tiles: the blocks are as many, and each reads the images (4 bytes a value) for twice the
      // outputs. AlexNet's fc6 at 16 images 49.4 -> 43.9 us, fc7 23.0 -> 21.5 (H200; in 16 bits, v17, no faster).
      const int tiles4 = (a.outputs + 31) / 32;
      if (2 * tiles4 >= sm_count() &&
          stream_mma::launch_split<&fc_stream_tf32_kernel<4, true>>(tiles4, sm_count(), kWarps * 32, rounds, s, a.w, a.in, a.inputs, a.n,
                                                                    a.outputs, a.bias, a.act, a.out))
        return;
    }
    fc_stream_tf32_kernel<NT, false><<<blocks, kWarps * 32, 0, s>>>(a.w, a.in, a.inputs, a.n, a.outputs, a.bias, a.act, a.out, 1);
  };
  if (nt == 4) go(std::integral_constant<int, 4>{});
  else if (nt == 2) go(std::integral_constant<int, 2>{});
  else go(std::integral_constant<int, 1>{});
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void register_fc_stream_tf32(Registry& r) {
  static const ImplHooks hooks{.fc_forward = forward};
  Impl i = cuda_impl(LayerKind::fc, 20, "stream-mma-3xtf32",
                     "FP32 at a few images: the weights streamed once per 16 images on mma.sync m16n8k8 (3xTF32, FP32-accurate), "
                     "K split over a cluster's blocks where the outputs leave SMs without a block (or, 2 ways, where 32-output "
                     "tiles halve the images' reads), bias + activation fused",
                     &hooks);
  i.math = "fp32";
  i.precisions = {Precision::fp32};
  i.fuses_act = true;
  i.supports = [](const Layer& l, const Epilogue&) -> Support {
    if (l.in.size() % 4 != 0) return {false, "v20: the inputs are not a multiple of 4 (16-byte rows)"};
    if (l.in.size() >= (1LL << 31)) return {false, "v20: the input exceeds 2^31 values per image"};
    return {};
  };
  r.add(std::move(i));
}

}  // namespace bs::cuda
