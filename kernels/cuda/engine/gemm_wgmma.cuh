// The GEMM engine's Hopper mainloop (sm_90a): the same problems as gemm_engine.cuh (C = A * B per group, split-K,
// an epilogue per element), with the products on wgmma, the warpgroup-wide asynchronous tensor-core instruction
// that reads both operands straight from shared memory: no fragment loads through registers, and 64 x N x 8 per
// instruction instead of mma.sync's 16 x 8 x 8 per warp. Precision: one TF32 product (--precision tf32), or three
// (3xTF32, FP32 accuracy: WgTile's PARTS); the tensor cores read an operand's top 19 bits, so a value not already a
// TF32 is truncated (conv_wgmma.cu says what that costs); 3xFP16 (FP32 accuracy on the FP16 tensor cores:
// conv_wgmma_3xf16.cu); or one FP16 / BF16 product (WgTile's TYPE, --precision fp16
// or bf16: conv_wgmma_half.cu), exact in FP32 as on mma.sync.
// Split-K: the partial sums through a workspace and a reduction kernel after (the Problem's store), or, for a tile with
// CLUSTER > 0, inside a thread-block cluster whose blocks are the splits of one tile (as the mma.sync engine's small
// tiles do, gemm_engine.cuh): each block stages its tile in the pipeline's shared memory, sums its share of the tile
// over every block's, in rank order, and stores it through the Problem's epilogue. No workspace, no second kernel.
//
// Layout: TF32 wgmma reads only K-major operands (k contiguous). A stage holds A as BM rows and B as BN rows of
// BK = 32 values (128 bytes), in the 128-byte swizzle: the 16-byte chunk c of row r sits at chunk c ^ (r % 8), so
// that the eight rows of a swizzle atom (1024 bytes, the atoms 1024 apart) put any column's chunks in eight
// different bank groups, for the tensor cores' reads and for the loaders' writes alike. A descriptor names a tile by
// its start address (advanced by 32 bytes per k step of 8 inside the atom), the atoms' stride (1024) and the swizzle.
//
// Block: BM rows over WG warpgroups (WgTile), whose 128 WG threads are also the loaders (cp.async, as in the
// mma.sync engine; the Problem decides what a row is).
// Pipeline: STAGES buffers, loads running STAGES - 2 stages ahead of the products, one wgmma batch in flight:
// iteration i waits for stage i's copies, makes them visible to the async proxy (fence.proxy.async) and meets the
// other threads at a barrier, refills the buffer of stage i - 2 (whose products every warpgroup has waited for at
// the end of iteration i - 1), issues stage i's four k steps, and waits for stage i - 1's. 3xTF32 waits for stage
// i - 1's products just before issuing stage i's (after the barrier and the loads, which they overlap) and adds them
// to the FP32 sum in registers (the stage's partial sums, `part`, are the tensor cores' only accumulation).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/engine/gemm_engine.cuh"
#include "kernels/cuda/engine/gemm_launch.cuh"
#include "kernels/cuda/engine/wgmma_ops.cuh"

