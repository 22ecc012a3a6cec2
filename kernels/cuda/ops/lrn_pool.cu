// Pooling and LRN, at their bandwidth floors (each input read once from DRAM, each output written once), and
// LRN with the pooling that follows in one kernel.
//
// The first versions ran one thread per output with 64-bit division and modulo to find its (image, channel,
// pixel) and powf for LRN's power: at AlexNet batch 1024 LRN took 5.2 ms against a floor of ~1.3 ms (norm1 +
// norm2: 3.9 GB read and written at 3 TB/s). Now the grid says where a thread is (x: pixels, y: channel, z:
// images), neighbouring channels' blocks run side by side so LRN's re-reads of channels c +- 2 hit L2, and
// the power is exp2(-beta * log2(x)).
//
// LRN walks channels (lrn_walk_kernel, window sizes 3-9): one block per (image, chunk of 32 channels), threads
// over the plane's pixels; each thread keeps its pixels' last `size` channel values in registers, so every value
// is read once (plus the chunk's halo) and the window sum is summed afresh each step (no running subtraction,
// whose rounding would drift). With pooling after it, each channel's LRN plane goes to shared memory (two
// buffers, one barrier per channel) and is pooled from there: norm1 + pool1 of AlexNet read 1.19 GB and write
// 0.29 GB at batch 1024, where LRN then pooling read 2.4 GB and write 1.5 GB. A first fused version, one block per
// (channel, image) reading its five neighbouring planes through L2, ran 3.7 ms for norm1 + norm2 at batch 1024
// (H100) against a floor of ~0.8 ms. Other window sizes (and planes too big for shared memory) take the one
// thread-per-output kernels.
#include <algorithm>
#include <cfloat>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/ops/ops.hpp"

