// Division of a non-negative 32-bit value below 2^31 by a divisor fixed for a launch, as a multiply-high, an add and a
// shift (Granlund and Montgomery, "Division by invariant integers using multiplication", 1994: the round-up method),
// where the compiler's division by a runtime int is about 25 instructions (a reciprocal, its refinement, two
// corrections and the sign's fix-ups). The wgmma convolutions' loaders divide each of a thread's pixel rows by the
// pixels of an image and by the output's width at every tile's start: with conv1's 7 stages a tile (v44 after v38) that
// set-up was a quarter of a warp's instructions.
//
// For 1 <= d <= 2^31 let l = ceil(log2 d) and m = floor(2^32 (2^l - d) / d) + 1 (below 2^32, since 2^l - d < d). Then for
// 0 <= n < 2^31, n / d = (mulhi(n, m) + n) >> l, the sum below 2^32 (mulhi(n, m) <= n). tests/test_fast_div.cpp checks it
// against the division over every divisor up to 2^16 and the edges of the range.
#pragma once
#include <cstdint>

#ifdef __CUDACC__
#define BS_FAST_DIV_HD __host__ __device__ __forceinline__
#else
#define BS_FAST_DIV_HD inline
#endif

namespace bs::cuda {

struct FastDiv {
  uint32_t mul = 1;  // m
  uint32_t shift = 0;  // l
  uint32_t d = 1;

  FastDiv() = default;
  // 1 <= d <= 2^31 (above, l = 32 and the shift would be undefined)
  explicit FastDiv(uint32_t divisor) : d(divisor) {
    while (shift < 32 && (uint64_t{1} << shift) < d) ++shift;
    mul = static_cast<uint32_t>(((uint64_t{1} << 32) * ((uint64_t{1} << shift) - d)) / d + 1);
  }
  // n / d for 0 <= n < 2^31
  BS_FAST_DIV_HD uint32_t div(uint32_t n) const {
#ifdef __CUDA_ARCH__
    const uint32_t t = __umulhi(n, mul);
#else
    const uint32_t t = static_cast<uint32_t>((static_cast<uint64_t>(n) * mul) >> 32);
#endif
    return (t + n) >> shift;
  }
};

}  // namespace bs::cuda
#undef BS_FAST_DIV_HD