namespace bs::cuda::wg {

// BM rows over WG warpgroups (128 threads each, also the loaders), each taking MI = BM / (64 WG) pieces of 64 rows
// (one m64nBNk8 each per k step, the B tile shared). MI = 2 (256 rows, 2 warpgroups) halves the B tile's reads per
// product at BN accumulator registers per thread; more warpgroups (3 or 4) give the schedulers more warps to issue
// the loaders' instructions from.
// PARTS = 2: FP32 accuracy from three products. Every operand comes as two parts of the tile's type, hi (x rounded to
// the nearest TF32, or FP16 after a power-of-two scale: conv_wgmma_3xf16.cu) and lo = x - hi, each a tile of its own
// (A hi, A lo, B hi, B lo per stage), and each product is taken as a_lo b_hi + a_hi b_lo + a_hi b_hi, the small terms
// first (gemm_math.cuh says why that keeps FP32 accuracy).
// TYPE: what a stage's 32-bit words hold, and so which wgmma reads them: one TF32 value (kTf32) or a pair of FP16 /
// BF16 values, the lower k in the low half (kF16, kBf16; conv_wgmma_half.cu). A K-major row of 32 words is 32 TF32 or
// 64 16-bit values; a k step of the instruction (8 TF32 or 16 16-bit) is 32 bytes of it either way, so the stages, the
// swizzle and the descriptors are the same.
// CLUSTER: the most ways K is split with the splits reduced in a thread-block cluster (at most 8, the portable cluster
// size; 0: split-K through a workspace). The staged tile's rows are CS = BN + 8 floats apart, so that the eight rows
// and four column pairs a half-warp writes fall in 16 different pairs of banks.
enum WgType { kTf32 = 0, kF16 = 1, kBf16 = 2 };
template <int BN_, int STAGES_, int BM_ = 128, int WG_ = 2, int PARTS_ = 1, int TYPE_ = kTf32, int CLUSTER_ = 0>
struct WgTile {
  static constexpr int BM = BM_, BN = BN_, BK = 32, STAGES = STAGES_, WG = WG_, THREADS = 128 * WG, MI = BM / (64 * WG);
  static constexpr int PARTS = PARTS_, TYPE = TYPE_, CLUSTER = CLUSTER_, CS = BN + 8;
  static constexpr int A_BYTES = BM * 128, B_BYTES = BN * 128, STAGE_BYTES = PARTS * (A_BYTES + B_BYTES);
  static constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + 1024;  // + room to align the first atom to 1024 bytes
  static_assert(BN % 32 == 0 && BN <= 192, "B tiles in whole swizzle atoms; wgmma_ops.cuh has N up to 192");
  static_assert(STAGES >= 3, "loads run STAGES - 2 ahead of the products");
  static_assert(MI >= 1 && MI * 64 * WG == BM && (BM * 8) % THREADS == 0, "whole 64-row pieces per warpgroup");
  static_assert(PARTS == 1 || PARTS == 2, "one product, or three");
  static_assert(CLUSTER >= 0 && CLUSTER <= 8, "a portable cluster holds at most 8 blocks");
  static_assert(CLUSTER == 0 || BM * CS * 4 <= STAGES * STAGE_BYTES, "the cluster reduction stages the tile in the pipeline's memory");
};

// Byte offset of (row r, chunk c of 16 bytes) and of (row r, word k < 32) in a swizzled tile.
__device__ __forceinline__ uint32_t sw_chunk(int r, int c) { return static_cast<uint32_t>(r * 128 + ((c ^ (r & 7)) << 4)); }
__device__ __forceinline__ uint32_t sw_word(int r, int k) { return sw_chunk(r, k >> 2) + ((k & 3) << 2); }

// PTX ISA, "Matrix Descriptor": bits 0-13 start address >> 4, 16-29 leading byte offset >> 4 (unused by a swizzled
// K-major operand), 32-45 stride byte offset >> 4 (between 8-row atoms), 62-63 swizzle (1: 128 bytes).
__device__ __forceinline__ uint64_t desc_sw128(uint32_t addr) {
  return static_cast<uint64_t>((addr & 0x3FFFF) >> 4) | (uint64_t{1} << 16) | (uint64_t{1024 >> 4} << 32) | (uint64_t{1} << 62);
}

__device__ __forceinline__ void cp_async4(uint32_t dst, const float* src, bool ok) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(ok ? 4 : 0) : "memory");
}
__device__ __forceinline__ void cp_async16(uint32_t dst, const float* src, bool ok) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(ok ? 16 : 0) : "memory");
}

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define BS_HAVE_WGMMA 1
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory"); }
// Keeps the compiler from moving other uses of the accumulators across the asynchronous instructions.
template <int M, int R>
__device__ __forceinline__ void fence_operands(float (&d)[M][R]) {
#pragma unroll
  for (int m = 0; m < M; ++m)
#pragma unroll
    for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[m][i])::"memory");
}
// One 32-byte k step of the tile's type.
template <class T>
__device__ __forceinline__ void mma(float (&d)[T::BN / 2], uint64_t a, uint64_t b, int accumulate = 1) {
  if constexpr (T::TYPE == kTf32) WgmmaTf32<T::BN>::mma(d, a, b, accumulate);
  else WgmmaHalf<T::BN, T::TYPE == kBf16>::mma(d, a, b, accumulate);
}
#endif

