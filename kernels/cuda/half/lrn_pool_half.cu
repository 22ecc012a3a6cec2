// LRN and the pooling after it in one kernel on the 16-bit path's NHWC tensors (half_ops.hpp): the LRN's output
// never goes to global memory. The unfused pair read the LRN's input, wrote its output, read that again and wrote
// the pooled tensor: at AlexNet batch 1024 in fp16, norm1 + pool1 took 1.68 + 0.79 ms and norm2 + pool2 1.04 + 0.49 ms,
// where reading the input once and writing the pooled output once is about 0.25 and 0.16 ms at 3 TB/s.
//
// Block: one image, a strip of output rows and a chunk of channel pairs (32-bit words). It walks its strip one output
// row at a time: it computes the LRN rows the row's pooling windows need that it does not hold yet, each into a ring
// of kh rows in shared memory (16-bit words, exactly what the LRN kernel would have stored), meets the other threads
// at a barrier, pools the row from the ring into the output, and meets them again before the ring is overwritten. With
// AlexNet's 3x3 windows of stride 2 each LRN row is computed once within a strip; a strip's first row repeats the one
// before it (strips of 4 output rows: 9 LRN rows for 8).
// LRN: a thread computes one channel pair of one pixel from the 2 HW + 1 words around it (read through L1, the
// neighbouring threads' words), in the order and with the functions of lrn_kernel (half_ops.cu), so that the result
// is the unfused pair's to the bit. Pooling reads the ring as pool_kernel reads the LRN's output.
// Grid: x channel chunks, y strips, z images. At large batch a chunk is every channel of the pixel (a strip's rows
// are one contiguous range of the tensor); at small batch strips shrink to one row and chunks to a few words, so that
// the grid still covers the GPU (batch 1, norm1: 12 chunks x 27 rows).
#include <algorithm>
#include <cfloat>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/half/half_ops.hpp"
#include "kernels/cuda/half/half_types.cuh"
#include "kernels/cuda/ops/ops.hpp"

