// The Hopper mainloop of gemm_wgmma.cuh with its operands brought in by the tensor memory accelerator (TMA) instead of
// the block's threads: one thread a block issues a stage's bulk tensor copies (cp.async.bulk.tensor), whose completion
// an mbarrier a stage counts in bytes. gemm_wgmma.cuh's cp.async loaders issue one 16-byte copy a thread per 16 bytes
// of the stage (1,792 copies a stage for 128 x 96 tiles, with the address arithmetic of each); ncu on AlexNet's conv1
// had them stalled on lg_throttle, the SM's queue of global-memory instructions full
// (experiments/results/h200-wgmma-half-epilogue/). Here a stage is five instructions of one thread.
//
// Layout. B as in gemm_wgmma.cuh: BN rows of 128 bytes in the 128-byte swizzle, what a 2-D (here 3-D: k, filter, group)
// tiled TMA box of 64 16-bit values x BN rows writes with CU_TENSOR_MAP_SWIZZLE_128B. A in four k-step tiles of BM rows
// x 32 bytes (16 values, one wgmma k step) in the 32-byte swizzle, each one im2col TMA box: 16 channels of BM
// consecutive output pixels at one filter tap (the tensor map walks the pixels across rows and images and fills the
// padding with zeros). So a layer needs a multiple of 16 channels per group as stored, where the cp.async loaders take
// 8. The k steps past K (its padding to whole stages) read channels past the pixel's last: zeros, as the weights there are.
// Descriptors: A's k step kk at its tile's start, 8-row atoms 256 bytes apart, swizzle mode 3 (32 bytes); B's as in
// gemm_wgmma.cuh.
//
// Pipeline: gemm_wgmma.cuh's, loads STAGES - 2 ahead of the products and one wgmma batch in flight, with the block's
// barrier at each stage as the sign that stage i - 2's buffer is free; thread 0 then arms that buffer's mbarrier with
// the stage's bytes and issues its copies, and every thread waits on the mbarrier of stage i (parity: the buffer's use
// count, mod 2).
//
// The Problem provides, beside gemm_wgmma.cuh's epilogue members and k_tiles, splits:
//   tma_state<T>(group, m0, n0, kt0)              the issuing thread's state (where the block's tiles start)
//   tma_issue<T>(state, a_smem, b_smem, mbar, kt) stage kt's copies (called for kt0, kt0 + 1, ... in turn), which
//                                                 must total T::STAGE_BYTES
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/engine/gemm_wgmma.cuh"

namespace bs::cuda::wg {

// A WgTile whose stages come by TMA (the 16-bit types only: A's k-step tiles are 16 values wide).
// WIDE: A as one im2col box of 64 channels a stage in the 128-byte swizzle, gemm_wgmma.cuh's own layout (a multiple of
// 64 channels per group as stored: each stage within one tap); else four boxes of 16 channels in the 32-byte swizzle.
// A box row is one request of the TMA unit: 16-channel boxes make 4 BM requests of 32 bytes a stage where the wide one
// makes BM of 128.
template <class Base, bool WIDE = false>
struct TmaTile : Base {
  static constexpr bool TMA = true, A_WIDE = WIDE;
  static_assert(Base::PARTS == 1 && Base::TYPE != kTf32, "TMA stages: one 16-bit product");
};

// Byte offset of A's k step kk (0-3) in a stage: its own tile, or 32 bytes into the wide tile's rows.
template <class T>
__host__ __device__ constexpr uint32_t tma_a_step_bytes(int kk) { return static_cast<uint32_t>(T::A_WIDE ? kk * 32 : kk * T::BM * 32); }
// Bytes from one 64-row piece of A to the next.
template <class T>
__host__ __device__ constexpr uint32_t tma_a_piece_bytes() { return T::A_WIDE ? 64 * 128 : 64 * 32; }

#ifdef BS_HAVE_WGMMA
// PTX ISA, "Matrix Descriptor", for a K-major operand in the 32-byte swizzle: start address >> 4, leading byte offset
// unused (1), 8-row atoms 256 bytes apart, mode 3.
__device__ __forceinline__ uint64_t desc_sw32(uint32_t addr) {
  return static_cast<uint64_t>((addr & 0x3FFFF) >> 4) | (uint64_t{1} << 16) | (uint64_t{256 >> 4} << 32) | (uint64_t{3} << 62);
}
__device__ __forceinline__ void mbar_init(uint32_t bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_init_fence() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }
__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n\t.reg .pred p;\n"
      "WAIT_%=:\n\t"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n\t"
      "@!p bra WAIT_%=;\n\t}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}
// A 4-D im2col box (coordinates c, w, h, n of the window's origin; the tap's offsets in w and h) and a 3-D tiled box.
__device__ __forceinline__ void tma_im2col4(uint32_t dst, const void* map, uint32_t bar, int c, int w, int h, int n, uint16_t ow,
                                            uint16_t oh) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], [%2], {%7, %8};\n" ::"r"(dst),
      "l"(map), "r"(bar), "r"(c), "r"(w), "r"(h), "r"(n), "h"(ow), "h"(oh)
      : "memory");
}
__device__ __forceinline__ void tma_tile3(uint32_t dst, const void* map, uint32_t bar, int c0, int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(dst),
      "l"(map), "r"(bar), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}
__device__ __forceinline__ void tma_prefetch_map(const void* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(map) : "memory");
}
#endif

