// Pooling and LRN, at their bandwidth floors (each input read once from DRAM, each output written once), and
// LRN with the pooling that follows in one kernel.
//
// The first versions ran one thread per output with 64-bit division and modulo to find its (image, channel,
// pixel) and powf for LRN's power: at AlexNet batch 1024 LRN took 5.2 ms against a floor of ~1.3 ms (norm1 +
// norm2: 3.9 GB read and written at 3 TB/s). Now the grid says where a thread is (x: pixels, y: channel, z:
// images), neighbouring channels' blocks run side by side so LRN's re-reads of channels c +- 2 hit L2, and
// the power is exp2(-beta * log2(x)).
//
// LRN walks channels (lrn_walk_kernel, window sizes 3-9): one block per (image, chunk of up to 32 channels, tile of
// rows: walk_shape), threads over the tile's pixels; each thread keeps its pixels' last `size` channel values in
// registers, so every value is read once (plus the chunk's halo) and the window sum is summed afresh each step (no
// running subtraction, whose rounding would drift). With pooling after it, each channel's LRN plane goes to shared memory (two
// buffers, one barrier per channel) and is pooled from there: norm1 + pool1 of AlexNet read 1.19 GB and write
// 0.29 GB at batch 1024, where LRN then pooling read 2.4 GB and write 1.5 GB. A first fused version, one block per
// (channel, image) reading its five neighbouring planes through L2, ran 3.7 ms for norm1 + norm2 at batch 1024
// (H100) against a floor of ~0.8 ms. Other window sizes (and planes too big for shared memory) take the one
// thread-per-output kernels.
#include <algorithm>
#include <cfloat>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/engine/gemm_engine.cuh"
#include "kernels/cuda/ops/ops.hpp"
#include "kernels/cuda/ops/pool_gather.cuh"

