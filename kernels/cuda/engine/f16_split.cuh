// The input pass of the FP16-tensor-core versions (conv v51-v56, fc v18/v19; conv_wgmma_3xf16.cu): an FP32 (N, C, H, W)
// tensor becomes NHWC words of two FP16 channels each, every value first multiplied by a power of two s that puts its
// image's largest |x| in [2^14, 2^15) (one scale per image: the GEMM's columns are output pixels, each within one
// image, so the epilogue divides each column by its own image's scale), then split into hi = fp16(s x) and
// lo = fp16(s x - hi) (3xFP16) or rounded to hi alone (the scaled FP16 product of --precision tf32).
//
// Two ways to run it, the same words and scales out of both:
// - fused (split_fused_kernel): one thread-block cluster per image, each block a band of the copy's rows. A block
//   reads its band's input into shared memory once, finding its largest |x| as it goes; the cluster's blocks exchange
//   their maxima through distributed shared memory; then each block splits its band from shared memory and writes its
//   words. The input is read from DRAM once.
// - two passes (absmax_per_image_kernel, then nhwc_split_f16_kernel or flat_split_f16_kernel), where an image's band
//   does not fit a block's shared memory: the input is read twice.
#pragma once
#include <cooperative_groups.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/engine/f16_parts.cuh"

namespace bs::cuda::f16split {

// Where a word's two channels come from: the copy is (N, H2, W2, cs) words, and channel ch of pixel (Y, X) is input
// channel c of pixel (Y S + r - ph, X S + q - pw), ch = (r S + q) Ct + c; zero outside the image and for c >= C.
// Without the space-to-depth rewrite S = 1, Ct = 2 cs, no padding, H2 = H, W2 = W: the plain NHWC transpose (a fully
// connected layer's input is the case H = W = 1).
struct CopyMap {
  int c, h, w;        // the input's channels, rows, columns
  int s, ct, ph, pw;  // the rewrite's stride, channels per sub-pixel, padding
  int h2, w2, cs;     // the copy's rows, columns, words per pixel
};

// ---- two passes -------------------------------------------------------------------------------------------------

// max |x| of each image into out[image] (FP32 bits, compared as integers: non-negative floats order as their bits;
// out zeroed before). Grid: x over chunks of an image, y over images (strided past 65535). VEC: 16-byte loads (the
// images' starts 16-byte aligned, per_image a multiple of 4).
template <bool VEC>
__global__ void absmax_per_image_kernel(const float* __restrict__ x, long long per_image, int n, unsigned* __restrict__ out) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (int img = blockIdx.y; img < n; img += gridDim.y) {
    const float* xi = x + img * per_image;
    float m = 0.0f;
    long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
    if constexpr (VEC) {
      const float4* x4 = reinterpret_cast<const float4*>(xi);
#pragma unroll 4
      for (; i < per_image / 4; i += stride) {
        const float4 v = __ldcs(x4 + i);
        m = max_nan(max_nan(m, fabsf(v.x)), max_nan(fabsf(v.y), max_nan(fabsf(v.z), fabsf(v.w))));
      }
    } else {
#pragma unroll 4
      for (; i < per_image; i += stride) m = max_nan(m, fabsf(__ldcs(xi + i)));
    }
#pragma unroll
    for (int o = 16; o > 0; o /= 2) m = max_nan(m, __shfl_xor_sync(0xffffffffu, m, o));
    if (threadIdx.x % 32 == 0 && m != 0.0f) atomicMax(out + img, __float_as_uint(m));
  }
}