#ifdef BS_HAVE_WGMMA
// The cluster's split-K reduction (T::CLUSTER; the splits of a tile are the blocks of one cluster along z, rank =
// split): every block stages its accumulator (D of m64nN: rows r + 64 mi + 8 h, column pairs c + 8 j) in its own
// pipeline memory, then sums 1/splits of the tile's quads (4 neighbouring columns of a row) over every block's
// memory, in rank order (the result does not depend on which block finishes first), and stores them through the
// Problem's store2 (column pairs) or store, with split = gemm::kSplitsReduced: the output itself.
template <class T, class Problem>
__device__ __forceinline__ void cluster_reduce(const Problem& pr, const float (&acc)[T::MI][T::BN / 2], float* tile, int group,
                                               int m0, int n0, int r, int c, int tid) {
  constexpr int CS = T::CS;
  __syncthreads();  // every warpgroup's products are done (wait_group 0) and every copy has landed: the stages are free
#pragma unroll
  for (int mi = 0; mi < T::MI; ++mi)
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int j = 0; j < T::BN / 8; ++j)
        *reinterpret_cast<float2*>(tile + (r + 64 * mi + 8 * h) * CS + c + 8 * j) = make_float2(acc[mi][4 * j + 2 * h], acc[mi][4 * j + 2 * h + 1]);
  constexpr bool pairs = requires { pr.store2(0, 0, 0, 0, 0.0f, 0.0f); };
  // Nothing loaded before the barrier's wait (gemm_engine.cuh's quad_pre): with a quad's bias held across it, the
  // 128 x 128 tiles' kernel (v61) went from 128 to 134 registers, one block a multiprocessor where two fitted, and the
  // 16-bit convolutions at 4 and 16 images were 2-17 % slower (experiments/results/h200-quad-pre/, call 1).
  gemm::cluster_sum_store<T::BM, T::BN, CS, T::THREADS, T::CLUSTER>(
      tile, pr.splits, tid, [](int, int) { return gemm::NoQuadPre{}; },
      [&](int rr, int cc, const float4& sum, gemm::NoQuadPre pre) { gemm::store_reduced_quad<pairs>(pr, group, m0 + rr, n0 + cc, sum, pre); });
}
#endif