template <class T, class Problem>
__global__ void __launch_bounds__(T::THREADS, 1) wgmma_tma_kernel(const __grid_constant__ Problem pr) {
#ifdef BS_HAVE_WGMMA
  extern __shared__ __align__(1024) uint8_t wg_smem[];
  // The stages' mbarriers in the 1,024 bytes of room for aligning the first atom: below it where they fit, else after
  // the last stage (no static shared memory: v65's two blocks fill the multiprocessor's 228 KB to the byte).
  const uint32_t start = gemm::smem_u32(wg_smem), base = (start + 1023u) & ~1023u;
  const uint32_t bars = base - start >= 8u * T::STAGES ? start : base + static_cast<uint32_t>(T::STAGES * T::STAGE_BYTES);
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32, wgi = warp / 4;
  const int group = blockIdx.z / pr.splits, split = blockIdx.z % pr.splits;
  const int m0 = blockIdx.x * T::BM, n0 = blockIdx.y * T::BN;
  const int per = (pr.k_tiles + pr.splits - 1) / pr.splits;
  const int kt0 = split * per, nk = max(0, min(pr.k_tiles, kt0 + per) - kt0);
  const auto a_at = [&](int s) { return base + static_cast<uint32_t>(s * T::STAGE_BYTES); };
  const auto b_at = [&](int s) { return base + static_cast<uint32_t>(s * T::STAGE_BYTES + T::A_BYTES); };
  const auto bar = [&](int s) { return bars + 8u * static_cast<uint32_t>(s); };

  auto st = pr.template tma_state<T>(group, m0, n0, kt0);  // used by thread 0 only
  if (tid == 0) {
    pr.prefetch_maps();
#pragma unroll
    for (int s = 0; s < T::STAGES; ++s) mbar_init(bar(s), 1);
    mbar_init_fence();
  }
  __syncthreads();
  if (tid == 0) {
#pragma unroll
    for (int s = 0; s < T::STAGES - 2; ++s)
      if (s < nk) {
        mbar_expect_tx(bar(s), T::STAGE_BYTES);
        pr.template tma_issue<T>(st, a_at(s), b_at(s), bar(s), kt0 + s);
      }
  }

  float acc[T::MI][T::BN / 2];
#pragma unroll
  for (int mi = 0; mi < T::MI; ++mi)
#pragma unroll
    for (int i = 0; i < T::BN / 2; ++i) acc[mi][i] = 0.0f;
  int s_next = T::STAGES - 2, s = 0;
  uint32_t phase = 0;  // bit s: the parity of buffer s's next completion
  // Stage 0's descriptors of this warpgroup's first A piece (k step 0) and of B, made once
  const uint32_t a0 = a_at(0) + static_cast<uint32_t>(wgi * T::MI) * tma_a_piece_bytes<T>();
  const uint64_t da0 = T::A_WIDE ? desc_sw128(a0) : desc_sw32(a0), db0 = desc_sw128(b_at(0));
  for (int i = 0; i < nk; ++i) {
    __syncthreads();  // every warpgroup is done with stage i - 2 (its wgmma_wait<1> of iteration i - 1)
    const int next = i + T::STAGES - 2;
    if (tid == 0 && next < nk) {
      mbar_expect_tx(bar(s_next), T::STAGE_BYTES);
      pr.template tma_issue<T>(st, a_at(s_next), b_at(s_next), bar(s_next), kt0 + next);
    }
    if (++s_next == T::STAGES) s_next = 0;
    mbar_wait(bar(s), (phase >> s) & 1u);
    phase ^= 1u << s;
    const uint64_t da = da0 + static_cast<uint64_t>(s) * (T::STAGE_BYTES >> 4), db = db0 + static_cast<uint64_t>(s) * (T::STAGE_BYTES >> 4);
    fence_operands(acc);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < T::BK / 8; ++kk)
#pragma unroll
      for (int mi = 0; mi < T::MI; ++mi) {
        const uint64_t a = da + (tma_a_step_bytes<T>(kk) + mi * tma_a_piece_bytes<T>()) / 16, b = db + kk * 32 / 16;
        mma<T>(acc[mi], a, b);
      }
    wgmma_commit();
    wgmma_wait<1>();
    fence_operands(acc);
    if (++s == T::STAGES) s = 0;
  }
  wgmma_wait<0>();
  fence_operands(acc);
  const int g = lane / 4, t = lane % 4;
  if constexpr (T::CLUSTER > 0) {
    if (pr.splits > 1) {  // every copy issued was waited for: the stages are free once the block meets
      float* tile = reinterpret_cast<float*>(wg_smem + (base - gemm::smem_u32(wg_smem)));
      cluster_reduce<T>(pr, acc, tile, group, m0, n0, wgi * T::MI * 64 + (warp % 4) * 16 + g, 2 * t, tid);
      return;
    }
  }
  pr.template store_tile<T>(acc, group, split, m0 + wgi * T::MI * 64 + (warp % 4) * 16 + g, n0 + 2 * t);
#endif
}

template <class T, class Problem>
int wgmma_tma_splits(long long blocks, int k_tiles) { return tile_splits<T, wgmma_tma_kernel<T, Problem>>(blocks, k_tiles); }
// The grid of launch_wgmma (gemm_wgmma.cuh).
template <class T, class Problem>
void launch_wgmma_tma(const Problem& pr, long long m, int n, int groups, cudaStream_t s) {
  launch_tile<T, wgmma_tma_kernel<T, Problem>>(pr, m, n, groups, s);
}

}  // namespace bs::cuda::wg
