// Pieces shared by the specialised convolution kernels (v7-v11), the GEMM engines and the activation kernel: the
// activation as a small integer code a kernel can branch on, a kernel's occupancy (blocks per wave), the grid of
// persistent blocks (one wave, each block a contiguous run of whole sets of images) used by v9-v11, and the copy of
// a set of images into shared memory.
#pragma once
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>

#include "kernels/cuda/ops/act_code.hpp"
#include "kernels/cuda/check.hpp"
#include "kernels/model/model.hpp"
#include "weights_tools/error.hpp"

namespace bs::cuda {


__device__ __forceinline__ float activate(float v, int act) {
  return act == 0 ? fmaxf(v, 0.0f) : act == 1 ? tanhf(v) : 1.0f / (1.0f + expf(-v));
}

// The activation kernels' activation: activate's codes, and 3: leaky ReLU of slope alpha below zero.
__device__ __forceinline__ float activate_alpha(float v, int act, float alpha) {
  return act == 3 ? (v >= 0.0f ? v : alpha * v) : activate(v, act);
}

// The activation of an epilogue given as a code at run time (-1: none).
__device__ __forceinline__ float activate_or_keep(float v, int act) { return act < 0 ? v : activate(v, act); }

// The activation as a compile-time code (kNoAct: none), for epilogues without a branch per output.
constexpr int kNoAct = -1;
template <int ACT>
__device__ __forceinline__ float activate_c(float v) {
  if constexpr (ACT == kNoAct) return v;
  else return activate(v, ACT);
}

// Calls f(std::integral_constant<int, code>{}) with the activation code of an epilogue (kNoAct without one),
// so that a launcher can pick the kernel instantiated for it.
template <class F>
void dispatch_act(bool has_act, Act act, F&& f) {
  if (!has_act) return f(std::integral_constant<int, kNoAct>{});
  switch (act_code(act)) {
    case 0: return f(std::integral_constant<int, 0>{});
    case 1: return f(std::integral_constant<int, 1>{});
    case 2: return f(std::integral_constant<int, 2>{});
    default: throw Error("an epilogue was given leaky_relu, which runs as a layer of its own (internal)");
  }
}

// How many blocks of a kernel one wave holds: the GPU's multiprocessors and the blocks each fits at once.
struct Occupancy {
  int sms = 0, per_sm = 0;
  int wave() const { return sms * per_sm; }
};

// A kernel's shared-memory limit raised to smem bytes, and how many of its blocks one wave holds.
template <class Kernel>
Occupancy kernel_occupancy(Kernel kernel, int threads, size_t smem) {
  Occupancy o;
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&o.sms, cudaDevAttrMultiProcessorCount, dev));
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&o.per_sm, kernel, threads, smem));
  o.per_sm = std::max(1, o.per_sm);
  return o;
}

// How many blocks of `kernel` fit on the GPU at once (after allowing it `smem` bytes of dynamic shared memory).
template <class Kernel>
int resident_blocks(Kernel kernel, int threads, size_t smem) {
  return kernel_occupancy(kernel, threads, smem).wave();
}

// One wave of persistent blocks over n images taken in sets of ip.
struct PersistentGrid {
  int blocks, images_per_block;
};
inline PersistentGrid persistent_grid(int n, int ip, int resident) {
  const int sets = (n + ip - 1) / ip;
  const int per_block = ip * std::max(1, (sets + resident - 1) / resident);
  return {(n + per_block - 1) / per_block, per_block};
}

// Starts the copy of `pieces` 16-byte pieces (at most kMaxPieces) from src to dst by cp.async, a block of kThreads
// threads taking pieces threadIdx.x, threadIdx.x + kThreads, ... Where a thread takes at most four, in that many
// predicated rounds: a loop with a run-time trip count compiles to an unrolled body and its remainder, about 110
// instructions a set in v10's conv1, which ran 3.3 % faster in 2 rounds, as v58's conv2 ran 0.9-2.4 % faster
// (experiments/ece408-gpu.md, "FP32 conv1"; v10's unpooled conv2, 4 rounds, was not timed apart). Where a thread takes
// more, the loop: v22's conv2 ran 0.5 % slower in 6 rounds (v10's pooled conv2, 108 threads, would take 14).
template <int kThreads, int kMaxPieces, class T>
__device__ __forceinline__ void copy_pieces_async(T* dst, const T* src, int pieces) {
  constexpr int kWords = 16 / sizeof(T), kRounds = (kMaxPieces + kThreads - 1) / kThreads;
  if constexpr (kRounds <= 4) {
#pragma unroll
    for (int j = 0; j < kRounds; ++j) {
      const int i = static_cast<int>(threadIdx.x) + j * kThreads;
      if (i < pieces) __pipeline_memcpy_async(dst + kWords * i, src + kWords * i, 16);
    }
  } else {
    for (int i = threadIdx.x; i < pieces; i += kThreads) __pipeline_memcpy_async(dst + kWords * i, src + kWords * i, 16);
  }
}

}  // namespace bs::cuda