// A Problem for this mainloop provides
//   a_state<T>(group, m0, tid, kt0), b_state<T>(group, n0, tid)   per-thread loader state (kt0: the block's first k
//                                                            tile)
//   load_a<T>(state, stage_addr, kt, tid), load_b<T>(...)    one stage's cp.async copies into the swizzled tile at
//                                                            the shared-memory address stage_addr; called for
//                                                            kt = kt0, kt0 + 1, ... in turn
//   store(group, split, m, n, v)                             the epilogue for one element of C, or
//   store_tile<T>(acc, group, split, r, c)                   the thread's whole accumulator: rows r + 64 mi + 8 h,
//                                                            column pairs c + 8 j (acc[mi][4 j + 2 h], the next one)
//   store2(group, split, m, n, v0, v1) or store(...)         T::CLUSTER: columns n, n + 1 (n even) of the reduced sums
//                                                            (split = gemm::kSplitsReduced)
//   k_tiles, splits
template <class T, class Problem>
__global__ void __launch_bounds__(T::THREADS, 1) wgmma_kernel(const __grid_constant__ Problem pr) {
#ifdef BS_HAVE_WGMMA
  extern __shared__ __align__(1024) uint8_t wg_smem[];
  const uint32_t base = (gemm::smem_u32(wg_smem) + 1023u) & ~1023u;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32, wgi = warp / 4;
  const int group = blockIdx.z / pr.splits, split = blockIdx.z % pr.splits;
  const int m0 = blockIdx.x * T::BM, n0 = blockIdx.y * T::BN;
  const int per = (pr.k_tiles + pr.splits - 1) / pr.splits;
  const int kt0 = split * per, nk = max(0, min(pr.k_tiles, kt0 + per) - kt0);
  auto sa = pr.template a_state<T>(group, m0, tid, kt0);  // loaders may carry state from stage to stage
  auto sb = pr.template b_state<T>(group, n0, tid);
  const auto a_at = [&](int s) { return base + static_cast<uint32_t>(s * T::STAGE_BYTES); };
  const auto b_at = [&](int s) { return base + static_cast<uint32_t>(s * T::STAGE_BYTES + T::PARTS * T::A_BYTES); };

  float acc[T::MI][T::BN / 2];
#pragma unroll
  for (int mi = 0; mi < T::MI; ++mi)
#pragma unroll
    for (int i = 0; i < T::BN / 2; ++i) acc[mi][i] = 0.0f;
  // 3xTF32: each stage's products go to `part` (the stage's first wgmma overwrites it), which is added to acc with
  // FP32 adds once the stage is done. The tensor cores' own accumulation kept a running sum over all of K and lost about
  // half an FP32 unit per wgmma, always toward zero: an error growing with K, 3.5e-6 to 1.5e-5 relative on AlexNet's
  // convolutions (experiments/tuning-accuracy.md), where 3xTF32 on mma.sync gives 5e-7.
  float part[T::PARTS == 2 ? T::MI : 1][T::PARTS == 2 ? T::BN / 2 : 1];
  const auto promote = [&] {
    if constexpr (T::PARTS == 2) {
      wgmma_wait<0>();
      fence_operands(part);
#pragma unroll
      for (int mi = 0; mi < T::MI; ++mi)
#pragma unroll
        for (int i = 0; i < T::BN / 2; ++i) acc[mi][i] += part[mi][i];
    }
  };
#pragma unroll
  for (int s = 0; s < T::STAGES - 2; ++s) {
    if (s < nk) {
      pr.template load_a<T>(sa, a_at(s), kt0 + s, tid);
      pr.template load_b<T>(sb, b_at(s), kt0 + s, tid);
    }
    gemm::cp_async_commit();  // one group per stage, empty ones too
  }
  int s_next = T::STAGES - 2, s = 0;  // the buffers of stages i + STAGES - 2 and i (no modulo in the loop)
  // Stage 0's descriptors of this warpgroup's A pieces and of B (desc_sw128), made once
  const uint64_t da0 = desc_sw128(a_at(0) + static_cast<uint32_t>(wgi * T::MI * 64 * 128)), db0 = desc_sw128(b_at(0));
  for (int i = 0; i < nk; ++i) {
    gemm::cp_async_wait<T::STAGES - 3>();  // this thread's copies of stage i have landed
    fence_proxy_async();                   // ... visible to the tensor cores
    __syncthreads();                       // everyone's; and every warpgroup is done with stage i - 2
    const int next = i + T::STAGES - 2;
    if (next < nk) {
      pr.template load_a<T>(sa, a_at(s_next), kt0 + next, tid);
      pr.template load_b<T>(sb, b_at(s_next), kt0 + next, tid);
    }
    gemm::cp_async_commit();
    if (++s_next == T::STAGES) s_next = 0;
    // Stage s's descriptors: stage 0's plus the stage's offset in the address field, then each k step's 32 bytes and
    // each piece's 64 rows (every address of the pipeline is under 2^18, so no sum carries out of the field).
    const uint64_t da = da0 + static_cast<uint64_t>(s) * (T::STAGE_BYTES >> 4), db = db0 + static_cast<uint64_t>(s) * (T::STAGE_BYTES >> 4);
    if constexpr (T::PARTS == 2) {
      if (i > 0) promote();  // stage i - 1's products, which ran under this iteration's barrier and loads
      fence_operands(part);
    } else {
      fence_operands(acc);
    }
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < T::BK / 8; ++kk)
#pragma unroll
      for (int mi = 0; mi < T::MI; ++mi) {
        const uint64_t ahi = da + (mi * 64 * 128 + kk * 32) / 16, bhi = db + kk * 32 / 16;
        if constexpr (T::PARTS == 2) {  // the lo tiles follow their hi tiles; the small terms first
          mma<T>(part[mi], ahi + T::A_BYTES / 16, bhi, kk > 0);
          mma<T>(part[mi], ahi, bhi + T::B_BYTES / 16);
          mma<T>(part[mi], ahi, bhi);
        } else {
          mma<T>(acc[mi], ahi, bhi);
        }
      }
    wgmma_commit();
    if constexpr (T::PARTS == 1) {
      wgmma_wait<1>();
      fence_operands(acc);
    }
    if (++s == T::STAGES) s = 0;
  }
  if constexpr (T::PARTS == 2) {
    if (nk > 0) promote();
  } else {
    wgmma_wait<0>();
  }
  fence_operands(acc);
  gemm::cp_async_wait<0>();
  // D of m64nN: warp w of the warpgroup holds rows 16 w + g and 16 w + g + 8; register 4 j + q is column
  // 8 j + 2 t + (q & 1) of the first (q < 2) or the second row.
  const int g = lane / 4, t = lane % 4;
  if constexpr (T::CLUSTER > 0) {
    if (pr.splits > 1) {  // the same in every block of the cluster
      float* tile = reinterpret_cast<float*>(wg_smem + (base - gemm::smem_u32(wg_smem)));
      cluster_reduce<T>(pr, acc, tile, group, m0, n0, wgi * T::MI * 64 + (warp % 4) * 16 + g, 2 * t, tid);
      return;
    }
  }
  if constexpr (requires { pr.template store_tile<T>(acc, 0, 0, 0, 0); }) {
    pr.template store_tile<T>(acc, group, split, m0 + wgi * T::MI * 64 + (warp % 4) * 16 + g, n0 + 2 * t);
  } else {
#pragma unroll
    for (int mi = 0; mi < T::MI; ++mi) {
      const int r0 = m0 + (wgi * T::MI + mi) * 64 + (warp % 4) * 16 + g;
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int j = 0; j < T::BN / 8; ++j) {
          pr.store(group, split, r0 + 8 * h, n0 + 8 * j + 2 * t, acc[mi][4 * j + 2 * h]);
          pr.store(group, split, r0 + 8 * h, n0 + 8 * j + 2 * t + 1, acc[mi][4 * j + 2 * h + 1]);
        }
    }
  }
