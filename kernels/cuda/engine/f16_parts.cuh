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

// Two FP16 splits of four values into a hi pair of words and a lo pair: split_f16's bits, two values a conversion
// (F2FP packs a pair, HADD2.F32 widens one back), where one value at a time took a conversion and a byte permute more.
__device__ __forceinline__ void split4(float4 v, float s, uint2& hi, uint2& lo) {
  const float a = v.x * s, b = v.y * s, c = v.z * s, d = v.w * s;
  const __half2 hab = __floats2half2_rn(a, b), hcd = __floats2half2_rn(c, d);  // a, c in the low halves
  const float2 fab = __half22float2(hab), fcd = __half22float2(hcd);
  const __half2 lab = __floats2half2_rn(a - fab.x, b - fab.y), lcd = __floats2half2_rn(c - fcd.x, d - fcd.y);
  hi = make_uint2(*reinterpret_cast<const uint32_t*>(&hab), *reinterpret_cast<const uint32_t*>(&hcd));
  lo = make_uint2(*reinterpret_cast<const uint32_t*>(&lab), *reinterpret_cast<const uint32_t*>(&lcd));
}

}  // namespace bs::cuda::f16split