// (N, C, H, W) FP32 -> the copy's hi words, and its lo words `lo` words further on. 32 pixels x 32 words a block through
// shared memory, the writes coalesced (and the reads, without the rewrite). Grid: x over words, y over the copy's
// pixels, z over images (from image img0; amax and in start at image 0, dst at img0).
__global__ void nhwc_split_f16_kernel(const float* __restrict__ in, CopyMap g, int img0, const unsigned* __restrict__ amax,
                                      uint32_t* __restrict__ dst, long long lo) {
  __shared__ uint32_t th[32][33], tl[32][33];
  const long long img = img0 + static_cast<long long>(blockIdx.z);
  const float s = pow2(scale_shift(amax[img]));
  const int hw2 = g.h2 * g.w2;
  const int w0 = blockIdx.x * 32, p0 = blockIdx.y * 32, tx = threadIdx.x, ty = threadIdx.y;
  const int p = p0 + tx, py = p / g.w2, px = p - py * g.w2;
#pragma unroll
  for (int j = 0; j < 32; j += 8) {
    const int ch0 = 2 * (w0 + ty + j);
    __half h[2], l[2];
#pragma unroll
    for (int q = 0; q < 2; ++q) {
      const int ch = ch0 + q, sub = ch / g.ct, c = ch - sub * g.ct, r = sub / g.s, qq = sub - r * g.s;
      const int y = py * g.s + r - g.ph, x = px * g.s + qq - g.pw;
      const bool ok = p < hw2 && c < g.c && sub < g.s * g.s && static_cast<unsigned>(y) < static_cast<unsigned>(g.h) &&
                      static_cast<unsigned>(x) < static_cast<unsigned>(g.w);
      split_f16(ok ? in[((img * g.c + c) * g.h + y) * g.w + x] : 0.0f, s, h[q], l[q]);
    }
    th[ty + j][tx] = word(h[0], h[1]);
    tl[ty + j][tx] = word(l[0], l[1]);
  }
  __syncthreads();
#pragma unroll
  for (int j = 0; j < 32; j += 8) {
    const int pp = p0 + ty + j, wd = w0 + tx;
    if (pp < hw2 && wd < g.cs) {
      const long long i = (img * hw2 + pp) * g.cs + wd;
      dst[i] = th[tx][ty + j];
      if (lo) dst[i + lo] = tl[tx][ty + j];
    }
  }
}

// The copy of a 1x1 image (fully connected layers): word i of image n is input channels 2i, 2i + 1, so the pass is a
// flat split, each thread a word (the tiled transpose would leave 31 of 32 pixels of every tile empty).
__global__ void flat_split_f16_kernel(const float* __restrict__ in, int c, int cs, long long words, const unsigned* __restrict__ amax,
                                      uint32_t* __restrict__ dst, long long lo) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < words; i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long img = i / cs;
    const float s = pow2(scale_shift(amax[img]));
    const int ch = 2 * static_cast<int>(i - img * cs);
    __half h[2], l[2];
#pragma unroll
    for (int q = 0; q < 2; ++q) split_f16(ch + q < c ? in[img * c + ch + q] : 0.0f, s, h[q], l[q]);
    dst[i] = word(h[0], h[1]);
    if (lo) dst[i + lo] = word(l[0], l[1]);
  }
}

// ---- fused: one cluster per image --------------------------------------------------------------------------------

constexpr int kFusedThreads = 256;  // a block's (the kernel takes others, for measurement: 512 and 1,024 were slower)
constexpr int kFusedMaxBlocks = 16;  // a cluster of 16 blocks: Hopper's non-portable size (cudaFuncAttributeNonPortableClusterSizeAllowed)
constexpr size_t kFusedSmemTarget = 48 * 1024;  // a band's shared memory, aimed at: four blocks a multiprocessor
constexpr size_t kFusedSmemMax = 110 * 1024;    // at most: two blocks a multiprocessor (227 KB) with the static arrays

