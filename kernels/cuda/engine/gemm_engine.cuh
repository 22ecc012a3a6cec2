// The GEMM engine: one family of kernels for every convolution and fully connected variant from v12 on (the
// CUTLASS habit: a GEMM is a tile shape, a pipeline, a math policy, two operand iterators and an epilogue).
//
//   C (M x N) = A (M x K) * B (K x N), per group z, with the K loop optionally split across blocks (split-K).
//   The splits' partial sums go either to a workspace that a second kernel reduces, or (a tile with CLUSTER,
//   Hopper) stay in the shared memory of one thread-block cluster: the splits of a tile are the blocks of a
//   cluster, and each block sums its share of the tile over every block's shared memory (distributed shared
//   memory) and stores it through the epilogue. No workspace, no second kernel, no partial sums in DRAM: what a
//   batch of one image needs, where every layer is a few small tiles split many ways.
//
// Template parameters, each a small type:
//   Tile     block tile BM x BN x BK, a grid of WARPS_M x WARPS_N warps (warp tile WM x WN), STAGES cp.async
//            stages through shared memory, MIN_BLOCKS for __launch_bounds__.
//   Math     how a warp turns a shared-memory stage into products (gemm_math.cuh): FmaMath (FP32 FFMA, 8x8
//            outputs per thread for a 32x64 warp tile), MmaTf32Math<3> (3xTF32 on the tensor cores, FP32
//            accuracy), MmaTf32Math<1> (one TF32 product: a reduced precision, for the precision modes); every
//            kPromoteEvery stages the kernel calls Math::promote (the tensor cores' partial sums into FP32).
//   Problem  what the GEMM is (conv_gemm.cu, fc_gemm.cu): it makes the A and B tile loaders for a block
//            and stores C through its epilogue (bias, activation, split-K partial sums).
//
// Shared memory holds each stage as A[BK][BM + 8] and B[BK][BN + 8]: k-major rows, so that both operands
// arrive by cp.async in row pieces, and padded by 8 floats so that the tensor-core fragment loads (lane
// (g, t) reads row t, column g) fall in 32 different banks. The loop is the usual multistage one: wait for
// the oldest stage, one barrier, issue the copy of the stage STAGES-1 ahead into the buffer every warp has
// just finished with, then compute.
#pragma once
#include <cuda_runtime.h>

#include <cooperative_groups.h>

#include <cstdint>
#include <type_traits>

#include "kernels/cuda/engine/timeline.hpp"

#ifdef BS_TIMELINE
// The probe build's record buffer of this translation unit (timeline.hpp).
namespace {
struct TlRec {
  unsigned long long g0, g3;  // %globaltimer at entry and exit (ns)
  long long c1, c2, c3;       // clock64 after the set-up, after the K loop, at exit, from entry
  long long e[4];             // the cluster reduction's steps: tile staged, cluster barrier, sums read, stores issued
  unsigned sm, bx, by, bz, gx, gy, gz, nk, splits, bm, bn, cl;
};
constexpr unsigned kTlCap = 1u << 19;
__device__ TlRec tl_recs[kTlCap];
__device__ unsigned tl_count;
void tl_dump(std::FILE* f) {
  unsigned n = 0;
  if (cudaMemcpyFromSymbol(&n, tl_count, sizeof n) != cudaSuccess) return;
  n = n < kTlCap ? n : kTlCap;
  std::vector<TlRec> r(n);
  if (n && cudaMemcpyFromSymbol(r.data(), tl_recs, n * sizeof(TlRec)) != cudaSuccess) return;
  for (const TlRec& x : r)
    std::fprintf(f, "%llu,%llu,%lld,%lld,%lld,%u,%u,%u,%u,%u,%u,%u,%u,%u,%u,%u,%u,%lld,%lld,%lld,%lld\n", x.g0, x.g3, x.c1, x.c2, x.c3,
                 x.sm, x.bx, x.by, x.bz, x.gx, x.gy, x.gz, x.nk, x.splits, x.bm, x.bn, x.cl, x.e[0], x.e[1], x.e[2], x.e[3]);
  const unsigned zero = 0;
  cudaMemcpyToSymbol(tl_count, &zero, sizeof zero);
}
const int tl_registered = bs::cuda::timeline::add(&tl_dump);
__device__ __forceinline__ unsigned long long tl_gtime() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ unsigned tl_smid() {
  unsigned s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}
}  // namespace
#define BS_TL_BEGIN                                                   \
  const unsigned long long tl_g0 = threadIdx.x == 0 ? tl_gtime() : 0; \
  const long long tl_c0 = clock64();                                  \
  long long tl_e[4] = {0, 0, 0, 0};