#endif
}

// Whether this build and the present device can run wgmma_kernel: a compute capability 9.0 GPU and the kernel's
// translation unit built for sm_90a (its image then reports PTX version 90; anything else is the empty stub).
template <class Kernel>
bool wgmma_image_ok(Kernel kernel) {
  int dev = 0, major = 0, minor = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) { (void)cudaGetLastError(); return false; }
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  if (major != 9 || minor != 0) return false;
  cudaFuncAttributes attr{};
  if (cudaFuncGetAttributes(&attr, kernel) != cudaSuccess) { (void)cudaGetLastError(); return false; }
  return attr.ptxVersion >= 90;
}

// The helpers below for any mainloop kernel of a WgTile T (this one, or gemm_wgmma_tma.cuh's), then for this one.
template <class T, auto Kernel>
const Occupancy& tile_occupancy() {
  static const Occupancy occ = kernel_occupancy(Kernel, T::THREADS, T::SMEM_BYTES);
  return occ;
}

// How many ways to split K for `blocks` tiles of k_tiles stages: through clusters where T::CLUSTER > 0
// (gemm::cluster_splits; how many clusters of each size fit is asked once per size), else through a workspace.
template <class T, auto Kernel>
int tile_splits(long long blocks, int k_tiles) {
  const Occupancy& occ = tile_occupancy<T, Kernel>();  // also sets the shared-memory limit
  if constexpr (T::CLUSTER > 0) {
    return gemm::cluster_splits(occ, T::CLUSTER, blocks, k_tiles, [](int size) {
      return gemm::cached_active_clusters<Kernel, T::CLUSTER>(T::THREADS, T::SMEM_BYTES, size);
    });
  } else {
    return gemm::choose_splits(blocks, k_tiles, occ);
  }
}

// grid: x over M tiles (up to 2^31 - 1), y over N tiles, z over groups x splits (a tile's splits consecutive in z: one
// cluster where T::CLUSTER > 0).
template <class T, auto Kernel, class Problem>
void launch_tile(const Problem& pr, long long m, int n, int groups, cudaStream_t s) {
  (void)tile_occupancy<T, Kernel>();
  const dim3 grid(static_cast<unsigned>((m + T::BM - 1) / T::BM), static_cast<unsigned>((n + T::BN - 1) / T::BN), groups * pr.splits);
  if (T::CLUSTER > 0 && pr.splits > 1) {
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t cfg = gemm::cluster_config(grid, T::THREADS, T::SMEM_BYTES, pr.splits, s, attr);
    CUDA_CHECK(cudaLaunchKernelEx(&cfg, Kernel, pr));
    return;
  }
  Kernel<<<grid, T::THREADS, T::SMEM_BYTES, s>>>(pr);
  CUDA_CHECK_LAUNCH();
}

template <class T, class Problem>
const Occupancy& wgmma_occupancy() { return tile_occupancy<T, wgmma_kernel<T, Problem>>(); }
template <class T, class Problem>
int wgmma_splits(long long blocks, int k_tiles) { return tile_splits<T, wgmma_kernel<T, Problem>>(blocks, k_tiles); }
template <class T, class Problem>
void launch_wgmma(const Problem& pr, long long m, int n, int groups, cudaStream_t s) {
  launch_tile<T, wgmma_kernel<T, Problem>>(pr, m, n, groups, s);
}

}  // namespace bs::cuda::wg
