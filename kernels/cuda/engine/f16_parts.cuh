// The pieces of a 3xFP16 split (conv v51-v56 and fc v18/v19 through f16_split.cuh; conv v59): a power of two per image
// (or per filter) that puts the largest |x| in [2^14, 2^15), and a value as hi = fp16(s x), lo = fp16(s x - hi).
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace bs::cuda::f16split {

// The power of two that puts a largest magnitude m (as its FP32 bits) in [2^14, 2^15): s = 2^shift. 0 for m = 0, and
// for m not finite (the products are then inf or NaN whatever s is, as in FP32). Clamped so that s and 1/s are normal.
// A normal m is f 2^(E - 126), f in [0.5, 1), E its exponent field: read from the bits (frexpf for the rest).
__device__ __forceinline__ int scale_shift(unsigned bits) {
  const unsigned ex = bits >> 23 & 0xffu;  // the bits of a magnitude: no sign
  if (ex - 1u < 254u) return min(max(141 - static_cast<int>(ex), -120), 120);
  const float m = __uint_as_float(bits);
  if (!(m > 0.0f) || !isfinite(m)) return 0;
  int e;
  frexpf(m, &e);  // a subnormal m = f 2^e, f in [0.5, 1)
  return min(max(15 - e, -120), 120);
}
// 2^k for -126 <= k <= 127 (every shift above and its negation), exact.
__device__ __forceinline__ float pow2(int k) { return __int_as_float((127 + k) << 23); }

// The two FP16 parts of s x, hi rounded to nearest (s x is exact: a power of two).
__device__ __forceinline__ void split_f16(float x, float s, __half& hi, __half& lo) {
  const float y = x * s;
  hi = __float2half_rn(y);
  lo = __float2half_rn(y - __half2float(hi));
}
__device__ __forceinline__ uint32_t word(__half lo_k, __half hi_k) {  // the lower k in the low half
  return static_cast<uint32_t>(__half_as_ushort(lo_k)) | (static_cast<uint32_t>(__half_as_ushort(hi_k)) << 16);
}
// The larger magnitude, NaN winning (so that the scale says "not finite").
__device__ __forceinline__ float max_nan(float m, float a) { return a > m || a != a ? a : m; }

// Two FP16 splits of four values into a hi pair of words and a lo pair.
__device__ __forceinline__ void split4(float4 v, float s, uint2& hi, uint2& lo) {
  __half h[4], l[4];
  split_f16(v.x, s, h[0], l[0]);
  split_f16(v.y, s, h[1], l[1]);
  split_f16(v.z, s, h[2], l[2]);
  split_f16(v.w, s, h[3], l[3]);
  hi = make_uint2(word(h[0], h[1]), word(h[2], h[3]));
  lo = make_uint2(word(l[0], l[1]), word(l[2], l[3]));
}

}  // namespace bs::cuda::f16split
