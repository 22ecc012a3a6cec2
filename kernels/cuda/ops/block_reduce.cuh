#pragma once
// A block-wide reduction for the softmax kernels: the maximum (Max) or the sum of v over every thread of the block,
// returned to all of them. blockDim.x is a multiple of 32, at most 1024; red is 32 floats of shared memory, free
// again when the call returns (so the same buffer serves the next reduction).
#include <cfloat>

template <bool Max>
__device__ __forceinline__ float block_reduce(float v, float* red) {
  auto warp_reduce = [](float x) {
    for (int off = 16; off > 0; off >>= 1) {
      const float other = __shfl_xor_sync(0xffffffffu, x, off);
      x = Max ? fmaxf(x, other) : x + other;
    }
    return x;
  };
  v = warp_reduce(v);
  if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = warp_reduce(threadIdx.x < blockDim.x / 32 ? red[threadIdx.x] : (Max ? -FLT_MAX : 0.0f));
    if (threadIdx.x == 0) red[0] = v;
  }
  __syncthreads();
  const float r = red[0];
  __syncthreads();
  return r;
}