namespace bs::cuda {
namespace {

constexpr int kLrnPoolSmemBytes = 48 * 1024;

// One output of the pool over an ih x iw plane (its window: PoolParams::window). GATHER: the window's loads issued
// together (pool_gather.cuh), else one at a time (the same values, in the same order).
template <bool GATHER = true>
__device__ __forceinline__ float pool_window(const float* plane, int ih, int iw, const PoolParams& p, int oy, int ox) {
  const PoolWindow w = p.window(ih, iw, oy, ox);
  const bool is_max = p.kind == PoolKind::max;
  float acc = is_max ? -FLT_MAX : 0.0f;
  for_window<float, GATHER>(p, w, [&](int y, int x) { return plane[y * iw + x]; }, [&](float v) { acc = is_max ? fmaxf(acc, v) : acc + v; });
  return is_max ? acc : acc / w.count;
}

// b = a * (k + alpha / size * sum of squares over the channel window)^-beta
__device__ __forceinline__ float lrn_at(const float* at_c, int c, int channels, long long plane, const LrnParams& p) {
  const int half = p.size / 2;
  float sum = 0.0f;
  for (int j = max(0, c - half); j <= min(channels - 1, c + half); ++j) {
    const float v = at_c[(j - c) * plane];
    sum = fmaf(v, v, sum);
  }
  return at_c[0] * exp2f(-p.beta * log2f(p.k + p.alpha / p.size * sum));
}

// x: (channel, output pixel) of one image, y: images. (Mapping channels to y left most of a block idle for
// small planes: pool5's is 6x6.) GATHER where the grid is one wave (pool_forward): there a thread's chain of loads
// is the kernel's time (AlexNet's pool5 at 1 image 2.5 -> 1.7 us); over many waves the loop's fewer instructions
// were faster (VGG-16's 2x2 pools at 64 images 2-4 % slower gathered, 13-16 % on a 3x3 grid).
template <bool GATHER>
__global__ void pool_kernel(const float* __restrict__ in, int n, Shape is, PoolParams p, Shape os, float* __restrict__ out) {
  const int plane_out = os.h * os.w, i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= os.c * plane_out) return;
  const int c = i / plane_out, q = i - c * plane_out, oy = q / os.w, ox = q - oy * os.w;
  for (int b = blockIdx.y; b < n; b += gridDim.y) {
    const float* src = in + (static_cast<long long>(b) * is.c + c) * is.h * is.w;
    out[static_cast<long long>(b) * os.c * plane_out + i] = pool_window<GATHER>(src, is.h, is.w, p, oy, ox);
  }
}

__global__ void lrn_kernel(const float* __restrict__ in, int n, Shape s, LrnParams p, float* __restrict__ out) {
  const long long plane = static_cast<long long>(s.h) * s.w;
  const int q = blockIdx.x * blockDim.x + threadIdx.x, c = blockIdx.y;
  if (q >= plane) return;
  for (int b = blockIdx.z; b < n; b += gridDim.z) {
    const long long at = (static_cast<long long>(b) * s.c + c) * plane + q;
    out[at] = lrn_at(in + at, c, s.c, plane, p);
  }
}

// blockIdx.z: a strip of strip_rows pooled rows (small batches: 96 channel planes are under one block per multiprocessor
// of the H100, and AlexNet's norm1 took 10 us at batch 1); the block computes the LRN rows its strip's windows read.
__global__ void lrn_pool_kernel(const float* __restrict__ in, int n, Shape s, LrnParams lp, PoolParams pp, Shape os, int strip_rows,
                                float* __restrict__ out) {
  extern __shared__ float lrn_plane[];  // (H, W) of one channel; rows [r0, r1) filled
  const int plane = s.h * s.w, plane_out = os.h * os.w, c = blockIdx.x;
  const int oy0 = blockIdx.z * strip_rows, oy1 = min(os.h, oy0 + strip_rows);
  const int r0 = max(0, oy0 * pp.sh - pp.ph), r1 = min(s.h, (oy1 - 1) * pp.sh - pp.ph + pp.kh);
  for (int b = blockIdx.y; b < n; b += gridDim.y) {
    const float* src = in + (static_cast<long long>(b) * s.c + c) * plane;
    for (int q = r0 * s.w + threadIdx.x; q < r1 * s.w; q += blockDim.x) lrn_plane[q] = lrn_at(src + q, c, s.c, plane, lp);
    __syncthreads();
    float* dst = out + (static_cast<long long>(b) * os.c + c) * plane_out;
    for (int q = oy0 * os.w + threadIdx.x; q < oy1 * os.w; q += blockDim.x) {
      const int oy = q / os.w, ox = q - oy * os.w;
      dst[q] = pool_window(lrn_plane, s.h, s.w, pp, oy, ox);
    }
    __syncthreads();  // the plane is rewritten for the next image
  }
}

constexpr int kLrnChunk = 32;  // channels per block of lrn_walk_kernel, at most (walk_shape)
constexpr int kTilePixels = 1024;  // LRN pixels per block at most (rows of the plane; with pooling, the rows its tile needs)
constexpr int kWalkStages = 4;  // channel steps of loads in flight per thread (cp.async into shared memory)
constexpr int kWalkMinBlocks = 4;  // with pooling: 64 registers (4 blocks of 256 threads an SM) rather than 80-110

// The flush-to-zero forms of the two special functions: the same MUFU instruction without the steps that scale a
// denormal argument (lg2) or a denormal result (ex2) into range, 7 of an LRN value's ~22 instructions. They give the
// same bits wherever neither occurs; lrn_walk_ftz_exact says when that is so for every input.
__device__ __forceinline__ float lg2_ftz(float x) {
  float r;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ float ex2_ftz(float x) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
// lg2's argument is k + alpha/size * (a sum of squares) >= k: normal when k is. ex2's argument is -beta * lg2(x), with
// lg2(x) in [-126, 128) for a normal x: its result is denormal only below -126, which needs beta > 126/128 or beta < -1.
bool lrn_walk_ftz_exact(const LrnParams& p) { return p.k >= FLT_MIN && p.beta <= 126.0f / 128.0f && p.beta >= -1.0f; }

// W: the window (LRN size), PPT: pixels per thread, POOL: pool each channel's LRN rows (from shared memory), STAGES:
// channel steps of loads issued ahead, MINB: blocks an SM (a register cap), FTZ: the flush-to-zero special functions.
// blockIdx: x (channel chunk, row tile) with the tile fastest, y image. A row tile has tile_rows output rows (pooled rows
// with POOL, else LRN rows). Row tiles keep blocks small enough for several per SM: a whole 55x55 plane per block took
// 123 registers x 384 threads, one block per SM, and norm1 + pool1 stayed latency-bound at 1.9 ms (batch 1024).
//
// Each thread's channel values arrive by 4-byte cp.async into its own slots of a STAGES-deep ring in shared memory,
// STAGES - 1 channel steps ahead of the step that reads them: only the thread that copied a value reads it, so no
// barrier guards the ring. The first form kept two steps of plain loads in registers and found each pooled output's
// window at every channel step: norm1 + pool1 and norm2 + pool2 moved 2.4 GB in 1.98 ms at batch 1024 (1.2 TB/s),
// issuing an instruction on 82 % of their cycles (ncu). Deeper loads alone made LRN + pooling slower; fewer
// instructions made it 1.8x faster (experiments/tuning-accuracy.md, "FP32 LRN + pooling at the issue rate"). The
// arithmetic of every value is unchanged, so the results are the same bits.
template <int W, int PPT, bool POOL, int STAGES, int MINB, bool FTZ>
__global__ void __launch_bounds__(256, MINB) lrn_walk_kernel(const float* __restrict__ in, int n, Shape s, LrnParams p, PoolParams pp,
                                                       Shape os, int tiles, int tile_rows, int chunk_ch, float* __restrict__ out) {
  extern __shared__ float walk_smem[];  // [STAGES][tile_plane] the loads; POOL: then [2][tile_plane] LRN rows
  constexpr int HALF = W / 2;
  const int plane = s.h * s.w, plane_out = os.h * os.w;
  const int chunk = blockIdx.x / tiles, tile = blockIdx.x - chunk * tiles;
  const int c0 = chunk * chunk_ch, nc = min(s.c, c0 + chunk_ch) - c0;
  int r0, r1, oy0 = 0, oy1 = 0;  // LRN rows [r0, r1); pooled rows [oy0, oy1)
  if constexpr (POOL) {
    oy0 = tile * tile_rows;
    oy1 = min(os.h, oy0 + tile_rows);
    r0 = max(0, oy0 * pp.sh - pp.ph);
    r1 = min(s.h, (oy1 - 1) * pp.sh - pp.ph + pp.kh);
  } else {
    r0 = tile * tile_rows;
    r1 = min(s.h, r0 + tile_rows);
  }
  const int npix = (r1 - r0) * s.w;  // pixels of this tile, from pixel r0 * W of the plane on
  const int tile_plane = blockDim.x * PPT;  // shared-memory stride of one buffer (>= npix)
  float* fifo = walk_smem + threadIdx.x;  // this thread's slot of stage 0, pixel 0
  float* lrn_rows = walk_smem + STAGES * tile_plane;
  const float scale = p.alpha / p.size;
  bool valid[PPT];  // this thread's pixels inside the tile (the same for every channel)
  int pix[PPT];  // their offsets from the thread's first pixel; 0 for pixels outside the tile (nothing is read there)
#pragma unroll
  for (int i = 0; i < PPT; ++i) {
    valid[i] = threadIdx.x + i * blockDim.x < npix;
    pix[i] = valid[i] ? i * blockDim.x : 0;
  }
  // Max pooling with windows of at most 3 x 3 and one output a thread: the thread's window, found once, as 3 rows (offsets
  // into the LRN rows) and 3 columns, a window clipped by the input's edge repeating its last row or column (a repeat
  // does not change a maximum). The first form found each output's window per channel (two integer divisions and the
  // clipping) in a loop over a window of any size: norm1 + pool1 issued instructions on 82 % of the cycles and read
  // 1.14 TB/s (ncu, batch 1024). Other poolings take the general loop.
  const int nout = (oy1 - oy0) * os.w;
  const bool fast = POOL && pp.kind == PoolKind::max && pp.kh <= 3 && pp.kw <= 3 && nout <= static_cast<int>(blockDim.x);
  int prow[3] = {0, 0, 0}, pcol[3] = {0, 0, 0}, pout = -1;
  bool full = false;  // a whole 3 x 3 window
  if (fast && static_cast<int>(threadIdx.x) < nout) {
    const int oy = oy0 + threadIdx.x / os.w, ox = threadIdx.x % os.w;
    const PoolWindow w = pp.window(s.h, s.w, oy, ox);
    full = w.y1 - w.y0 == 3 && w.x1 - w.x0 == 3;
#pragma unroll
    for (int j = 0; j < 3; ++j) {
      prow[j] = (min(w.y0 + j, w.y1 - 1) - r0) * s.w;
      pcol[j] = min(w.x0 + j, w.x1 - 1);
    }
    pout = oy * os.w + ox;
  }
  for (int b = blockIdx.y; b < n; b += gridDim.y) {
    const float* img = in + static_cast<long long>(b) * s.c * plane + r0 * s.w + threadIdx.x;
    auto load = [&](int ch, int i) {  // channel ch of pixel i, 0 outside the channels or the tile
      return (ch >= 0 && ch < s.c && valid[i]) ? __ldg(img + ch * plane + i * blockDim.x) : 0.0f;
    };
    // Step t reads channel c0 + t + HALF from stage t % STAGES (zeros past the channels). Steps past the chunk
    // commit empty groups, so the count of groups stays one per step and no copy is left behind the loop.
    auto stage_in = [&](int t) {
      const int ch = c0 + t + HALF;
      if (t < nc) {
        float* dst = fifo + (t % STAGES) * tile_plane;
        const float* src = img + min(ch, s.c - 1) * plane;  // an address inside the tensor even where nothing is read
        const bool live = ch < s.c;
#pragma unroll
        for (int i = 0; i < PPT; ++i) gemm::cp_async4_zfill(dst + i * blockDim.x, src + pix[i], live && valid[i]);
      }
      gemm::cp_async_commit();
    };
    // ring[i][slot]: channel j of pixel i sits in slot (j - c0 + HALF) % W
    float ring[PPT][W];
#pragma unroll
    for (int i = 0; i < PPT; ++i)
#pragma unroll
      for (int r = 0; r < W - 1; ++r) ring[i][r] = load(c0 - HALF + r, i);
#pragma unroll
    for (int t = 0; t < STAGES - 1; ++t) stage_in(t);
    float* out_img = out + static_cast<long long>(b) * (POOL ? os.c * plane_out : s.c * plane);
    for (int t0 = 0; t0 < nc; t0 += W) {
#pragma unroll
      for (int u = 0; u < W; ++u) {
        const int t = t0 + u, c = c0 + t;
        if (t >= nc) break;
        gemm::cp_async_wait<STAGES - 2>();  // step t's group (of the STAGES - 1 + t committed) has landed
        const float* src = fifo + (t % STAGES) * tile_plane;
#pragma unroll
        for (int i = 0; i < PPT; ++i) ring[i][(u + W - 1) % W] = src[i * blockDim.x];  // channel c + HALF
        stage_in(t + STAGES - 1);  // into the stage step t - 1 read, by this thread alone
        float* rows_t = lrn_rows + (t & 1) * tile_plane + threadIdx.x;
#pragma unroll
        for (int i = 0; i < PPT; ++i) {
          float sum = 0.0f;
#pragma unroll
          for (int r = 0; r < W; ++r) sum = fmaf(ring[i][r], ring[i][r], sum);
          // __log2f: absolute error ~2^-21.4, so the factor is off by ~2e-7 relative at most
          float f;
          if constexpr (FTZ) f = ex2_ftz(-p.beta * lg2_ftz(p.k + scale * sum));
          else f = exp2f(-p.beta * __log2f(p.k + scale * sum));
          const float v = ring[i][(u + HALF) % W] * f;
          if constexpr (POOL) rows_t[i * blockDim.x] = v;  // slots past the tile are never read: no test
          else if (valid[i]) out_img[c * plane + r0 * s.w + threadIdx.x + i * blockDim.x] = v;
        }
        if constexpr (POOL) {
          __syncthreads();  // the rows are complete; the other buffer's readers (step t - 1) are done with it
          const float* lp = lrn_rows + (t & 1) * tile_plane;  // indexed by (y - r0, x)
          float* dst = out_img + c * plane_out;
          if (fast) {
            if (pout >= 0) {
              float m = -FLT_MAX;
              if (full) {  // 3 row addresses, the columns as immediate offsets: 3 additions where the clipped form has 9
#pragma unroll
                for (int j = 0; j < 3; ++j) {
                  const float* r = lp + prow[j] + pcol[0];
                  m = fmaxf(fmaxf(fmaxf(m, r[0]), r[1]), r[2]);
                }
              } else {
#pragma unroll
                for (int j = 0; j < 3; ++j)
#pragma unroll
                  for (int k = 0; k < 3; ++k) m = fmaxf(m, lp[prow[j] + pcol[k]]);
              }
              dst[pout] = m;
            }
          } else {
            for (int q = threadIdx.x; q < nout; q += blockDim.x) {
              const int oy = oy0 + q / os.w, ox = q - (q / os.w) * os.w;
              dst[oy * os.w + ox] = pool_window(lp - r0 * s.w, s.h, s.w, pp, oy, ox);
            }
          }
        }
      }
    }
    gemm::cp_async_wait<0>();
    if constexpr (POOL) __syncthreads();  // before the next image overwrites the rows
  }
}

template <int W, int PPT, bool POOL, int STAGES, int MINB>
void launch_walk_kernel(dim3 grid, int threads, const float* in, int n, Shape sh, const LrnParams& lp, const PoolParams& pp, Shape os,
                        int tiles, int tile_rows, int chunk_ch, float* out, cudaStream_t st) {
  const size_t smem = sizeof(float) * threads * PPT * (STAGES + (POOL ? 2 : 0));
  // LRN alone reads and writes every value at 2.4 TB/s either way: it keeps one form (half the walk's code).
  auto* k = POOL && lrn_walk_ftz_exact(lp) ? lrn_walk_kernel<W, PPT, POOL, STAGES, MINB, POOL> : lrn_walk_kernel<W, PPT, POOL, STAGES, MINB, false>;
  if (smem > 48 * 1024) CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  k<<<grid, threads, smem, st>>>(in, n, sh, lp, pp, os, tiles, tile_rows, chunk_ch, out);
}

// The walk's launch shape, or ok false where it does not run (the caller runs the one-thread-per-output kernels, which
// spread one image over every channel): a window size without an instantiation, rows too wide, or too few blocks. With
// 32-channel chunks at batch 1 the walk left norm1 with 3 blocks, 0.081 ms against 0.010.
// LRN alone: chunks of 32 channels, where they number the multiprocessors.
// With pooling after it, the first of these with at least 1.5 blocks per multiprocessor: chunks of 32, 16, 8, then 4
// channels in the largest row tiles; then chunks of 4 in tiles of 4, then 2 pooled rows. Measured on the H200, AlexNet
// FP32 at 1-32 images (experiments/batch1-latency.md, "FP32 LRN + pooling in narrower chunks"): at 16 images norm1 +
// pool1 took 34.3 us in the strip kernel, 16.2 in chunks of 16; the rule picks the fastest of the 13 shapes measured or
// one within 0.5 us, but for norm2 at 32 images (chunks of 32 as before: 19.1 us, 16.5 in chunks of 16).
WalkShape walk_shape(int n, Shape sh, const LrnParams& lp, const PoolParams* pp, Shape os, int sms) {
  WalkShape w;
  if ((lp.size != 3 && lp.size != 5 && lp.size != 7 && lp.size != 9) || sh.w > kTilePixels) return w;
  // the shape with chunks of `chunk` channels and at most `rows` pooled rows a tile (0: as many as kTilePixels holds)
  const auto shape = [&](int chunk, int rows) {
    WalkShape t;
    t.chunk = chunk;
    t.chunks = (sh.c + chunk - 1) / chunk;
    const int max_rows = kTilePixels / sh.w;  // rows per tile so that a tile's LRN rows stay within kTilePixels
    int rows_needed;
    if (pp) {
      t.tile_rows = std::min(os.h, std::max(1, (max_rows - pp->kh) / pp->sh + 1));
      if (rows > 0) t.tile_rows = std::min(t.tile_rows, rows);
      rows_needed = (t.tile_rows - 1) * pp->sh + pp->kh;
      t.tiles = (os.h + t.tile_rows - 1) / t.tile_rows;
    } else {
      t.tile_rows = std::min(sh.h, max_rows);
      rows_needed = t.tile_rows;
      t.tiles = (sh.h + t.tile_rows - 1) / t.tile_rows;
    }
    t.blocks = t.chunks * t.tiles * n;
    const int npix = std::min(rows_needed, sh.h) * sh.w;
    if (npix > kTilePixels) return t;
    t.ppt = npix <= 256 ? 1 : npix <= 512 ? 2 : 4;
    t.threads = std::min(256, ((npix + t.ppt - 1) / t.ppt + 31) / 32 * 32);
    t.ok = true;
    return t;
  };
  if (!pp) {
    const WalkShape t = shape(kLrnChunk, 0);
    return t.chunks * n >= sms ? t : w;
  }
  const struct { int chunk, rows; } tries[] = {{kLrnChunk, 0}, {16, 0}, {8, 0}, {4, 0}, {4, 4}, {4, 2}};
  for (const auto& c : tries) {
    const WalkShape t = shape(c.chunk, c.rows);
    if (t.ok && 2 * t.blocks >= 3LL * sms) return t;
  }
  return w;
}

// Launches the walk for window size W where walk_shape says it runs; false otherwise.
template <int W, int STAGES = kWalkStages, int MINB = kWalkMinBlocks>
bool launch_walk(const float* in, int n, Shape sh, const LrnParams& lp, const PoolParams* pp, Shape os, float* out, cudaStream_t st) {
  if (lp.size != W) return false;
  const WalkShape w = walk_shape(n, sh, lp, pp, os, sm_count());
  if (!w.ok) return false;
  const int ppt = w.ppt, threads = w.threads, tiles = w.tiles, tile_rows = w.tile_rows, ch = w.chunk;
  const dim3 grid(static_cast<unsigned>(w.chunks * tiles), std::min(n, 65535));
  const PoolParams none{};
  const PoolParams& p = pp ? *pp : none;
  const Shape o = pp ? os : sh;
  if (pp) {
    if (ppt == 1) launch_walk_kernel<W, 1, true, STAGES, MINB>(grid, threads, in, n, sh, lp, p, o, tiles, tile_rows, ch, out, st);
    else if (ppt == 2) launch_walk_kernel<W, 2, true, STAGES, MINB>(grid, threads, in, n, sh, lp, p, o, tiles, tile_rows, ch, out, st);
    else launch_walk_kernel<W, 4, true, STAGES, MINB>(grid, threads, in, n, sh, lp, p, o, tiles, tile_rows, ch, out, st);
  } else {
    if (ppt == 1) launch_walk_kernel<W, 1, false, kWalkStages, 1>(grid, threads, in, n, sh, lp, p, o, tiles, tile_rows, ch, out, st);
    else if (ppt == 2) launch_walk_kernel<W, 2, false, kWalkStages, 1>(grid, threads, in, n, sh, lp, p, o, tiles, tile_rows, ch, out, st);
    else launch_walk_kernel<W, 4, false, kWalkStages, 1>(grid, threads, in, n, sh, lp, p, o, tiles, tile_rows, ch, out, st);
  }
  CUDA_CHECK_LAUNCH();
  return true;
}

bool launch_walk_any(const float* in, int n, Shape sh, const LrnParams& lp, const PoolParams* pp, Shape os, float* out, cudaStream_t st) {
  return launch_walk<3>(in, n, sh, lp, pp, os, out, st) || launch_walk<5>(in, n, sh, lp, pp, os, out, st) ||
         launch_walk<7>(in, n, sh, lp, pp, os, out, st) || launch_walk<9>(in, n, sh, lp, pp, os, out, st);
}

dim3 plane_grid(int plane, int channels, int n) { return dim3((plane + 255) / 256, channels, std::min(n, 65535)); }

}  // namespace

void pool_forward(const float* in, int n, Shape is, const PoolParams& p, Shape os, float* out, cudaStream_t s) {
  const long long per_image = static_cast<long long>(os.c) * os.h * os.w;
  const dim3 grid(static_cast<unsigned>((per_image + 255) / 256), std::min(n, 65535));
  const bool one_wave = static_cast<long long>(grid.x) * grid.y * 256 <= 2048LL * sm_count();  // threads an SM holds
  if (one_wave) pool_kernel<true><<<grid, 256, 0, s>>>(in, n, is, p, os, out);
  else pool_kernel<false><<<grid, 256, 0, s>>>(in, n, is, p, os, out);
  CUDA_CHECK_LAUNCH();
}

void lrn_forward(const float* in, int n, Shape sh, const LrnParams& p, float* out, cudaStream_t s) {
  if (launch_walk_any(in, n, sh, p, nullptr, sh, out, s)) return;
  lrn_kernel<<<plane_grid(sh.h * sh.w, sh.c, n), 256, 0, s>>>(in, n, sh, p, out);
  CUDA_CHECK_LAUNCH();
}

WalkShape lrn_walk_shape(int n, Shape s, const LrnParams& lp, const PoolParams* pp, Shape os, int sms) { return walk_shape(n, s, lp, pp, os, sms); }
bool lrn_walk_runs(int n, Shape s, const LrnParams& lp, const PoolParams* pp, Shape os) { return walk_shape(n, s, lp, pp, os, sm_count()).ok; }

bool lrn_pool_fusable(Shape lrn_shape) {  // the per-output fallback keeps one whole plane in shared memory
  return static_cast<long long>(lrn_shape.h) * lrn_shape.w * sizeof(float) <= kLrnPoolSmemBytes && lrn_shape.c <= 65535;
}

void lrn_pool_forward(const float* in, int n, Shape sh, const LrnParams& lp, const PoolParams& pp, Shape os, float* out, cudaStream_t s) {
  if (launch_walk_any(in, n, sh, lp, &pp, os, out, s)) return;
  const size_t smem = sizeof(float) * sh.h * sh.w;
  // Strips of pooled rows where the channel planes alone would leave the GPU under four blocks per multiprocessor.
  const long long planes = static_cast<long long>(sh.c) * std::min(n, 65535);
  const int strips = static_cast<int>(std::clamp<long long>(4LL * sm_count() / planes, 1, std::min(os.h, 65535)));
  const int strip_rows = (os.h + strips - 1) / strips;
  lrn_pool_kernel<<<dim3(sh.c, std::min(n, 65535), (os.h + strip_rows - 1) / strip_rows), 256, smem, s>>>(in, n, sh, lp, pp, os, strip_rows,
                                                                                                        out);
  CUDA_CHECK_LAUNCH();
}

}  // namespace bs::cuda
