// What the fully connected weight streams on mma.sync share: fc v17 (16-bit, half/fc_stream_half.cu) and fc v20 (FP32,
// 3xTF32, engine/fc_stream_tf32.cu). A block of warps takes 8 NT outputs; its warps split K into chunks; the images are
// the mma's m (16 a pass), the outputs its n. Where a layer has fewer tiles of outputs than the GPU has multiprocessors
// (AlexNet's fc8: 125 tiles of 8 of its 1,000 outputs), K is split further over the `splits` blocks of a thread-block
// cluster (grid z = rank): the cluster's warps take the chunks in turn as one block's would, and the blocks' sums meet
// in distributed shared memory (sum_cluster), so the layer streams its weights from splits times as many warps. Tiles of
// 8 outputs split where they are too few; v20 also splits 32-output tiles 2 ways where it would take 16-output ones (its
// FP32 images read half as often). The split runs in an instantiation of its own (SPLIT): the others keep a compile-time
// warp stride (a run-time one made fc6 and fc7 1-5 % slower).
#pragma once
#include <cuda_runtime.h>

#include <cooperative_groups.h>

#include <algorithm>

#include "kernels/cuda/engine/gemm_launch.cuh"

namespace bs::cuda::stream_mma {

constexpr int kMaxSplits = 8;  // a portable cluster

// Outputs a block, in tiles of 8: as many as still give every SM a block (4 tiles for 4,096 outputs on 132 SMs would
// leave 4 idle: 2).
inline int tiles_for(int outputs, int sms) {
  for (int nt : {4, 2})
    if ((outputs + 8 * nt - 1) / (8 * nt) >= sms) return nt;
  return 1;
}

// A warp's K loop over chunks c0 = warp, warp + step, ... (warp: its place among the cluster's warps) with two register
// stages: one stage's loads are issued before the other stage's products run. load(stage, chunk) must give zeros for
// chunks past the end (their products add nothing); multiply(stage) adds a stage's products.
template <class Stage, class Load, class Multiply>
__device__ __forceinline__ void two_stages(int warp, int chunks, int step, Load&& load, Multiply&& multiply) {
  Stage s0, s1;
  load(s0, warp);
  for (int c0 = warp; c0 < chunks; c0 += 2 * step) {
    load(s1, c0 + step);
    multiply(s0);
    if (c0 + step >= chunks) break;
    load(s0, c0 + 2 * step);
    multiply(s1);
  }
}

// The same K loop where every warp has at most G chunks (chunks <= G x step: the same test in every warp of the grid), as
// in a split layer whose warps' share is a few chunks (AlexNet's fc8 in 16 bits: 64 chunks over a cluster's 16 warps):
// every chunk's loads issued first, then the products of the warp's real chunks in two_stages' order (the same sums to
// the bit). two_stages there waits out a load's latency once for each pair of chunks. Returns false, doing nothing, where
// some warp has more.
template <int G, class Stage, class Load, class Multiply>
__device__ __forceinline__ bool all_chunks_first(int warp, int chunks, int step, Load&& load, Multiply&& multiply) {
  if (chunks > G * step) return false;
  Stage st[G];
#pragma unroll
  for (int i = 0; i < G; ++i) load(st[i], warp + i * step);
#pragma unroll
  for (int i = 0; i < G; ++i)
    if (warp + i * step < chunks) multiply(st[i]);
  return true;
}

// A warp's m16n8 accumulator tiles into partial[output][image] (its 8 NT outputs, 16 images): lane (g, t) holds images
// g and g + 8 of outputs 2 t and 2 t + 1 of each tile.
template <int NT, class Partial>
__device__ __forceinline__ void store_tiles(Partial& partial, const float (&acc)[NT][4], int g, int t) {
#pragma unroll
  for (int j = 0; j < NT; ++j) {
    partial[8 * j + 2 * t][g] = acc[j][0];
    partial[8 * j + 2 * t + 1][g] = acc[j][1];
    partial[8 * j + 2 * t][g + 8] = acc[j][2];
    partial[8 * j + 2 * t + 1][g + 8] = acc[j][3];
  }
}

// The block's sum over its WARPS warps' partial tiles (partial[warp][output][image]), the bias added: each output
// o0 + col < outputs of each image img < nb goes to store(img, o, v). The block's WARPS x 32 threads share the pairs.
template <int NT, int IMAGES, int WARPS, class Partial, class Store>
__device__ __forceinline__ void sum_warps(const Partial& partial, int o0, int nb, int outputs, const float* bias, Store&& store) {
  for (int i = threadIdx.x; i < NT * 8 * IMAGES; i += WARPS * 32) {
    const int col = i / IMAGES, img = i % IMAGES, o = o0 + col;
    if (img >= nb || o >= outputs) continue;
    float v = 0.0f;
#pragma unroll
    for (int q = 0; q < WARPS; ++q) v += partial[q][col][img];
    if (bias) v += bias[o];
    store(img, o, v);
  }
}

// The cluster's sum (splits >= 2 blocks, rank = blockIdx.z): each block first adds its warps' partial tiles in warp order
// into block_sum[output][image] in its own shared memory; after a cluster barrier each block takes 1/splits of the
// pairs and adds the blocks' sums in rank order (the result does not depend on which block finishes first), the bias
// added, to store(img, o, v). No block leaves while another may still read its memory.
template <int NT, int IMAGES, int WARPS, class Partial, class Store>
__device__ __forceinline__ void sum_cluster(const Partial& partial, float* block_sum, int splits, int o0, int nb, int outputs,
                                            const float* bias, Store&& store) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int PAIRS = NT * 8 * IMAGES, THREADS = WARPS * 32;
  static_assert((PAIRS + 1) / 2 <= THREADS, "a block's share of the pairs (splits >= 2) is at most a pair a thread");
  for (int i = threadIdx.x; i < PAIRS; i += THREADS) {
    const int col = i / IMAGES, img = i % IMAGES;
    float v = 0.0f;
#pragma unroll
    for (int q = 0; q < WARPS; ++q) v += partial[q][col][img];
    block_sum[i] = v;
  }
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = static_cast<int>(cluster.block_rank());
  const int per = (PAIRS + splits - 1) / splits, i = rank * per + static_cast<int>(threadIdx.x);
  const bool mine = static_cast<int>(threadIdx.x) < per && i < PAIRS;
  const int col = i / IMAGES, img = i % IMAGES, o = o0 + col;
  // cluster.sync() in its two halves, the bias loaded between them: the wait's acquire invalidates L1, and loaded after
  // it the bias was one more round trip to the L2 (gemm_engine.cuh's quad_pre does the same for the convolutions).
  asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
  const float b = mine && bias && img < nb && o < outputs ? bias[o] : 0.0f;
  asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");  // every block's sums are visible to the cluster
  float v = 0.0f;
  if (mine) {
    float part[kMaxSplits];  // every block's value in flight at once (distributed shared memory is a few hundred cycles away)
#pragma unroll
    for (int r = 0; r < kMaxSplits; ++r)
      if (r < splits) part[r] = *cluster.map_shared_rank(block_sum + i, r);
    v = part[0];
#pragma unroll
    for (int r = 1; r < kMaxSplits; ++r)
      if (r < splits) v += part[r];
  }
  // Done reading the cluster's memory: arrive without a fence (nothing written below is for the others), wait before
  // leaving or reusing block_sum.
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
  if (mine && img < nb && o < outputs) store(img, o, bias ? v + b : v);
  asm volatile("barrier.cluster.wait.aligned;\n" ::: "memory");
#else
  (void)partial, (void)block_sum, (void)splits, (void)o0, (void)nb, (void)outputs, (void)bias, (void)store;
  __trap();  // launched in clusters only where launch_split found an image built for them
#endif
}