namespace bs::cuda {
namespace {

constexpr int kLrnPoolSmemBytes = 48 * 1024;

// One output of the pool over an ih x iw plane (its window: PoolParams::window).
__device__ __forceinline__ float pool_window(const float* plane, int ih, int iw, const PoolParams& p, int oy, int ox) {
  const PoolWindow w = p.window(ih, iw, oy, ox);
  const bool is_max = p.kind == PoolKind::max;
  float acc = is_max ? -FLT_MAX : 0.0f;
  for (int y = w.y0; y < w.y1; ++y)
    for (int x = w.x0; x < w.x1; ++x) acc = is_max ? fmaxf(acc, plane[y * iw + x]) : acc + plane[y * iw + x];
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
// small planes: pool5's is 6x6.)
__global__ void pool_kernel(const float* __restrict__ in, int n, Shape is, PoolParams p, Shape os, float* __restrict__ out) {
  const int plane_out = os.h * os.w, i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= os.c * plane_out) return;
  const int c = i / plane_out, q = i - c * plane_out, oy = q / os.w, ox = q - oy * os.w;
  for (int b = blockIdx.y; b < n; b += gridDim.y) {
    const float* src = in + (static_cast<long long>(b) * is.c + c) * is.h * is.w;
    out[static_cast<long long>(b) * os.c * plane_out + i] = pool_window(src, is.h, is.w, p, oy, ox);
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

constexpr int kLrnChunk = 32;  // channels per block of lrn_walk_kernel
constexpr int kTilePixels = 1024;  // LRN pixels per block at most (rows of the plane; with pooling, the rows its tile needs)

// W: the window (LRN size), PPT: pixels per thread, POOL: pool each channel's LRN rows (from shared memory).
// blockIdx: x channel chunk, y image, z row tile (tile_rows output rows each: pooled rows with POOL, else LRN
// rows). Row tiles keep blocks small enough for several per SM: a whole 55x55 plane per block took 123
// registers x 384 threads, one block per SM, and norm1 + pool1 stayed latency-bound at 1.9 ms (batch 1024).
template <int W, int PPT, bool POOL>
__global__ void __launch_bounds__(256) lrn_walk_kernel(const float* __restrict__ in, int n, Shape s, LrnParams p, PoolParams pp,
                                                       Shape os, int tile_rows, float* __restrict__ out) {
  extern __shared__ float lrn_rows[];  // POOL: [2][rows this tile needs * W]
  constexpr int HALF = W / 2;
  const int plane = s.h * s.w, plane_out = os.h * os.w;
  const int c0 = blockIdx.x * kLrnChunk, nc = min(s.c, c0 + kLrnChunk) - c0;
  int r0, r1, oy0 = 0, oy1 = 0;  // LRN rows [r0, r1); pooled rows [oy0, oy1)
  if constexpr (POOL) {
    oy0 = blockIdx.z * tile_rows;
    oy1 = min(os.h, oy0 + tile_rows);
    r0 = max(0, oy0 * pp.sh - pp.ph);
    r1 = min(s.h, (oy1 - 1) * pp.sh - pp.ph + pp.kh);
  } else {
    r0 = blockIdx.z * tile_rows;
    r1 = min(s.h, r0 + tile_rows);
  }
  const int npix = (r1 - r0) * s.w;  // pixels of this tile, from pixel r0 * W of the plane on
  const int tile_plane = blockDim.x * PPT;  // shared-memory stride of one buffer (>= npix)
  const float scale = p.alpha / p.size;
  bool valid[PPT];  // this thread's pixels inside the tile (the same for every channel)
#pragma unroll
  for (int i = 0; i < PPT; ++i) valid[i] = threadIdx.x + i * blockDim.x < npix;
  for (int b = blockIdx.y; b < n; b += gridDim.y) {
    const float* img = in + static_cast<long long>(b) * s.c * plane + r0 * s.w + threadIdx.x;
    auto load = [&](int ch, int i) {  // channel ch of pixel i, 0 outside the channels or the tile
      return (ch >= 0 && ch < s.c && valid[i]) ? __ldg(img + ch * plane + i * blockDim.x) : 0.0f;
    };
    // ring[i][slot]: channel j of pixel i sits in slot (j - c0 + HALF) % W
    float ring[PPT][W];
#pragma unroll
    for (int i = 0; i < PPT; ++i)
#pragma unroll
      for (int r = 0; r < W - 1; ++r) ring[i][r] = load(c0 - HALF + r, i);
    float next[PPT], after[PPT];  // channels c + HALF and c + HALF + 1: two steps of loads in flight
#pragma unroll
    for (int i = 0; i < PPT; ++i) {
      next[i] = load(c0 + HALF, i);
      after[i] = load(c0 + HALF + 1, i);
    }
    float* out_img = out + static_cast<long long>(b) * (POOL ? os.c * plane_out : s.c * plane);
    for (int t0 = 0; t0 < nc; t0 += W) {
#pragma unroll
      for (int u = 0; u < W; ++u) {
        const int t = t0 + u, c = c0 + t;
        if (t >= nc) break;
#pragma unroll
        for (int i = 0; i < PPT; ++i) {
          ring[i][(u + W - 1) % W] = next[i];  // channel c + HALF
          next[i] = after[i];
          after[i] = load(c + HALF + 2, i);  // in flight while this step and the next compute
        }
#pragma unroll
        for (int i = 0; i < PPT; ++i) {
          float sum = 0.0f;
#pragma unroll
          for (int r = 0; r < W; ++r) sum = fmaf(ring[i][r], ring[i][r], sum);
          // __log2f: absolute error ~2^-21.4, so the factor is off by ~2e-7 relative at most
          const float v = ring[i][(u + HALF) % W] * exp2f(-p.beta * __log2f(p.k + scale * sum));
          if (valid[i]) {
            const int q = threadIdx.x + i * blockDim.x;
            if constexpr (POOL) lrn_rows[(t & 1) * tile_plane + q] = v;
            else out_img[c * plane + r0 * s.w + q] = v;
          }
        }
        if constexpr (POOL) {
          __syncthreads();  // the rows are complete; the other buffer's readers (step t - 1) are done with it
          const float* lp = lrn_rows + (t & 1) * tile_plane - r0 * s.w;  // indexed by (y, x) of the plane
          float* dst = out_img + c * plane_out;
          for (int q = threadIdx.x; q < (oy1 - oy0) * os.w; q += blockDim.x) {
            const int oy = oy0 + q / os.w, ox = q - (q / os.w) * os.w;
            dst[oy * os.w + ox] = pool_window(lp, s.h, s.w, pp, oy, ox);
          }
        }
      }
    }
    if constexpr (POOL) __syncthreads();  // before the next image overwrites the rows
  }
}

// Launches the walk for window size W if it has an instantiation and the batch fills the GPU with channel
// chunks; false otherwise (the caller runs the one-thread-per-output kernels, which spread one image over
// every channel: at batch 1 the walk left norm1 with 3 blocks, 0.081 ms against 0.010).
template <int W>
bool launch_walk(const float* in, int n, Shape sh, const LrnParams& lp, const PoolParams* pp, Shape os, float* out, cudaStream_t st) {
  if (lp.size != W || sh.w > kTilePixels) return false;
  const long long chunks = (sh.c + kLrnChunk - 1) / kLrnChunk;
  if (chunks * n < sm_count()) return false;
  // rows per tile so that a tile's LRN rows stay within kTilePixels
  const int max_rows = kTilePixels / sh.w;
  int tile_rows, tiles, rows_needed;
  if (pp) {
    tile_rows = std::max(1, (max_rows - pp->kh) / pp->sh + 1);
    if (tile_rows > os.h) tile_rows = os.h;
    rows_needed = (tile_rows - 1) * pp->sh + pp->kh;
    tiles = (os.h + tile_rows - 1) / tile_rows;
  } else {
    tile_rows = std::min(sh.h, max_rows);
    rows_needed = tile_rows;
    tiles = (sh.h + tile_rows - 1) / tile_rows;
  }
  const int npix = std::min(rows_needed, sh.h) * sh.w;
  if (npix > kTilePixels) return false;
  const int ppt = npix <= 256 ? 1 : npix <= 512 ? 2 : 4;
  const int threads = std::min(256, ((npix + ppt - 1) / ppt + 31) / 32 * 32);
  const dim3 grid(static_cast<unsigned>(chunks), std::min(n, 65535), tiles);
  const PoolParams none{};
  if (pp) {
    const size_t smem = 2 * sizeof(float) * threads * ppt;
    if (ppt == 1) lrn_walk_kernel<W, 1, true><<<grid, threads, smem, st>>>(in, n, sh, lp, *pp, os, tile_rows, out);
    else if (ppt == 2) lrn_walk_kernel<W, 2, true><<<grid, threads, smem, st>>>(in, n, sh, lp, *pp, os, tile_rows, out);
    else lrn_walk_kernel<W, 4, true><<<grid, threads, smem, st>>>(in, n, sh, lp, *pp, os, tile_rows, out);
  } else {
    if (ppt == 1) lrn_walk_kernel<W, 1, false><<<grid, threads, 0, st>>>(in, n, sh, lp, none, sh, tile_rows, out);
    else if (ppt == 2) lrn_walk_kernel<W, 2, false><<<grid, threads, 0, st>>>(in, n, sh, lp, none, sh, tile_rows, out);
    else lrn_walk_kernel<W, 4, false><<<grid, threads, 0, st>>>(in, n, sh, lp, none, sh, tile_rows, out);
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
  pool_kernel<<<dim3(static_cast<unsigned>((per_image + 255) / 256), std::min(n, 65535)), 256, 0, s>>>(in, n, is, p, os, out);
  CUDA_CHECK_LAUNCH();
}

void lrn_forward(const float* in, int n, Shape sh, const LrnParams& p, float* out, cudaStream_t s) {
  if (launch_walk_any(in, n, sh, p, nullptr, sh, out, s)) return;
  lrn_kernel<<<plane_grid(sh.h * sh.w, sh.c, n), 256, 0, s>>>(in, n, sh, p, out);
  CUDA_CHECK_LAUNCH();
}

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