#define BS_TL_MARK(v) const long long v = clock64() - tl_c0;
#define BS_TL_END(c1, c2, nk_, splits_)                                                                                      \
  if (threadIdx.x == 0) {                                                                                                  \
    const long long c3 = clock64() - tl_c0;                                                                                \
    const unsigned long long g3 = tl_gtime();                                                                              \
    const unsigned slot = atomicAdd(&tl_count, 1u);                                                                        \
    if (slot < kTlCap)                                                                                                     \
      tl_recs[slot] = TlRec{tl_g0, g3, c1, c2, c3, {tl_e[0], tl_e[1], tl_e[2], tl_e[3]}, tl_smid(), blockIdx.x, blockIdx.y, blockIdx.z, gridDim.x, gridDim.y,     \
                            gridDim.z, static_cast<unsigned>(nk_), static_cast<unsigned>(splits_), T::BM, T::BN, T::CLUSTER}; \
  }
#define BS_TL_STEP(i) \
  if (tl) tl[i] = clock64();
#define BS_TL_ARG , tl_e, tl_c0
#else
#define BS_TL_BEGIN
#define BS_TL_MARK(v)
#define BS_TL_END(c1, c2, nk_, splits_)
#define BS_TL_STEP(i)
#define BS_TL_ARG
#endif

