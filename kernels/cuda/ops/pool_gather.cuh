// A pooling window's values loaded before any of them is used. The pooling loops ran over the window with run-time
// bounds, so the compiler issued each load after the previous value's maximum (SASS of the 16-bit pool kernel: LDG,
// 8 FMNMX, LDG, ...): at 1 image a 3x3 window was 9 L2 round trips in a row, and AlexNet's pool5 took 3.3 us in fp16
// where an empty kernel takes under 1. Windows up to kGatherMax x kGatherMax (AlexNet's 3x3, VGG's 2x2) are loaded
// here as one batch of predicated loads; larger ones keep the loop. Each caller combines the values in the loop's
// order (rows, then columns), so that sums round as before: the same bits.
#pragma once

#include "kernels/model/model.hpp"

namespace bs::cuda {

constexpr int kGatherMax = 3;

__host__ __device__ __forceinline__ bool gathers(const PoolParams& p) { return p.kh <= kGatherMax && p.kw <= kGatherMax; }

// f(load(y, x)) for every position of window w, rows then columns, with the MK x MK grid's loads issued first (slots
// outside the window predicated off).
template <int MK, class T, class Load, class F>
__device__ __forceinline__ void gather_apply(const PoolWindow& w, const Load& load, const F& f) {
  T v[MK * MK];
#pragma unroll
  for (int dy = 0; dy < MK; ++dy)
#pragma unroll
    for (int dx = 0; dx < MK; ++dx) v[dy * MK + dx] = w.y0 + dy < w.y1 && w.x0 + dx < w.x1 ? load(w.y0 + dy, w.x0 + dx) : T{};
#pragma unroll
  for (int dy = 0; dy < MK; ++dy)
#pragma unroll
    for (int dx = 0; dx < MK; ++dx)
      if (w.y0 + dy < w.y1 && w.x0 + dx < w.x1) f(v[dy * MK + dx]);
}

// f(load(y, x)) for every position of window w, rows then columns, one load at a time.
template <class Load, class F>
__device__ __forceinline__ void for_window_loop(const PoolWindow& w, const Load& load, const F& f) {
  for (int y = w.y0; y < w.y1; ++y)
    for (int x = w.x0; x < w.x1; ++x) f(load(y, x));
}

// f(value) for every position of the window, rows then columns. GATHER: loaded first where the window is small enough
// (a 2x2 grid for windows up to 2x2: the 3x3 grid's predicates made FP32 VGG-16's 2x2 pools 15 % slower at 64 images);
// otherwise, and for callers that pass GATHER = false, one load at a time.
template <class T, bool GATHER = true, class Load, class F>
__device__ __forceinline__ void for_window(const PoolParams& p, const PoolWindow& w, const Load& load, const F& f) {
  if constexpr (!GATHER) {
    for_window_loop(w, load, f);
  } else if (p.kh <= 2 && p.kw <= 2) {
    gather_apply<2, T>(w, load, f);
  } else if (gathers(p)) {
    gather_apply<kGatherMax, T>(w, load, f);
  } else {
    for_window_loop(w, load, f);
  }
}

}  // namespace bs::cuda