// How an image is cut into bands: `blocks` blocks (the cluster) of `rows` copy rows each (the last may have fewer),
// each holding its rows x S input rows in shared memory as [row][wp pixels][cpad floats]:
// - without the rewrite, wp = W and cpad = the copy's channels (2 cs, a multiple of 8) plus 2, so that a pixel's stride
//   in words is odd and a warp's 8-byte reads of consecutive channel pairs meet no bank twice (plus 4, 16-byte reads of
//   four channels, measured slower: the load phase's stores, a pixel apart, then meet a bank four times);
// - with it, cpad = Ct and wp spans the copy's columns (W2 S, from -pw) and the image's, rounded up so that a row is a
//   whole number of 16-byte units: then the S Ct channels of one copy pixel's sub-row r are S Ct contiguous floats
//   (S Ct is a multiple of 4: Ct makes S S Ct one of 8), read 16 bytes at a time; what lies outside the image is zero.
// rows: the most that keep a band within `target` bytes (several blocks a multiprocessor, each with all its loads in
// flight at once), but at least enough for kFusedMaxBlocks bands to cover the image; then spread evenly over the bands.
struct Band {
  int blocks, rows, cpad, wp;
  size_t smem;  // bytes
};
inline Band band_of(const CopyMap& g, size_t target = kFusedSmemTarget) {
  Band b;
  if (g.s > 1) {
    b.cpad = g.ct;
    b.wp = std::max(g.w2 * g.s, g.w + g.pw);
    while (b.wp * b.cpad % 4 != 0) ++b.wp;
  } else {
    b.cpad = 2 * g.cs + 2;
    b.wp = g.w;
  }
  const size_t row_bytes = static_cast<size_t>(g.s) * b.wp * b.cpad * sizeof(float);
  const int rows = std::max((g.h2 + kFusedMaxBlocks - 1) / kFusedMaxBlocks, static_cast<int>(std::min<size_t>(g.h2, target / row_bytes)));
  b.blocks = (g.h2 + rows - 1) / rows;
  b.rows = (g.h2 + b.blocks - 1) / b.blocks;
  b.smem = b.rows * row_bytes;
  return b;
}
// The bands for n images on a GPU of `sms` multiprocessors. Where band_of's grid (n x blocks) leaves multiprocessors
// idle, the pass is bound by the few warps it has, not by the DRAM (AlexNet conv4 at 16 images: 112 blocks of 8 warps,
// 12 % occupancy, one instruction issued every 2.4 cycles a scheduler): then each image is cut into as many bands as a
// cluster holds (at most kFusedMaxBlocks; a band of one row where the copy has fewer). On the H200, AlexNet's conv2-conv5
// passes at 1-4 images 7.5 -> 5.2-5.8 us, at 16 10.2-10.4 -> 8.8-9.1 (experiments/batch1-latency.md); blocks of 1,024
// threads on the same bands were slower than 256 (6.0-6.5 us at 1 image, 12-13.5 at 16).
inline Band band_for(const CopyMap& g, int n, int sms) {
  const Band b = band_of(g);
  return static_cast<long long>(n) * b.blocks < sms ? band_of(g, 0) : b;
}
// Whether the fused pass runs for this copy: the band fits, and with the rewrite a sub-row is whole 16-byte units.
inline bool fused_runs(const CopyMap& g) {
  return band_of(g).smem <= kFusedSmemMax && (g.s == 1 || g.s * g.ct % 4 == 0) &&
         static_cast<long long>(g.c) * g.h * g.w < (1ll << 31);  // the kernel's offsets within an image are 32 bits
}

__device__ __forceinline__ void cp_async4(uint32_t dst, const float* src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst), "l"(src) : "memory");
}