namespace bs::cuda::gemm {

// ---- cp.async (sm_80+): 16-byte copies that skip L1 (operands reused across blocks stay in L2), and
// 4-byte copies through L1 with zero fill (src_size 0: nothing is read, zeros land), for gathered operands.
__device__ __forceinline__ uint32_t smem_u32(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }
__device__ __forceinline__ void cp_async16(float* dst, const float* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_u32(dst)), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_async4_zfill(float* dst, const float* src, bool ok) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_u32(dst)), "l"(src), "r"(ok ? 4 : 0) : "memory");
}
// BYTES = 4, 8 or 16 with zero fill; 16 bypasses L1.
template <int BYTES>
__device__ __forceinline__ void cp_async_zfill(float* dst, const float* src, bool ok) {
  if constexpr (BYTES == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(dst)), "l"(src), "r"(ok ? 16 : 0) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(smem_u32(dst)), "l"(src), "n"(BYTES), "r"(ok ? BYTES : 0)
                 : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

// A_ROW: A is held row-major, A[BM][BK + 4] (m-major: a row's k contiguous, so that a 16-byte copy brings 4
// consecutive k of one row; rows 36 words apart put the fragment reads (row g, k t) in 32 different banks).
// CLUSTER: the most ways K is split with the splits reduced in a thread-block cluster (at most 8, the portable
// cluster size; 0: split-K through a workspace and a reduction kernel).
// A_FRAGS: A arrives as its 3xTF32 parts, split once when the weights were prepared, in the order of the m16n8k8 A
// fragments (gemm_prep.hpp, prepare_tf32_fragments): per 8 k and 16 rows, the 32 lanes' four hi values, then their four
// lo values (256 floats, no padding): a lane's fragment is two 16-byte loads, each warp's in 32 different banks.
template <int BM_, int BN_, int BK_, int WARPS_M_, int WARPS_N_, int STAGES_, int MIN_BLOCKS_, bool A_ROW_ = false, int CLUSTER_ = 0,
          bool A_FRAGS_ = false>
struct Tile {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WARPS_M = WARPS_M_, WARPS_N = WARPS_N_;
  static constexpr int STAGES = STAGES_, MIN_BLOCKS = MIN_BLOCKS_, CLUSTER = CLUSTER_;
  static constexpr bool A_ROW = A_ROW_, A_FRAGS = A_FRAGS_;
  static_assert(!(A_ROW && A_FRAGS), "A's prepared fragments come k-major");
  static constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N, THREADS = 32 * WARPS_M * WARPS_N;
  static constexpr int SA = A_ROW ? BK + 4 : A_FRAGS ? 2 * BM : BM + 8, SB = BN + 8;  // floats per shared-memory row
  static constexpr int A_STAGE = (A_ROW ? BM : BK) * SA, B_STAGE = BK * SB;
  static constexpr int SMEM_BYTES = STAGES * (A_STAGE + B_STAGE) * static_cast<int>(sizeof(float));
  static_assert(BM % 32 == 0 && BN % 32 == 0 && BK % 8 == 0, "tiles come in multiples of 32 (rows) and 8 (k)");
  static_assert(STAGES >= 2, "a pipeline needs two stages");
  static_assert(CLUSTER >= 0 && CLUSTER <= 8, "a portable cluster holds at most 8 blocks");
  static_assert(CLUSTER == 0 || (BM * (BN + 4) * 4 <= SMEM_BYTES && BN % 4 == 0), "the cluster reduction stages the tile in the pipeline's memory");
};

// The split a problem's epilogue is given for the sums of every split (the cluster reduction): store the output.
constexpr int kSplitsReduced = -1;

// Padding the engine's dense operands are laid out with (so that no tile load needs a bounds check): K to a
// multiple of the largest BK, M and N columns to a multiple of the largest BM / BN.
constexpr int kPadK = 32, kPadMN = 128;
inline int pad_to(int x, int m) { return (x + m - 1) / m * m; }

// Loading a dense tile: element (k, c) of the operand at base[k * ld + c] with base at the tile's first
// column. The operand is padded (kPadK, kPadMN), so every 16-byte piece exists. Problems keep only `base` per
// thread; ld comes from the kernel's parameters.
template <class T, int COLS>
__device__ __forceinline__ void load_dense_tile(float* dst, int stride, const float* base, long long ld, int kt, int tid) {
  constexpr int V = COLS / 4, TOTAL = T::BK * V;
  static_assert(TOTAL % T::THREADS == 0, "every thread copies the same number of pieces");
  if constexpr (T::THREADS % V == 0) {
    // Every piece of a thread is in its own column, RSTEP rows below the one before: one source pointer a stage,
    // stepped by RSTEP * ld (the form that recomputed a 64-bit (kt * BK + r) * ld for each piece took 7
    // instructions a 16-byte copy in v49's K loop).
    constexpr int RSTEP = T::THREADS / V;
    const int r0 = tid / V, c = (tid % V) * 4;
    const float* src = base + (static_cast<long long>(kt) * T::BK + r0) * ld + c;
    float* d = dst + r0 * stride + c;
#pragma unroll
    for (int i = 0; i < TOTAL / T::THREADS; ++i, src += RSTEP * ld) cp_async16(d + i * RSTEP * stride, src);
  } else {
#pragma unroll
    for (int i = 0; i < TOTAL / T::THREADS; ++i) {
      const int idx = tid + i * T::THREADS, r = idx / V, c = (idx % V) * 4;
      cp_async16(dst + r * stride + c, base + (static_cast<long long>(kt) * T::BK + r) * ld + c);
    }
  }
}

// The A and B loaders of a problem whose operands are both dense and prepared k-major and padded: A (Kpad, m_pad)
// and B (Kpad, n_pad) (the fully connected layers: X^T and W^T). A problem derives from it and adds its epilogue.
struct DenseOperands {
  const float* xt;  // A (Kpad, m_pad)
  const float* wt;  // B (Kpad, n_pad)
  int m_pad, n_pad;
  template <class T>
  __device__ __forceinline__ const float* a_state(int, int m0, int) const { return xt + m0; }
  template <class T>
  __device__ __forceinline__ void load_a(const float* base, float* dst, int stride, int kt, int tid) const {
    load_dense_tile<T, T::BM>(dst, stride, base, m_pad, kt, tid);
  }
  template <class T>
  __device__ __forceinline__ const float* b_state(int, int n0, int) const { return wt + n0; }
  template <class T>
  __device__ __forceinline__ void load_b(const float* base, float* dst, int stride, int kt, int tid) const {
    load_dense_tile<T, T::BN>(dst, stride, base, n_pad, kt, tid);
  }
};

template <class Problem>
__host__ __device__ constexpr bool m_on_x() {
  if constexpr (requires { Problem::kMOnX; }) return Problem::kMOnX;
  else return false;
}
// A problem with setup<T>(extra, group, m0, tid) gets extra_smem<T>() bytes of shared memory after the stages,
// fills them at the block's start (a barrier follows) and returns its A loader state from there.
template <class T, class Problem>
__host__ __device__ constexpr int extra_smem() {
  if constexpr (requires { Problem::template extra_smem<T>(); }) return Problem::template extra_smem<T>();
  else return 0;
}
template <class T, class Problem>
__host__ __device__ constexpr int engine_smem_bytes() { return T::SMEM_BYTES + extra_smem<T, Problem>(); }

template <class Problem>
__host__ __device__ constexpr bool pair_epilogue() {
  if constexpr (requires { Problem::kPairs; }) return Problem::kPairs;
  else return false;
}

// What a quad's store reads besides the sums (its bias, a filter's factors), where the Problem says: quad_pre(group, m, n)
// returns it, and store4(group, m, n, sum, pre) uses it. The cluster reduction loads it for all of a thread's quads
// while the cluster's blocks wait for each other (cluster_sum_store), not after its barrier: the barrier's acquire
// invalidates L1, and each quad's loads, issued after the last quad's stores (which may alias them), were one round
// trip to the L2 a quad, most of the reduction's stores step at batch 1 (experiments/batch1-latency.md).
struct NoQuadPre {};
template <class Problem>
__device__ __forceinline__ auto quad_pre(const Problem& pr, int group, int m, int n) {
  if constexpr (requires { pr.quad_pre(group, m, n); }) return pr.quad_pre(group, m, n);
  else return NoQuadPre{};
}

// Columns n to n + 3 of row m of a split-K tile's reduced sums, stored as the output (split = kSplitsReduced) through
// the Problem's store4 (with what quad_pre loaded, where it has one), else its store2 (column pairs) where PAIRS, else
// its store.
template <bool PAIRS, class Problem, class Pre>
__device__ __forceinline__ void store_reduced_quad(const Problem& pr, int group, int m, int n, const float4& sum, const Pre& pre) {
  if constexpr (requires { pr.store4(group, m, n, sum, pre); }) {  // the problem stores a quad at once
    pr.store4(group, m, n, sum, pre);
  } else if constexpr (requires { pr.store4(group, m, n, sum); }) {
    pr.store4(group, m, n, sum);
  } else if constexpr (PAIRS) {
    pr.store2(group, kSplitsReduced, m, n, sum.x, sum.y);
    pr.store2(group, kSplitsReduced, m, n + 2, sum.z, sum.w);
  } else {
    pr.store(group, kSplitsReduced, m, n, sum.x);
    pr.store(group, kSplitsReduced, m, n + 1, sum.y);
    pr.store(group, kSplitsReduced, m, n + 2, sum.z);
    pr.store(group, kSplitsReduced, m, n + 3, sum.w);
  }
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// The second half of a split-K reduction in a thread-block cluster (the splits of a tile are the blocks of one cluster,
// rank = split), shared by both mainloops (this engine's cluster_reduce, gemm_wgmma.cuh's): every block has staged its
// BM x BN tile of partial sums in its own shared memory at `tile`, rows CS floats apart (CS a multiple of 4); after a
// cluster barrier each block sums 1/splits of the tile's quads (4 neighbouring columns of a row) over every block's
// memory, in rank order (the result does not depend on which block finishes first), and hands each sum to
// store(row, column, float4, pre) within the tile, pre being what pre(row, column) returned for that quad: called for
// every quad of the thread's share between the barrier's arrive and its wait, so that its loads are in flight while
// the blocks wait for each other.
// cluster_sum_store's reads, for its split count S (2..CLUSTER) known at compile time: each thread's quads i = q0 + tid +
// THREADS it below q1, every block's value of every one of them loaded before any is summed (the loads all in flight: a
// round trip to distributed shared memory is about a thousand cycles at batch 1, and a loop over the quads that summed
// each before loading the next made one trip a quad: experiments/batch1-latency.md, the per-block timeline), then
// summed in rank order, as before.
template <int BM, int BN, int CS, int THREADS, int CLUSTER, int ITERS, int S>
__device__ __forceinline__ void cluster_sums(cooperative_groups::cluster_group& cluster, const float* tile, int splits, int q0, int q1, int tid,
                                             float4 (&sums)[ITERS]) {
  if constexpr (S > CLUSTER) {
    (void)cluster, (void)tile, (void)splits, (void)q0, (void)q1, (void)tid, (void)sums;
    __trap();  // no launch has more splits than its cluster holds
  } else {
    if (splits != S) return cluster_sums<BM, BN, CS, THREADS, CLUSTER, ITERS, S + 1>(cluster, tile, splits, q0, q1, tid, sums);
    constexpr int QUADS = BM * BN / 4, ROW_QUADS = BN / 4, PER = (QUADS + S - 1) / S, N = (PER + THREADS - 1) / THREADS;
    static_assert(N <= ITERS, "a split's share fits the sums");
    float4 v[N][S];
#pragma unroll
    for (int it = 0; it < N; ++it) {
      const int i = q0 + tid + it * THREADS;
      if (i < q1) {
        const float4* mine = reinterpret_cast<const float4*>(tile + (i / ROW_QUADS) * CS + 4 * (i % ROW_QUADS));
#pragma unroll
        for (int q = 0; q < S; ++q) v[it][q] = *cluster.map_shared_rank(mine, q);
      }
    }
#pragma unroll
    for (int it = 0; it < N; ++it) {
      sums[it] = v[it][0];
#pragma unroll
      for (int q = 1; q < S; ++q) {
        sums[it].x += v[it][q].x;
        sums[it].y += v[it][q].y;
        sums[it].z += v[it][q].z;
        sums[it].w += v[it][q].w;
      }
    }
  }
}

template <int BM, int BN, int CS, int THREADS, int CLUSTER, class Pre, class Store>
__device__ __forceinline__ void cluster_sum_store(const float* tile, int splits, int tid, Pre&& pre, Store&& store, long long* tl = nullptr) {
  (void)tl;  // the probe build's step stamps (timeline.hpp)
  BS_TL_STEP(0)
  constexpr int QUADS = BM * BN / 4, ROW_QUADS = BN / 4;
  static_assert(CS % 4 == 0 && BN % 4 == 0, "every 4 columns from a multiple of 4 are one aligned float4");
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  using P = decltype(pre(0, 0));
  constexpr bool kPre = !std::is_same_v<P, NoQuadPre>;  // a pre that loads nothing keeps cluster.sync()
  if constexpr (!kPre) cluster.sync();  // every block's tile is staged and visible to the cluster
  const int rank = static_cast<int>(cluster.block_rank());
  // This block's share: at most ITERS quads a thread (splits >= 2), summed first, so that the block can tell the
  // cluster it is done reading before it stores.
  constexpr int ITERS = (QUADS / 2 + THREADS - 1) / THREADS;
  const int per = (QUADS + splits - 1) / splits, q0 = rank * per, q1 = min(QUADS, q0 + per);
  P pres[ITERS];
  if constexpr (kPre) {
    // cluster.sync() in its two halves: the arrive releases this block's staged tile to the cluster; what the stores
    // will read besides the sums is loaded before the wait (whose acquire invalidates L1), so that it arrives while
    // the blocks wait for each other.
    asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
#pragma unroll
    for (int it = 0; it < ITERS; ++it) {
      const int i = q0 + tid + it * THREADS;
      if (i < q1) pres[it] = pre(i / ROW_QUADS, 4 * (i % ROW_QUADS));
    }
    asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");  // every block's tile is staged and visible
  }
  BS_TL_STEP(1)
  float4 sums[ITERS];
  cluster_sums<BM, BN, CS, THREADS, CLUSTER, ITERS, 2>(cluster, tile, splits, q0, q1, tid, sums);
  // Done reading the cluster's memory (the values are in registers): arrive without a fence, which would wait for the
  // stores below; wait at the end, so that no block leaves (freeing its shared memory) while another still reads it.
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
  BS_TL_STEP(2)
#pragma unroll
  for (int it = 0; it < ITERS; ++it) {
    const int i = q0 + tid + it * THREADS;
    if (i >= q1) break;
    store(i / ROW_QUADS, 4 * (i % ROW_QUADS), sums[it], pres[it]);
  }
  BS_TL_STEP(3)
  asm volatile("barrier.cluster.wait.aligned;\n" ::: "memory");
}
#endif

// The cluster's split-K reduction (T::CLUSTER): each block stages its tile of partial sums in its own shared memory,
// then cluster_sum_store sums and stores its share.
template <class T, class Math, class Problem>
__device__ __forceinline__ void cluster_reduce(const Problem& pr, const typename Math::Acc& acc, float* tile, int group, int m0,
                                               int n0, int wm0, int wn0, int lane, int tid, long long* tl = nullptr, long long tl_c0 = 0) {
  (void)tl, (void)tl_c0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // CS: a multiple of 4 floats, so that every 4 columns from a multiple of 4 are one aligned float4.
  constexpr int CS = T::BN + 4;
  __syncthreads();  // every warp has left the last stage: the pipeline's memory becomes the tile
  if constexpr (pair_epilogue<Problem>())  // the maths a pair problem runs (MmaHalfMath) hand out pairs
    Math::for_each_pair(acc, wm0, wn0, lane, [&](int r, int c, float v0, float v1) { *reinterpret_cast<float2*>(tile + r * CS + c) = make_float2(v0, v1); });
  else
    Math::for_each(acc, wm0, wn0, lane, [&](int r, int c, float v) { tile[r * CS + c] = v; });
  cluster_sum_store<T::BM, T::BN, CS, T::THREADS, T::CLUSTER>(
      tile, pr.splits, tid, [&](int r, int c) { return quad_pre(pr, group, m0 + r, n0 + c); },
      [&](int r, int c, const float4& sum, const auto& pre) { store_reduced_quad<pair_epilogue<Problem>()>(pr, group, m0 + r, n0 + c, sum, pre); }, tl);
#ifdef BS_TIMELINE
  if (tl)
    for (int i = 0; i < 4; ++i) tl[i] -= tl_c0;
#endif
#else
  (void)pr, (void)acc, (void)tile, (void)group, (void)m0, (void)n0, (void)wm0, (void)wn0, (void)lane, (void)tid;
  __trap();  // launched only where cluster_launch_ok() (gemm_launch.cuh) found the image and the device able
#endif
}

// The engine's kernel. grid: x over N tiles, y over M tiles, z over groups x splits. A Problem provides
//   a_state<T>(group, m0, tid), b_state<T>(group, n0, tid)   per-thread loader state (small: a pointer, offsets)
//   load_a<T>(state, dst, stride, kt, tid), load_b<T>(...)    issue one stage's cp.async copies (the A state is the
//                                                              thread's own lvalue, called for kt0, kt0 + 1, ... in turn)
//   store(group, split, m, n, v)                               the epilogue for one element of C, or
//   store2(group, split, m, n, v0, v1)                         with kPairs: C(m, n) and C(m, n + 1) at once
//                                                              (the half-precision problems' half2 stores)
//   k_tiles, splits                                            K / BK (padded) and the split-K factor
//                                                              (split = kSplitsReduced: the output itself)
//   kMOnX (optional)                                           M tiles on grid.x (up to 2^31 - 1 of them; the
//                                                              half convolutions' M is images x pixels)
// Its other constants stay in the kernel's parameter space (__grid_constant__), not in registers.
template <class T, class Math, class Problem>
__global__ void __launch_bounds__(T::THREADS, T::MIN_BLOCKS) engine_kernel(const __grid_constant__ Problem pr) {
  BS_TL_BEGIN
  extern __shared__ float4 engine_smem[];
  float* As = reinterpret_cast<float*>(engine_smem);
  float* Bs = As + T::STAGES * T::A_STAGE;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int wm0 = (warp % T::WARPS_M) * T::WM, wn0 = (warp / T::WARPS_M) * T::WN;
  const int group = blockIdx.z / pr.splits, split = blockIdx.z % pr.splits;
  const int m0 = (m_on_x<Problem>() ? blockIdx.x : blockIdx.y) * T::BM, n0 = (m_on_x<Problem>() ? blockIdx.y : blockIdx.x) * T::BN;
  const int per = (pr.k_tiles + pr.splits - 1) / pr.splits;
  const int kt0 = split * per, nk = max(0, min(pr.k_tiles, kt0 + per) - kt0);
  auto sa = [&] {  // mutable: a loader may carry what it read ahead for its next stage (ConvHalfProblem's k-table entry)
    if constexpr (extra_smem<T, Problem>() > 0) {
      const auto st = pr.template setup<T>(Bs + T::STAGES * T::B_STAGE, group, m0, tid);
      __syncthreads();
      return st;
    } else {
      return pr.template a_state<T>(group, m0, tid);
    }
  }();
  const auto sb = pr.template b_state<T>(group, n0, tid);
  BS_TL_MARK(tl_c1)

  typename Math::Acc acc;
  Math::zero(acc);
#pragma unroll
  for (int s = 0; s < T::STAGES - 1; ++s) {
    if (s < nk) {
      pr.template load_a<T>(sa, As + s * T::A_STAGE, T::SA, kt0 + s, tid);
      pr.template load_b<T>(sb, Bs + s * T::B_STAGE, T::SB, kt0 + s, tid);
    }
    cp_async_commit();  // one group per stage, empty ones too, so that the wait counts stay uniform
  }
  for (int i = 0; i < nk; ++i) {
    cp_async_wait<T::STAGES - 2>();  // stage i has landed (for this thread's copies)
    __syncthreads();                 // ... and everyone's; everyone has also left stage i - 1
    const int next = i + T::STAGES - 1;
    if (next < nk) {
      const int s = next % T::STAGES;
      pr.template load_a<T>(sa, As + s * T::A_STAGE, T::SA, kt0 + next, tid);
      pr.template load_b<T>(sb, Bs + s * T::B_STAGE, T::SB, kt0 + next, tid);
    }
    cp_async_commit();
    const int s = i % T::STAGES;
    Math::stage(acc, As + s * T::A_STAGE, Bs + s * T::B_STAGE, wm0, wn0, lane);
    if constexpr (Math::kPromoteEvery > 0)
      if ((i + 1) % Math::kPromoteEvery == 0) Math::promote(acc);
  }
  cp_async_wait<0>();
  BS_TL_MARK(tl_c2)
  if constexpr (T::CLUSTER > 0)
    if (pr.splits > 1) {
      cluster_reduce<T, Math>(pr, acc, As, group, m0, n0, wm0, wn0, lane, tid BS_TL_ARG);
      BS_TL_END(tl_c1, tl_c2, nk, pr.splits)
      return;
    }
  if constexpr (pair_epilogue<Problem>())
    Math::for_each_pair(acc, wm0, wn0, lane, [&](int r, int c, float v0, float v1) { pr.store2(group, split, m0 + r, n0 + c, v0, v1); });
  else
    Math::for_each(acc, wm0, wn0, lane, [&](int r, int c, float v) { pr.store(group, split, m0 + r, n0 + c, v); });
  BS_TL_END(tl_c1, tl_c2, nk, pr.splits)
}

}  // namespace bs::cuda::gemm
