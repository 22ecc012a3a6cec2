// The output side of the 16-bit GEMM-engine convolutions (v19-v21 on mma.sync, conv_half.cu; v39-v45 on wgmma,
// conv_wgmma_half.cu): C's rows are output pixels m, its columns a group's filters f. The epilogue adds bias, applies
// the activation and stores channel pairs as 32-bit words of the NHWC output (N, OH, OW, Ms), the pad channel as zero;
// with split-K the blocks write FP32 partial sums (splits, G, ncols, Mg) and splitk_finish stores the result.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/engine/epilogue.cuh"
#include "kernels/cuda/half/half_types.cuh"

namespace bs::cuda::half {

struct HalfConvOut {
  int mg, groups, m_total, ms, splits, act;  // m_total: every group's filters; ms: channels stored per pixel
  long long ncols;                           // images x OH x OW
  const float* bias;
  uint16_t* out;  // (N, OH, OW, Ms)
  float* part;    // (splits, G, ncols, Mg)
  int* ovf;

  // Filters f and f + 1 of `group` at pixel m (f even within the group).
  template <bool BF16>
  __device__ __forceinline__ void store2_as(int group, int split, long long m, int f, float v0, float v1) const {
    if (m >= ncols || f >= mg) return;
    const bool two = f + 1 < mg;
    if (splits > 1) {
      float* dst = part + ((static_cast<long long>(split) * groups + group) * ncols + m) * mg + f;
      dst[0] = v0;
      if (two) dst[1] = v1;
      return;
    }
    const int ch = group * mg + f;
    v0 = activate_or_keep(bias ? v0 + bias[ch] : v0, act);
    uint16_t* o = out + m * ms + ch;
    if (two) {
      v1 = activate_or_keep(bias ? v1 + bias[ch + 1] : v1, act);
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
    o.out[i] = store_value<BF16>(activate_or_keep(v, o.act), o.ovf);
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