// Grid: x the cluster's blocks (the bands of one image), y images from img0. Dynamic shared memory: Band::smem.
// THREADS: the block's threads (kFusedThreads; others for measurement, experiments/probes/f16_split_rate.cu).
template <bool S2D, int THREADS>
__global__ void __launch_bounds__(THREADS) split_fused_kernel(const float* __restrict__ in, CopyMap g, Band b, int img0,
                                                                     unsigned* __restrict__ amax, uint32_t* __restrict__ dst, long long lo) {
  namespace cg = cooperative_groups;
  extern __shared__ float4 band4[];  // [rows S][wp][cpad] floats
  float* band = reinterpret_cast<float*>(band4);
  __shared__ float red[THREADS / 32];
  __shared__ unsigned block_max, image_max;
  const int tid = threadIdx.x;
  const long long img = img0 + static_cast<long long>(blockIdx.y);
  const int Y0 = blockIdx.x * b.rows, Y1 = min(Y0 + b.rows, g.h2), used = max(Y1 - Y0, 0);
  const int y_lo = Y0 * g.s - g.ph;                                    // the band's first input row
  const int r_lo = max(y_lo, 0), r_hi = min(y_lo + used * g.s, g.h);  // the rows of it inside the image
  const int band_floats = used * g.s * b.wp * b.cpad;
  const long long hw = static_cast<long long>(g.h) * g.w;

  // With the rewrite, what the loads leave unwritten (padding, past the image's edges, channels Ct > C) reads as zero:
  // the band is zeroed first.
  if constexpr (S2D) {
    for (int i = tid; i < band_floats / 4; i += THREADS) band4[i] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    __syncthreads();
  }
  // Load: every channel's rows r_lo .. r_hi, element (c, row, x) into band[((row - y_lo) wp + x + pw) cpad + c], all of a
  // thread's copies in flight at once (cp.async: no registers held); the indices advance without division.
  const int rows_in = max(r_hi - r_lo, 0);
  if (rows_in > 0) {
    const long long total = static_cast<long long>(rows_in) * g.w * g.c;
    const float* src = in + img * g.c * hw + static_cast<long long>(r_lo) * g.w;
    const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(band)) +
                          static_cast<uint32_t>(((r_lo - y_lo) * b.wp + g.pw) * b.cpad) * 4u;
    const int seg = rows_in * g.w;  // one channel's values
    const int dc = THREADS / seg, dj = THREADS - dc * seg;
    int c = tid / seg, j = tid - c * seg;
    // The source offset go = c hw + row W + x and the band's so = (row wp + x) cpad + c (floats) advance with (c, row, x)
    // by constants: a step, and each wrap (32 bits: fused_runs keeps an image under 2^31 values).
    const int hw32 = static_cast<int>(hw), n_loads = static_cast<int>(total);
    if constexpr (S2D) {  // rows of wp pixels: (row, x) tracked
      int row = j / g.w, x = j - row * g.w;
      const int drow = dj / g.w, dx = dj - drow * g.w;
      int go = c * hw32 + j, so = (row * b.wp + x) * b.cpad + c;
      const int dgo = dc * hw32 + dj, dso = (drow * b.wp + dx) * b.cpad + dc;
      const int xw_so = (b.wp - g.w) * b.cpad;                                  // x past W: the next row
      const int rw_go = hw32 - rows_in * g.w, rw_so = 1 - rows_in * b.wp * b.cpad;  // row past the band: the next channel
      for (int i = tid; i < n_loads; i += THREADS) {
        cp_async4(base + static_cast<uint32_t>(so) * 4u, src + go);
        x += dx;
        row += drow;
        go += dgo;
        so += dso;
        if (x >= g.w) { x -= g.w; ++row; so += xw_so; }
        if (row >= rows_in) { row -= rows_in; go += rw_go; so += rw_so; }
      }
    } else {  // wp = W, pw = 0: the band's pixels are j
      int go = c * hw32 + j, so = j * b.cpad + c;
      const int dgo = dc * hw32 + dj, dso = dj * b.cpad + dc;
      const int w_go = hw32 - seg, w_so = 1 - seg * b.cpad;  // j past the band: the next channel
      for (int i = tid; i < n_loads; i += THREADS) {
        cp_async4(base + static_cast<uint32_t>(so) * 4u, src + go);
        j += dj;
        go += dgo;
        so += dso;
        if (j >= seg) { j -= seg; go += w_go; so += w_so; }
      }
    }
  }
  if constexpr (!S2D) {  // the lanes past C (the copy's padding channels and the 2 never read) zero
    const int pad = b.cpad - g.c;
    for (int i = tid; i < used * g.w * pad; i += THREADS) {
      const int p = i / pad;
      band[p * b.cpad + g.c + (i - p * pad)] = 0.0f;
    }
  }
  asm volatile("cp.async.wait_all;\n" ::: "memory");
  __syncthreads();
  float m = 0.0f;  // over the band, whose lanes not loaded are zero
  if constexpr (S2D) {
    for (int i = tid; i < band_floats / 4; i += THREADS) {
      const float4 v = band4[i];
      m = max_nan(max_nan(m, fabsf(v.x)), max_nan(fabsf(v.y), max_nan(fabsf(v.z), fabsf(v.w))));
    }
  } else {  // without the rewrite a band need not be whole 16-byte units
    for (int i = tid; i < band_floats; i += THREADS) m = max_nan(m, fabsf(band[i]));
  }

  // The image's largest |x|: the block's, then the cluster's.
