// What the 16-bit GEMM-engine convolutions share (v19-v21 on mma.sync, conv_half.cu; v39-v47 on wgmma,
// conv_wgmma_half.cu): the layer's geometry and the limits of their 32-bit indexing, and the output side. C's rows are
// output pixels m, its columns a group's filters f. The epilogue adds bias, applies the activation and stores channel
// pairs as 32-bit words of the NHWC output (N, OH, OW, Ms), the pad channel as zero; with split-K the blocks write FP32
// partial sums (splits, G, ncols, Mg) and splitk_finish stores the result.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/engine/epilogue.cuh"
#include "kernels/cuda/engine/gemm_engine.cuh"
#include "kernels/cuda/half/activate16.cuh"
#include "kernels/cuda/half/half_ops.hpp"
#include "kernels/cuda/half/half_types.cuh"
#include "weights_tools/error.hpp"

namespace bs::cuda::half {

// Channels (16-bit values) and words of one layer: cs_in stored per input pixel, cgs per group in k's order (Cs with
// one group, so its pad channel is a k of weight zero), k = KH x KW x Cgs values (even) = kw words; n_pad: the filters
// padded for v19-v21's N-major weights.
struct HalfConvGeometry {
  int groups, mg, cg, cgs, cs_in, ms, k, kw, kw_pad, n_pad, p;
  long long ncols;
};
inline HalfConvGeometry half_conv_geometry(Shape is, const ConvParams& c, Shape os, int n) {
  HalfConvGeometry g;
  g.groups = c.groups;
  g.mg = c.filters / c.groups;
  g.cg = is.c / c.groups;
  g.cs_in = stored_channels(is.c);
  g.cgs = c.groups == 1 ? g.cs_in : g.cg;
  g.ms = stored_channels(c.filters);
  g.k = c.kh * c.kw * g.cgs;
  g.kw = g.k / 2;
  g.kw_pad = gemm::pad_to(g.kw, gemm::kPadK);
  g.n_pad = gemm::pad_to(g.mg, gemm::kPadMN);
  g.p = os.h * os.w;
  g.ncols = static_cast<long long>(n) * g.p;
  return g;
}

// The shapes their 32-bit offsets and 16-bit (ky << 16 | kx) k-table entries reach; v: "v20" etc.
inline Support half_conv_index_limits(const std::string& v, const Layer& layer) {
  const ConvParams& c = std::get<ConvParams>(layer.op);
  if (layer.in.h >= 16384 - c.ph || layer.in.w >= 65536 || c.window_h() >= 16384 || c.window_w() >= 65536)
    return {false, v + " indexes images and kernels below 16384 rows"};
  if (static_cast<long long>(layer.in.h) * layer.in.w * stored_channels(layer.in.c) >= INT_MAX)
    return {false, v + ": one image's input exceeds 2^31 values"};
  return {};
}
// The same for a batch, at launch; engine: "GEMM" or "wgmma".
inline void check_half_conv_batch(const HalfConvGeometry& g, const HalfConvArgs& a, const char* engine) {
  if (g.ncols > INT_MAX)
    fail("layer convolution", std::string("batch too large for one launch of the ") + engine + " engine (images x OH x OW > 2^31)");
  if (static_cast<long long>(a.n) * a.is.h * a.is.w * g.cs_in / 2 > INT_MAX)
    fail("layer convolution", "batch too large for the 16-bit path's 32-bit offsets (input words > 2^31)");
}

struct HalfConvOut {
  int mg, groups, m_total, ms, splits, act;  // m_total: every group's filters; ms: channels stored per pixel
  long long ncols;                           // images x OH x OW
  const float* bias;
  uint16_t* out;  // (N, OH, OW, Ms)
  float* part;    // (splits, G, ncols, Mg)
  int* ovf;

  // Filters f and f + 1 of `group` at pixel m (f even within the group); split: whose partial sums these are, or
  // gemm::kSplitsReduced for the output.
  template <bool BF16>
  __device__ __forceinline__ void store2_as(int group, int split, long long m, int f, float v0, float v1) const {
    if (m >= ncols || f >= mg) return;
    const bool two = f + 1 < mg;
    if (splits > 1 && split != gemm::kSplitsReduced) {
      float* dst = part + ((static_cast<long long>(split) * groups + group) * ncols + m) * mg + f;
      dst[0] = v0;
      if (two) dst[1] = v1;
      return;
    }
    const int ch = group * mg + f;
    v0 = activate16_or_keep(bias ? v0 + bias[ch] : v0, act);
    uint16_t* o = out + m * ms + ch;
    if (two) {
      v1 = activate16_or_keep(bias ? v1 + bias[ch + 1] : v1, act);
      check_range<BF16>(v0, ovf);
      check_range<BF16>(v1, ovf);
      if ((ch & 1) == 0) {
        *reinterpret_cast<uint32_t*>(o) = pack2<BF16>(v0, v1);
        return;
      }
      o[1] = from_float<BF16>(v1);
    }
    o[0] = store_value<BF16>(v0, ovf);
    if (ch + (two ? 1 : 0) == m_total - 1 && ms > m_total) o[two ? 2 : 1] = 0;  // the pad channel
  }