namespace bs::cuda::half {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxHaloWords = 4;           // LRN windows up to 17 channels
constexpr size_t kRingBytes = 48 * 1024;   // the ring's largest size (no opt-in: several blocks per SM)
constexpr int kStripRows = 4;              // output rows per strip where the batch fills the GPU anyway

template <bool BF16>
__device__ __forceinline__ void unpack2(uint32_t u, float& lo, float& hi) {
  if constexpr (BF16) {
    lo = __uint_as_float(u << 16);
    hi = __uint_as_float(u & 0xffff0000u);
  } else {
    const float2 f = __half22float2(*reinterpret_cast<const __half2*>(&u));
    lo = f.x;
    hi = f.y;
  }
}

// Pools output row oy's words from the ring (slot_lo: the slot of the window's first row, ylo), MAX or average.
template <bool BF16, bool MAX>
__device__ __forceinline__ void pool_row(const uint32_t* ring, int R, int slot_lo, Shape s, const PoolParams& pp, Shape os, int oy, int nw,
                                         int cw, int cs2, uint32_t* orow) {
  const int dx = kThreads / nw, dw = kThreads - dx * nw;
  int ox = threadIdx.x / nw, wd = threadIdx.x - ox * nw;
  for (; ox < os.w;) {
    const PoolWindow win = pp.window(s.h, s.w, oy, ox);
    float a0 = MAX ? -FLT_MAX : 0.0f, a1 = a0;
    int slot = slot_lo;
    for (int y = win.y0; y < win.y1; ++y) {
      const uint32_t* r = ring + slot * s.w * cw + wd;
      for (int x = win.x0; x < win.x1; ++x) {
        float f0, f1;
        unpack2<BF16>(r[x * cw], f0, f1);
        a0 = MAX ? fmaxf(a0, f0) : a0 + f0;
        a1 = MAX ? fmaxf(a1, f1) : a1 + f1;
      }
      if (++slot == R) slot = 0;
    }
    if (!MAX) { a0 /= win.count; a1 /= win.count; }
    orow[static_cast<long long>(ox) * cs2 + wd] = pack2<BF16>(a0, a1);
    wd += dw;
    ox += dx;
    if (wd >= nw) { wd -= nw; ++ox; }
  }
}

// HALF: the LRN window's channels on each side (size / 2); HW = ceil(HALF / 2) words on each side of a pair hold them.
template <bool BF16, int HALF>
__global__ void __launch_bounds__(kThreads) lrn_pool_half_kernel(const uint32_t* __restrict__ in, int n, Shape s, int cs2, LrnParams lp,
                                                                 PoolParams pp, Shape os, int cw, int strip, uint32_t* __restrict__ out,
                                                                 int* ovf) {
  constexpr int HW = (HALF + 1) / 2, V = 2 * (2 * HW + 1);
  extern __shared__ uint32_t ring[];  // [kh][W][cw]: LRN row y in slot y % kh
  const int w0 = blockIdx.x * cw, nw = min(cs2, w0 + cw) - w0;
  const int oy0 = blockIdx.y * strip, oy1 = min(os.h, oy0 + strip);
  const int R = pp.kh;
  const int dx = kThreads / nw, dw = kThreads - dx * nw;  // a thread's step over (pixel, word) of a row
  const float scale = lp.alpha / lp.size;
  for (int b = blockIdx.z; b < n; b += gridDim.z) {
    const uint32_t* img = in + static_cast<long long>(b) * s.h * s.w * cs2;
    uint32_t* dst = out + static_cast<long long>(b) * os.h * os.w * cs2;
    int have = 0;  // LRN rows below it are done (those still needed are in the ring)
    for (int oy = oy0; oy < oy1; ++oy) {
      const int ylo = max(0, oy * pp.sh - pp.ph), yhi = min(s.h, oy * pp.sh - pp.ph + pp.kh);
      // rows [max(have, ylo), yhi): this thread's tasks (y, x, wd), advanced by kThreads without a division
      int y = max(have, ylo), x = threadIdx.x / nw, wd = threadIdx.x - x * nw;
      while (x >= s.w) { x -= s.w; ++y; }
      int slot = y % R;
      for (; y < yhi;) {
        const uint32_t* px = img + (static_cast<long long>(y) * s.w + x) * cs2;
        const int word = w0 + wd;
        float v[V];  // channels 2 (word - HW) ... 2 (word + HW) + 1; zero outside the C real channels (adding 0 x 0 to the
                     // window sum leaves it as lrn_kernel's, which skips them)
#pragma unroll
        for (int k = -HW; k <= HW; ++k) {
          const int at = word + k;
          unpack2<BF16>(at >= 0 && at < cs2 ? __ldg(px + at) : 0u, v[2 * (k + HW)], v[2 * (k + HW) + 1]);
          if (2 * at + 1 >= s.c) v[2 * (k + HW) + 1] = 0.0f;  // the pad channel (holds zero already, but be sure)
          if (2 * at >= s.c) v[2 * (k + HW)] = 0.0f;
        }
        float res[2];
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          float sum = 0.0f;
#pragma unroll
          for (int i = 2 * HW + h - HALF; i <= 2 * HW + h + HALF; ++i) sum = fmaf(v[i], v[i], sum);
          res[h] = 2 * word + h < s.c ? v[2 * HW + h] * lrn_factor(lp, scale, sum) : 0.0f;
          check_range<BF16>(res[h], ovf);
        }
        ring[(slot * s.w + x) * cw + wd] = pack2<BF16>(res[0], res[1]);
        wd += dw;
        x += dx;
        if (wd >= nw) { wd -= nw; ++x; }
        while (x >= s.w) {
          x -= s.w;
          ++y;
          if (++slot == R) slot = 0;
        }
      }
      have = max(have, yhi);
      __syncthreads();  // the row's LRN rows are in the ring
      uint32_t* orow = dst + static_cast<long long>(oy) * os.w * cs2 + w0;
      if (pp.kind == PoolKind::max) pool_row<BF16, true>(ring, R, ylo % R, s, pp, os, oy, nw, cw, cs2, orow);
      else pool_row<BF16, false>(ring, R, ylo % R, s, pp, os, oy, nw, cw, cs2, orow);
      __syncthreads();  // before the next row's LRN rows overwrite the ring
    }
  }
}

