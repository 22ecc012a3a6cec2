// The reduced-precision element types of --precision fp16 / bf16, stored as raw 16-bit words (uint16_t) so
// that one kernel template serves both (BF16 = false: IEEE binary16; true: bfloat16), and the conversions every
// half-precision kernel uses. A float becomes a half by round to nearest even; with fp16, a value beyond
// 65504 (FP16's largest finite value) would become inf, so every store checks and raises the layer's overflow
// flag instead of passing inf on silently (the backend reports the layer by name after the forward pass).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/model/model.hpp"

namespace bs::cuda::half {

// Value k of one image's NHWC flattening, (y, x, c) over Cs channels, as its offset in the NCHW flattening (the order of
// a fully connected layer's weight columns in the model); -1 for the pad channel (c >= C).
__device__ __forceinline__ long long nhwc_to_nchw(long long k, Shape is, int cs) {
  const int c = static_cast<int>(k % cs), x = static_cast<int>((k / cs) % is.w), y = static_cast<int>(k / (static_cast<long long>(cs) * is.w));
  return c < is.c ? (static_cast<long long>(c) * is.h + y) * is.w + x : -1;
}

constexpr float kFp16Max = 65504.0f;

template <bool BF16>
__device__ __forceinline__ float to_float(uint16_t x) {
  if constexpr (BF16) return __uint_as_float(static_cast<uint32_t>(x) << 16);
  else return __half2float(__ushort_as_half(x));
}

template <bool BF16>
__device__ __forceinline__ uint16_t from_float(float v) {
  if constexpr (BF16) return __bfloat16_as_ushort(__float2bfloat16_rn(v));
  else return __half_as_ushort(__float2half_rn(v));
}

// v about to be stored as fp16: raise *ovf where it is out of range (NaN is not an overflow: it passes).
template <bool BF16>
__device__ __forceinline__ void check_range(float v, int* ovf) {
  if constexpr (!BF16)
    if (ovf && fabsf(v) > kFp16Max) *reinterpret_cast<volatile int*>(ovf) = 1;
}

template <bool BF16>
__device__ __forceinline__ uint16_t store_value(float v, int* ovf) {
  check_range<BF16>(v, ovf);
  return from_float<BF16>(v);
}

// LRN's factor (k + alpha / size * sum of squares)^-beta, scale = alpha / size, as both 16-bit LRN kernels compute it
// (lrn_pool_half.cu gives lrn_kernel's values to the bit). lg2.approx and ex2.approx, flushing subnormals: the logarithm's
// absolute error is about 2^-21.4, a relative error of the factor near 2e-7 against fp16's 2^-11 rounding (the accurate
// log2f cost lrn_kernel a third of its instructions). A factor below 2^-126 becomes 0: an fp16 product would round to 0
// anyway, a bf16 one is 0 where it would have been a subnormal.
__device__ __forceinline__ float lrn_factor(const LrnParams& p, float scale, float sum) {
  float l, f;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(l) : "f"(p.k + scale * sum));
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(f) : "f"(-p.beta * l));
  return f;
}

// Two values as one 32-bit word, the first in the low half (the lower address, and the smaller k of an MMA pair).
// A word's two values (the first from the low half), exactly.
template <bool BF16>
__device__ __forceinline__ void unpack2(uint32_t u, float& lo, float& hi) {
  if constexpr (BF16) {
    lo = __uint_as_float(u << 16);
    hi = __uint_as_float(u & 0xffff0000u);
  } else {
    const float2 f = __half22float2(*reinterpret_cast<const __half2*>(&u));
    lo = f.x;
    hi = f.y;
  }
}

// Blocks for a grid-stride loop over `work` items (at least one, at most 16 x 65535).
inline unsigned grid_for(long long work, int threads = 256) {
  return static_cast<unsigned>(std::clamp<long long>((work + threads - 1) / threads, 1, 65535LL * 16));
}

// One packing conversion (F2FP), rounding as from_float.
template <bool BF16>
__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
  if constexpr (BF16) {
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&v);
  } else {
    const __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&v);
  }
}

// fp16's range check as a running maximum of |v| per thread, raised once at the end (a test and a predicated store
// per value cost the fp16 kernels ~10 % against bf16's). fmaxf ignores NaN, which is not an overflow.
template <bool BF16>
__device__ __forceinline__ void track(float& vmax, float v) {
  if constexpr (!BF16) vmax = fmaxf(vmax, fabsf(v));
}
template <bool BF16>
__device__ __forceinline__ void raise_if_over(float vmax, int* ovf) {
  if constexpr (!BF16)
    if (ovf && vmax > kFp16Max) *reinterpret_cast<volatile int*>(ovf) = 1;
}
// TRACK: false where the activation bounds the value (tanh, sigmoid).
template <bool BF16, bool TRACK>
__device__ __forceinline__ uint32_t store_pair(float v0, float v1, float& vmax) {
  if constexpr (TRACK) {
    track<BF16>(vmax, v0);
    track<BF16>(vmax, v1);
  }
  return pack2<BF16>(v0, v1);
}

}  // namespace bs::cuda::half