  // The reduced sums of a cluster's split-K (gemm_engine.cuh's store_reduced_quad): filters f to f + 3 of `group` at
  // pixel m. Where the four channels are whole and 8-byte aligned (every AlexNet layer), one 8-byte store with one
  // address, the same values as store2_as's two pairs (bias, activation, range check, the same rounding); else those two
  // pairs. At batch 1 the pairs' stores were the cluster reduction's longest step (about 230 instructions a quad).
  // bias4(): the four biases (called only on the fast path and with a bias): loaded where they are added (the wgmma
  // cluster versions, below), or what quad_pre loaded before the cluster's barrier (v48, gemm_engine.cuh's quad_pre; a
  // quad that takes the pairs gets zeros from it, unused: store2_as reads its own).
  __device__ __forceinline__ bool quad_whole(int group, long long m, int f) const {
    const int ch = group * mg + f;
    return m < ncols && f + 3 < mg && (ch & 3) == 0 && (ms & 3) == 0;
  }
  __device__ __forceinline__ float4 load_bias4(int group, int f) const {
    const float* b = bias + group * mg + f;  // the four loads in flight together (16 bytes where aligned)
    return (reinterpret_cast<uintptr_t>(b) & 15) == 0 ? *reinterpret_cast<const float4*>(b) : make_float4(b[0], b[1], b[2], b[3]);
  }
  __device__ __forceinline__ float4 quad_pre(int group, long long m, int f) const {
    return bias && quad_whole(group, m, f) ? load_bias4(group, f) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  }
  template <bool BF16, class Bias4>
  __device__ __forceinline__ void store4_as(int group, long long m, int f, const float4& v, Bias4&& bias4) const {
    const int ch = group * mg + f;
    if (quad_whole(group, m, f)) {
      float x[4] = {v.x, v.y, v.z, v.w};
      if (bias) {
        const float4 bb = bias4();
        x[0] += bb.x;
        x[1] += bb.y;
        x[2] += bb.z;
        x[3] += bb.w;
      }
      if (act == 0) {  // one branch for the four (the activation code is the launch's)
#pragma unroll
        for (int j = 0; j < 4; ++j) x[j] = fmaxf(x[j], 0.0f);
      } else if (act > 0) {
#pragma unroll
        for (int j = 0; j < 4; ++j) x[j] = activate16(x[j], act);
      }
#pragma unroll
      for (int j = 0; j < 4; ++j) check_range<BF16>(x[j], ovf);
      *reinterpret_cast<uint2*>(out + m * ms + ch) = make_uint2(pack2<BF16>(x[0], x[1]), pack2<BF16>(x[2], x[3]));
      return;
    }
    store2_as<BF16>(group, gemm::kSplitsReduced, m, f, v.x, v.y);
    store2_as<BF16>(group, gemm::kSplitsReduced, m, f + 2, v.z, v.w);
  }
};

// One thread per output value (pixel, channel): the partial sums of its (group, filter), bias, activation.
template <bool BF16>
__global__ void splitk_reduce(const HalfConvOut o) {
  const long long total = o.ncols * o.ms;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long m = i / o.ms;
    const int ch = static_cast<int>(i - m * o.ms);
    if (ch >= o.m_total) {
      o.out[i] = 0;
      continue;
    }
    const int z = ch / o.mg, f = ch - z * o.mg;
    float v = 0.0f;
    for (int s = 0; s < o.splits; ++s) v += o.part[((static_cast<long long>(s) * o.groups + z) * o.ncols + m) * o.mg + f];
    if (o.bias) v += o.bias[ch];
    o.out[i] = store_value<BF16>(activate16_or_keep(v, o.act), o.ovf);
  }
}

template <bool BF16>
void splitk_finish(const HalfConvOut& o, cudaStream_t s) {
  const long long total = o.ncols * o.ms;
  const unsigned blocks = static_cast<unsigned>(std::min<long long>((total + 255) / 256, 8192));
  splitk_reduce<BF16><<<blocks, 256, 0, s>>>(o);
  CUDA_CHECK_LAUNCH();
}

}  // namespace bs::cuda::half