int halo_words(const LrnParams& lp) { return (lp.size / 2 + 1) / 2; }
constexpr int kMaxHalf = 2 * kMaxHaloWords;
size_t ring_bytes(const PoolParams& pp, Shape s, int cw) { return sizeof(uint32_t) * pp.kh * s.w * cw; }

template <bool BF16, int HALF = 0>
void launch(int half, dim3 grid, size_t smem, cudaStream_t st, const uint32_t* in, int n, Shape s, int cs2, const LrnParams& lp,
            const PoolParams& pp, Shape os, int cw, int strip, uint32_t* out, int* ovf) {
  if constexpr (HALF < kMaxHalf) {
    if (half != HALF) return launch<BF16, HALF + 1>(half, grid, smem, st, in, n, s, cs2, lp, pp, os, cw, strip, out, ovf);
  }
  lrn_pool_half_kernel<BF16, HALF><<<grid, kThreads, smem, st>>>(in, n, s, cs2, lp, pp, os, cw, strip, out, ovf);
}

}  // namespace

Support lrn_pool_half_supports(const LrnParams& lp, Shape s, const PoolParams& pp) {
  if (halo_words(lp) > kMaxHaloWords)
    return {false, "an LRN window of " + std::to_string(lp.size) + " channels (the 16-bit fused kernel takes up to " +
                       std::to_string(4 * kMaxHaloWords + 1) + ")"};
  if (ring_bytes(pp, s, 1) > kRingBytes)
    return {false, "the pooling window's " + std::to_string(pp.kh) + " LRN rows of " + std::to_string(s.w) +
                       " pixels do not fit the kernel's shared memory"};
  return {};
}

LrnPoolHalfGrid lrn_pool_half_grid(int n, Shape s, const PoolParams& pp, Shape os, int sms) {
  const int cs2 = stored_channels(s.c) / 2;
  LrnPoolHalfGrid g;
  g.cw = cs2;
  while (ring_bytes(pp, s, g.cw) > kRingBytes) g.cw = (g.cw + 1) / 2;
  g.strip = std::min(os.h, kStripRows);
  const long long images = std::min(n, 65535);
  auto blocks = [&] { return images * ((cs2 + g.cw - 1) / g.cw) * ((os.h + g.strip - 1) / g.strip); };
  const long long want = 2LL * sms;
  if (blocks() < want) g.strip = 1;  // small batches: more blocks before narrower chunks
  while (blocks() < want && g.cw > 4) g.cw = std::max(4, (g.cw + 1) / 2);
  g.grid[0] = (cs2 + g.cw - 1) / g.cw;
  g.grid[1] = (os.h + g.strip - 1) / g.strip;
  g.grid[2] = static_cast<int>(images);
  return g;
}

void lrn_pool_half(const uint16_t* in, int n, Shape s, const LrnParams& lp, const PoolParams& pp, Shape os, uint16_t* out, bool bf16,
                   int* ovf, cudaStream_t st) {
  const int cs2 = stored_channels(s.c) / 2;
  const LrnPoolHalfGrid g = lrn_pool_half_grid(n, s, pp, os, sm_count());
  const dim3 grid(static_cast<unsigned>(g.grid[0]), static_cast<unsigned>(g.grid[1]), static_cast<unsigned>(g.grid[2]));
  const size_t smem = ring_bytes(pp, s, g.cw);
  const auto* src = reinterpret_cast<const uint32_t*>(in);
  auto* dst = reinterpret_cast<uint32_t*>(out);
  if (bf16) launch<true>(lp.size / 2, grid, smem, st, src, n, s, cs2, lp, pp, os, g.cw, g.strip, dst, nullptr);
  else launch<false>(lp.size / 2, grid, smem, st, src, n, s, cs2, lp, pp, os, g.cw, g.strip, dst, ovf);
  CUDA_CHECK_LAUNCH();
}

}  // namespace bs::cuda::half