// The split kernel Split on `tiles` x splits blocks in clusters of splits along z, its last argument `splits`, where the
// tiles leave multiprocessors without a block: as many splits as give every multiprocessor one (gemm::cluster_splits_upto:
// at most kMaxSplits, at least 2 register stages a warp, every cluster in the first wave), on a device and an image of
// the kernel that launch clusters. AlexNet's fc8 (125 tiles on 132 multiprocessors) thus splits 2 ways; forced to 3, 4
// and 8 it was slower (experiments/batch1-latency.md). Returns false, launching nothing, where it does not split.
template <auto Split, class... Args>
bool launch_split(int tiles, int sms, int threads, int stage_rounds, cudaStream_t s, Args... args) {
  static const bool clusters = gemm::cluster_image_ok(reinterpret_cast<const void*>(Split));
  if (tiles >= sms || !clusters) return false;
  const int splits = gemm::cluster_splits_upto((sms + tiles - 1) / tiles, kMaxSplits, tiles, stage_rounds,
                                               [&](int size) { return gemm::cached_active_clusters<Split, kMaxSplits>(threads, 0, size); });
  if (splits < 2) return false;
  cudaLaunchAttribute attr;
  const cudaLaunchConfig_t cfg = gemm::cluster_config(dim3(static_cast<unsigned>(tiles), 1, static_cast<unsigned>(splits)), threads, 0, splits, s, attr);
  CUDA_CHECK(cudaLaunchKernelEx(&cfg, Split, args..., splits));
  return true;
}

}  // namespace bs::cuda::stream_mma