#pragma unroll
  for (int o = 16; o > 0; o /= 2) m = max_nan(m, __shfl_xor_sync(0xffffffffu, m, o));
  if (tid % 32 == 0) red[tid / 32] = m;
  __syncthreads();
  if (tid < 32) {
    m = tid < THREADS / 32 ? red[tid] : 0.0f;
#pragma unroll
    for (int o = 16; o > 0; o /= 2) m = max_nan(m, __shfl_xor_sync(0xffffffffu, m, o));
    if (tid == 0) block_max = __float_as_uint(m);
  }
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();  // every block's maximum is in its shared memory, visible to the cluster
  if (tid < 32) {
    m = tid < b.blocks ? __uint_as_float(*cluster.map_shared_rank(&block_max, tid)) : 0.0f;
#pragma unroll
    for (int o = 16; o > 0; o /= 2) m = max_nan(m, __shfl_xor_sync(0xffffffffu, m, o));
    if (tid == 0) {
      image_max = __float_as_uint(m);
      if (blockIdx.x == 0) amax[img] = __float_as_uint(m);
    }
  }
  // Done reading the cluster's memory: arrive now (no fence: nothing written is for the others), wait before exiting,
  // so that no block's shared memory goes while another may still read it.
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
  __syncthreads();
  const float s = pow2(scale_shift(image_max));

  // Write: the band's words, contiguous in the copy; (pixel, word) advanced without division. With the rewrite two words
  // (four channels) a step: one 16-byte read of shared memory, one 8-byte store of hi words and one of lo (cs is a
  // multiple of 4, so the lo part stays 8-byte aligned).
  uint2* out = reinterpret_cast<uint2*>(dst + (img * g.h2 + Y0) * static_cast<long long>(g.w2) * g.cs);
  if constexpr (S2D) {  // a step is 4 of the S Ct channels of one sub-row r of a copy pixel: (pixel, r, chunk)
    // The step's (r, q) with q = k mod chunks kept apart (no division a step), and its float4 in the band,
    // so4 = (yl S + r) RW + x PX + q, advanced with them (RW, PX: a band row's and a copy pixel's float4s).
    const int chunks = g.s * g.ct / 4, per_pixel = g.s * chunks;  // = cs / 2
    const int steps = used * g.w2 * per_pixel;
    const int dq = THREADS / per_pixel, dr = THREADS - dq * per_pixel, dr_r = dr / chunks, dr_q = dr - dr_r * chunks;
    const int RW = b.wp * b.cpad / 4, PX = g.s * b.cpad / 4;
    int k = tid % per_pixel, pp = tid / per_pixel, yl = pp / g.w2, x = pp - yl * g.w2;
    int r = k / chunks, q = k - r * chunks, so4 = (yl * g.s + r) * RW + x * PX + q;
    const int dso4 = dr_r * RW + dr_q + dq * PX, qw = RW - chunks, rw = PX - g.s * RW, xw = g.s * RW - g.w2 * PX;
    uint2* out_lo = out + lo / 2;
    for (int i = tid; i < steps; i += THREADS) {
      uint2 hi, lw;
      split4(band4[so4], s, hi, lw);
      out[i] = hi;
      if (lo) out_lo[i] = lw;
      q += dr_q;
      r += dr_r;
      x += dq;
      so4 += dso4;
      if (q >= chunks) { q -= chunks; ++r; so4 += qw; }
      if (r >= g.s) { r -= g.s; ++x; so4 += rw; }
      while (x >= g.w2) { x -= g.w2; ++yl; so4 += xw; }
    }
  } else {  // a word a step: one 8-byte read of shared memory, at float so = p cpad + 2 wd of the band's pixel p (W2 = W)
    uint32_t* out1 = reinterpret_cast<uint32_t*>(out);
    uint32_t* out1_lo = out1 + lo;
    const int words = used * g.w2 * g.cs;
    const int dq = THREADS / g.cs, dr = THREADS - dq * g.cs;
    int wd = tid % g.cs, so = tid / g.cs * b.cpad + 2 * wd;
    const int dso = dq * b.cpad + 2 * dr, w_so = b.cpad - 2 * g.cs;  // a step; wd past cs: the next pixel
    for (int i = tid; i < words; i += THREADS) {
      const float2 v = *reinterpret_cast<const float2*>(band + so);
      __half h[2], l[2];
      split_f16(v.x, s, h[0], l[0]);
      split_f16(v.y, s, h[1], l[1]);
      out1[i] = word(h[0], h[1]);
      if (lo) out1_lo[i] = word(l[0], l[1]);
      wd += dr;
      so += dso;
      if (wd >= g.cs) { wd -= g.cs; so += w_so; }
    }
  }
  asm volatile("barrier.cluster.wait.aligned;\n" ::: "memory");
}

// ---- launching ---------------------------------------------------------------------------------------------------

// The fused kernel's shared-memory limit raised once per instantiation (a benign race: every thread sets the same).
template <bool S2D, int THREADS>
void allow_fused_smem() {
  static const bool set = [] {
    CUDA_CHECK(cudaFuncSetAttribute(split_fused_kernel<S2D, THREADS>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kFusedSmemMax)));
    CUDA_CHECK(cudaFuncSetAttribute(split_fused_kernel<S2D, THREADS>, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    return true;
  }();
  (void)set;
}

template <bool S2D, int THREADS>
void launch_fused_at(const float* in, int n, const CopyMap& g, const Band& b, unsigned* amax, uint32_t* dst, long long lo, cudaStream_t s) {
  allow_fused_smem<S2D, THREADS>();
  for (int b0 = 0; b0 < n; b0 += 65535) {
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(static_cast<unsigned>(b.blocks), static_cast<unsigned>(std::min(65535, n - b0)));
    cfg.blockDim = dim3(THREADS);
    cfg.dynamicSmemBytes = b.smem;
    cfg.stream = s;
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = static_cast<unsigned>(b.blocks);
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    CUDA_CHECK(cudaLaunchKernelEx(&cfg, split_fused_kernel<S2D, THREADS>, in, g, b, b0, amax, dst, lo));
  }
}
template <bool S2D>
void launch_fused(const float* in, int n, const CopyMap& g, const Band& b, unsigned* amax, uint32_t* dst, long long lo, cudaStream_t s) {
  launch_fused_at<S2D, kFusedThreads>(in, n, g, b, amax, dst, lo, s);
}

// Runs the pass for n images of `in` into dst (hi words; lo words `lo` further on, or none where lo = 0), each image's
// max |x| into amax[image] (n words, zeroed here where the two passes need it): fused where it fits (band_for's bands
// for a GPU of `sms` multiprocessors), else (or with two_passes, for measurement and tests) in two passes.
inline void run_split(const float* in, int n, const CopyMap& g, unsigned* amax, uint32_t* dst, long long lo, int sms, cudaStream_t s,
                      bool two_passes = false) {
  const long long hw2 = static_cast<long long>(g.h2) * g.w2;
  if (!two_passes && fused_runs(g)) {
    const Band b = band_for(g, n, sms);
    if (g.s > 1) launch_fused<true>(in, n, g, b, amax, dst, lo, s);
    else launch_fused<false>(in, n, g, b, amax, dst, lo, s);
    return;
  }
  const long long per_image = static_cast<long long>(g.c) * g.h * g.w;
  CUDA_CHECK(cudaMemsetAsync(amax, 0, sizeof(unsigned) * static_cast<size_t>(n), s));
  const bool vec = per_image % 4 == 0 && reinterpret_cast<uintptr_t>(in) % 16 == 0;
  const long long loads = vec ? per_image / 4 : per_image;  // about 8 loads a thread
  const dim3 grid(static_cast<unsigned>(std::min<long long>((loads + 2047) / 2048, 64)), static_cast<unsigned>(std::min(n, 65535)));
  if (vec) absmax_per_image_kernel<true><<<grid, 256, 0, s>>>(in, per_image, n, amax);
  else absmax_per_image_kernel<false><<<grid, 256, 0, s>>>(in, per_image, n, amax);
  CUDA_CHECK_LAUNCH();
  if (hw2 == 1 && g.s == 1) {
    const long long words = static_cast<long long>(n) * g.cs;
    flat_split_f16_kernel<<<static_cast<unsigned>(std::min<long long>((words + 255) / 256, 8192)), 256, 0, s>>>(in, g.c, g.cs, words, amax, dst, lo);
    CUDA_CHECK_LAUNCH();
    return;
  }
  for (int b0 = 0; b0 < n; b0 += 65535) {
    const dim3 grid3((g.cs + 31) / 32, static_cast<unsigned>((hw2 + 31) / 32), std::min(65535, n - b0));
    nhwc_split_f16_kernel<<<grid3, dim3(32, 8), 0, s>>>(in, g, b0, amax, dst, lo);
    CUDA_CHECK_LAUNCH();
  }
}

}  // namespace bs::cuda::f16split
