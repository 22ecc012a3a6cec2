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
// LRN: a thread computes VEC words of one pixel (8 words, 16 channels, where the channel stride and the chunk allow; else
// 4 words, 8 channels; else 1) from them and the HW words on each side (read through L1: the neighbouring threads'
// words), in the order and with the functions of lrn_kernel (half_ops.cu), so that the result is the unfused pair's to
// the bit. Pooling reads the ring as pool_kernel reads the LRN's output.
// The task loop has no test per channel: channels past C are zeroed in a branch only a pixel's last tasks take, and only
// for an odd C (the pad channel; lrn_task), and
// fp16's range is checked once a thread on the largest value it computed (per channel, the tests and the flag's
// predicated store were 40 % of the loop's instructions).
// Grid: x channel chunks, y strips, z images. At large batch a chunk is every channel of the pixel (a strip's rows
// are one contiguous range of the tensor); at smaller batches strips shrink to one row and chunks to a few words, so that
// the grid still covers the GPU. At the smallest (AlexNet: 1-2 images for norm1, 1-4 for norm2) the direct form runs
// instead, a thread per output word and no ring (lrn_pool_direct_kernel below).
#include <algorithm>
#include <cfloat>
#include <cstddef>
#include <type_traits>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/half/half_ops.hpp"
#include "kernels/cuda/half/half_types.cuh"
#include "kernels/cuda/ops/ops.hpp"
#include "kernels/cuda/ops/pool_gather.cuh"

namespace bs::cuda::half {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxHaloWords = 4;           // LRN windows up to 17 channels
constexpr size_t kRingBytes = 48 * 1024;   // the ring's largest size (no opt-in: several blocks per SM)
constexpr int kStripRows = 4;              // output rows per strip where the batch fills the GPU anyway

// VEC words (2 VEC channels) at p, in 16-byte loads where VEC is a multiple of 4 (p 16-byte aligned).
template <int VEC>
__device__ __forceinline__ void load_words(const uint32_t* p, uint32_t (&u)[VEC], bool shared) {
  if constexpr (VEC % 4 == 0) {
#pragma unroll
    for (int h = 0; h < VEC / 4; ++h) {
      const uint4 q = shared ? reinterpret_cast<const uint4*>(p)[h] : __ldg(reinterpret_cast<const uint4*>(p) + h);
      u[4 * h] = q.x; u[4 * h + 1] = q.y; u[4 * h + 2] = q.z; u[4 * h + 3] = q.w;
    }
  } else {
#pragma unroll
    for (int i = 0; i < VEC; ++i) u[i] = shared ? p[i] : __ldg(p + i);
  }
}
template <int VEC>
__device__ __forceinline__ void store_words(uint32_t* p, const uint32_t (&u)[VEC]) {
  if constexpr (VEC % 4 == 0) {
#pragma unroll
    for (int h = 0; h < VEC / 4; ++h) reinterpret_cast<uint4*>(p)[h] = make_uint4(u[4 * h], u[4 * h + 1], u[4 * h + 2], u[4 * h + 3]);
  } else {
#pragma unroll
    for (int i = 0; i < VEC; ++i) p[i] = u[i];
  }
}

// A task's words at one pixel: its VEC words (p, word: the first) and the HW on each side (through L1: the neighbouring
// tasks' words), 0 outside the pixel's cs2 words; raw[j] is word - HW + j.
template <int HW, int VEC>
struct TaskWords {
  uint32_t raw[VEC + 2 * HW];
};
template <int HW, int VEC>
__device__ __forceinline__ TaskWords<HW, VEC> load_task(const uint32_t* p, int word, int cs2) {
  TaskWords<HW, VEC> t;
  uint32_t u[VEC];
  load_words<VEC>(p, u, false);
#pragma unroll
  for (int i = 0; i < VEC; ++i) t.raw[HW + i] = u[i];
#pragma unroll
  for (int k = 1; k <= HW; ++k) {
    t.raw[HW - k] = word - k >= 0 ? __ldg(p - k) : 0u;
    t.raw[HW + VEC - 1 + k] = word + VEC - 1 + k < cs2 ? __ldg(p + VEC - 1 + k) : 0u;
  }
  return t;
}

// The LRN of a task's VEC words (c: the real channels), in the order and with the functions of lrn_kernel (half_ops.cu),
// so that the result is the unfused pair's to the bit; rmax: the largest |value| so far.
template <bool BF16, int HALF, int VEC>
__device__ __forceinline__ void lrn_task(const TaskWords<(HALF + 1) / 2, VEC>& t, int word, int c, const LrnParams& lp, float scale,
                                         float& rmax, uint32_t (&res)[VEC]) {
  constexpr int HW = (HALF + 1) / 2, NV = 2 * (VEC + 2 * HW);
  // v: channels 2 (word - HW) ... 2 (word + VEC + HW) - 1, zero outside the C real channels (adding 0 x 0 to a window sum
  // leaves it as lrn_kernel's, which skips them)
  float v[NV];
#pragma unroll
  for (int j = 0; j < VEC + 2 * HW; ++j) unpack2<BF16>(t.raw[j], v[2 * j], v[2 * j + 1]);
  // The task's window reaches the pad channel (odd C only). With C even there is none: the words past the pixel were
  // loaded as zeros (load_task) and every result channel is real, so the zeroing below would change nothing. Taken there
  // by a pixel's last task, it ran in every warp (tasks of several pixels share a warp): 113 of the 16-channel loop's 388
  // SASS instructions a turn on AlexNet's even channel counts, which the test on C now skips.
  const bool edge = (c & 1) != 0 && 2 * (word + VEC + HW) > c;
  if (edge) {
#pragma unroll
    for (int i = 0; i < NV; ++i)
      if (2 * (word - HW) + i >= c) v[i] = 0.0f;
  }
  float r[2 * VEC];
#pragma unroll
  for (int i = 0; i < 2 * VEC; ++i) {
    const int at = 2 * HW + i;  // this channel's place in v
    float sum = 0.0f;
#pragma unroll
    for (int j = at - HALF; j <= at + HALF; ++j) sum = fmaf(v[j], v[j], sum);
    r[i] = v[at] * lrn_factor(lp, scale, sum);
  }
  if (edge) {  // channels past C: zero, as lrn_kernel stores them (not 0 x the factor, which is NaN where it is infinite)
#pragma unroll
    for (int i = 0; i < 2 * VEC; ++i)
      if (2 * word + i >= c) r[i] = 0.0f;
  }
#pragma unroll
  for (int i = 0; i < VEC; ++i) {
    rmax = fmaxf(rmax, fmaxf(fabsf(r[2 * i]), fabsf(r[2 * i + 1])));
    res[i] = pack2<BF16>(r[2 * i], r[2 * i + 1]);
  }
}

// The larger of two words' halves, each (exact: no rounding, as fmaxf on the widened values then rounding back).
template <bool BF16>
__device__ __forceinline__ uint32_t max2(uint32_t a, uint32_t b) {
  if constexpr (BF16) {
    const __nv_bfloat162 r = __hmax2(*reinterpret_cast<const __nv_bfloat162*>(&a), *reinterpret_cast<const __nv_bfloat162*>(&b));
    return *reinterpret_cast<const uint32_t*>(&r);
  } else {
    const __half2 r = __hmax2(*reinterpret_cast<const __half2*>(&a), *reinterpret_cast<const __half2*>(&b));
    return *reinterpret_cast<const uint32_t*>(&r);
  }
}

// The pooled words of window win, MAX or average, from words(load(y, x), u) at each of its positions, combined as
// pool_kernel combines them (half_ops.cu): the maximum started from the first value (first(res) where the caller can
// read it directly, else the first position's words), or float sums in the window's order divided by win.count.
// GATHER: the window's loads issued together (for_window).
template <bool BF16, bool MAX, int VEC, class T, bool GATHER, class Load, class Words, class First = std::nullptr_t>
__device__ __forceinline__ void pool_words(const PoolParams& pp, const PoolWindow& win, const Load& load, const Words& words,
                                           uint32_t (&res)[VEC], const First& first = nullptr) {
  if constexpr (MAX) {  // windows are never empty
    constexpr bool kFlag = std::is_same_v<First, std::nullptr_t>;
    bool at_first = kFlag;
    if constexpr (!kFlag) first(res);
    for_window<T, GATHER>(pp, win, load, [&](const T& t) {
      uint32_t u[VEC];
      words(t, u);
#pragma unroll
      for (int i = 0; i < VEC; ++i) res[i] = max2<BF16>(at_first ? u[i] : res[i], u[i]);
      at_first = false;
    });
  } else {
    float a[2 * VEC] = {};
    for_window<T, GATHER>(pp, win, load, [&](const T& t) {
      uint32_t u[VEC];
      words(t, u);
#pragma unroll
      for (int i = 0; i < VEC; ++i) {
        float f0, f1;
        unpack2<BF16>(u[i], f0, f1);
        a[2 * i] += f0;
        a[2 * i + 1] += f1;
      }
    });
#pragma unroll
    for (int i = 0; i < VEC; ++i) res[i] = pack2<BF16>(a[2 * i] / win.count, a[2 * i + 1] / win.count);
  }
}

// Pools output row oy's words from the ring (slot_lo: the slot of the window's first row, ylo), MAX or average, VEC
// words a task.
template <bool BF16, bool MAX, int VEC>
__device__ __forceinline__ void pool_row(const uint32_t* ring, int R, int slot_lo, Shape s, const PoolParams& pp, Shape os, int oy, int nv,
                                         int cw, int cs2, uint32_t* orow) {
  const int dx = kThreads / nv, dv = kThreads - dx * nv;
  int ox = threadIdx.x / nv, vd = threadIdx.x - ox * nv;
  for (; ox < os.w;) {
    const PoolWindow win = pp.window(s.h, s.w, oy, ox);
    struct Words {
      uint32_t u[VEC];
    };
    const auto load = [&](int y, int x) {  // the window's rows from the ring: row win.y0 in slot_lo
      int slot = slot_lo + (y - win.y0);
      if (slot >= R) slot -= R;
      Words w;
      load_words<VEC>(ring + (slot * s.w + x) * cw + VEC * vd, w.u, true);
      return w;
    };
    const auto words = [](const Words& w, uint32_t(&u)[VEC]) {
#pragma unroll
      for (int i = 0; i < VEC; ++i) u[i] = w.u[i];
    };
    // the window's loads in flight together for tasks of up to 4 words (batch 1's: 48 -> 62 registers); 8-word tasks keep
    // one load at a time (with the window gathered they took 57 -> 116 registers and norm1 at 256 images 1.35x the time;
    // one row gathered at a time, 70 registers)
    uint32_t res[VEC];
    pool_words<BF16, MAX, VEC, Words, (VEC <= 4)>(pp, win, load, words, res, [&](uint32_t(&r)[VEC]) {
      load_words<VEC>(ring + (slot_lo * s.w + win.x0) * cw + VEC * vd, r, true);
    });
    store_words<VEC>(orow + static_cast<long long>(ox) * cs2 + VEC * vd, res);
    vd += dv;
    ox += dx;
    if (vd >= nv) { vd -= nv; ++ox; }
  }
}

// HALF: the LRN window's channels on each side (size / 2); HW = ceil(HALF / 2) words on each side of a task's VEC words
// hold them. VEC: 8 where the channel stride and the chunk are multiples of 16 channels (two 16-byte loads and stores; the
// task's index work over 16 values: 139 SASS instructions per 8 channels in the task loop where 4-word tasks take 174), 4
// where they are multiples of 8 (one 16-byte load), else 1.
template <bool BF16, int HALF, int VEC>
__global__ void __launch_bounds__(kThreads) lrn_pool_half_kernel(const uint32_t* __restrict__ in, int n, Shape s, int cs2, LrnParams lp,
                                                                 PoolParams pp, Shape os, int cw, int strip, uint32_t* __restrict__ out,
                                                                 int* ovf) {
  constexpr int HW = (HALF + 1) / 2;
  extern __shared__ uint32_t ring[];  // [kh][W][cw]: LRN row y in slot y % kh
  const int w0 = blockIdx.x * cw, nv = (min(cs2, w0 + cw) - w0) / VEC;
  const int oy0 = blockIdx.y * strip, oy1 = min(os.h, oy0 + strip);
  const int R = pp.kh;
  const int dx = kThreads / nv, dv = kThreads - dx * nv;  // a thread's step over (pixel, task) of a row
  const float scale = lp.alpha / lp.size;
  float rmax = 0.0f;  // the largest |LRN value| this thread computed: fp16's range checked once, at the end (fmaxf passes
                      // NaN over, as check_range does)
  for (int b = blockIdx.z; b < n; b += gridDim.z) {
    const uint32_t* img = in + static_cast<long long>(b) * s.h * s.w * cs2;
    uint32_t* dst = out + static_cast<long long>(b) * os.h * os.w * cs2;
    int have = 0;  // LRN rows below it are done (those still needed are in the ring)
    for (int oy = oy0; oy < oy1; ++oy) {
      const int ylo = max(0, oy * pp.sh - pp.ph), yhi = min(s.h, oy * pp.sh - pp.ph + pp.kh);
      // rows [max(have, ylo), yhi): this thread's tasks (y, x, vd), advanced by kThreads without a division
      int y = max(have, ylo), x = threadIdx.x / nv, vd = threadIdx.x - x * nv;
      while (x >= s.w) { x -= s.w; ++y; }
      int slot = y % R;
      for (; y < yhi;) {
        const int word = w0 + VEC * vd;
        uint32_t res[VEC];
        lrn_task<BF16, HALF, VEC>(load_task<HW, VEC>(img + (static_cast<long long>(y) * s.w + x) * cs2 + word, word, cs2), word, s.c, lp,
                                  scale, rmax, res);
        store_words<VEC>(ring + (slot * s.w + x) * cw + VEC * vd, res);
        vd += dv;
        x += dx;
        if (vd >= nv) { vd -= nv; ++x; }
        while (x >= s.w) {
          x -= s.w;
          ++y;
          if (++slot == R) slot = 0;
        }
      }
      have = max(have, yhi);
      __syncthreads();  // the row's LRN rows are in the ring
      uint32_t* orow = dst + static_cast<long long>(oy) * os.w * cs2 + w0;
      if (pp.kind == PoolKind::max) pool_row<BF16, true, VEC>(ring, R, ylo % R, s, pp, os, oy, nv, cw, cs2, orow);
      else pool_row<BF16, false, VEC>(ring, R, ylo % R, s, pp, os, oy, nv, cw, cs2, orow);
      __syncthreads();  // before the next row's LRN rows overwrite the ring
    }
  }
  check_range<BF16>(rmax, ovf);
}

// The direct form, for batches too small to fill the GPU (lrn_pool_half_grid): a thread per output pixel and word
// computes the LRN at each position of its pooling window from the input and pools it, with no ring and no barrier. At
// 1-2 images the ring's blocks held 1-3 LRN rows of a chunk of 4 words each and met at two barriers (ncu at 1 image:
// barrier stalls 37 % of the cycles between issues). An LRN value is computed once for each window that holds it (2.25
// times on average for 3 x 3 windows of stride 2), from the same words with the same functions: the ring's values to the
// bit. The window's loads are issued together where a word with its halo is at most 6 words (27 words for halo 1).
// Measured on the H200 (fp16, AlexNet; experiments/results/h200-lrn-direct/): norm1 at 1 / 2 images 3.8 -> 3.6 / 4.8 ->
// 4.4 us, norm2 at 1 / 2 / 4 images 3.5 -> 3.1 / 4.5 -> 3.6 / 5.0 -> 4.8. Not kept: 4-word tasks (slower at every batch)
// and 1-channel tasks (twice the threads, no faster: each value's index work is a word's).
constexpr int kDirectThreads = 128;
template <bool BF16, int HALF>
__global__ void __launch_bounds__(kDirectThreads) lrn_pool_direct_kernel(const uint32_t* __restrict__ in, unsigned total, Shape s, int cs2,
                                                                         LrnParams lp, PoolParams pp, Shape os, uint32_t* __restrict__ out,
                                                                         int* ovf) {
  constexpr int HW = (HALF + 1) / 2;
  using T = TaskWords<HW, 1>;
  constexpr bool kGather = 1 + 2 * HW <= 6;
  const float scale = lp.alpha / lp.size;
  float rmax = 0.0f;
  for (unsigned i = blockIdx.x * kDirectThreads + threadIdx.x; i < total; i += gridDim.x * kDirectThreads) {
    const unsigned pix = i / cs2, ox = pix % os.w, row = pix / os.w, oy = row % os.h, b = row / os.h;  // pix: (b, oy, ox)
    const int word = static_cast<int>(i - pix * cs2);
    const uint32_t* img = in + static_cast<long long>(b) * s.h * s.w * cs2 + word;
    const PoolWindow win = pp.window(s.h, s.w, static_cast<int>(oy), static_cast<int>(ox));
    const auto load = [&](int y, int x) { return load_task<HW, 1>(img + (y * s.w + x) * cs2, word, cs2); };
    const auto words = [&](const T& t, uint32_t(&u)[1]) { lrn_task<BF16, HALF, 1>(t, word, s.c, lp, scale, rmax, u); };
    uint32_t res[1];
    if (pp.kind == PoolKind::max) pool_words<BF16, true, 1, T, kGather>(pp, win, load, words, res);
    else pool_words<BF16, false, 1, T, kGather>(pp, win, load, words, res);
    out[static_cast<long long>(pix) * cs2 + word] = res[0];
  }
  check_range<BF16>(rmax, ovf);
}

int halo_words(const LrnParams& lp) { return (lp.size / 2 + 1) / 2; }
// Words a task takes: 8 (16 channels, two 16-byte loads: the index work over 16 values) where the channel stride and the
// chunk are multiples of 8 words, else 4, else 1.
int task_words(int cs2, int cw) {
  if (cs2 % 8 == 0 && cw % 8 == 0) return 8;
  return cs2 % 4 == 0 && cw % 4 == 0 ? 4 : 1;
}
constexpr int kMaxHalf = 2 * kMaxHaloWords;
size_t ring_bytes(const PoolParams& pp, Shape s, int cw) { return sizeof(uint32_t) * pp.kh * s.w * cw; }

template <bool BF16, int HALF = 0>
void launch(int half, int vec, dim3 grid, size_t smem, cudaStream_t st, const uint32_t* in, int n, Shape s, int cs2, const LrnParams& lp,
            const PoolParams& pp, Shape os, int cw, int strip, uint32_t* out, int* ovf) {
  if constexpr (HALF < kMaxHalf) {
    if (half != HALF) return launch<BF16, HALF + 1>(half, vec, grid, smem, st, in, n, s, cs2, lp, pp, os, cw, strip, out, ovf);
  }
  if (vec == 8) lrn_pool_half_kernel<BF16, HALF, 8><<<grid, kThreads, smem, st>>>(in, n, s, cs2, lp, pp, os, cw, strip, out, ovf);
  else if (vec == 4) lrn_pool_half_kernel<BF16, HALF, 4><<<grid, kThreads, smem, st>>>(in, n, s, cs2, lp, pp, os, cw, strip, out, ovf);
  else lrn_pool_half_kernel<BF16, HALF, 1><<<grid, kThreads, smem, st>>>(in, n, s, cs2, lp, pp, os, cw, strip, out, ovf);
}

template <bool BF16, int HALF = 0>
void launch_direct(int half, unsigned blocks, cudaStream_t st, const uint32_t* in, unsigned total, Shape s, int cs2, const LrnParams& lp,
                   const PoolParams& pp, Shape os, uint32_t* out, int* ovf) {
  if constexpr (HALF < kMaxHalf) {
    if (half != HALF) return launch_direct<BF16, HALF + 1>(half, blocks, st, in, total, s, cs2, lp, pp, os, out, ovf);
  }
  lrn_pool_direct_kernel<BF16, HALF><<<blocks, kDirectThreads, 0, st>>>(in, total, s, cs2, lp, pp, os, out, ovf);
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

LrnPoolHalfGrid lrn_pool_half_grid(int n, Shape s, const PoolParams& pp, Shape os, int sms, LrnPoolHalfForm form) {
  const int cs2 = stored_channels(s.c) / 2;
  LrnPoolHalfGrid g;
  // halving keeps whole 4-word (8-channel) tasks where the channel stride has them
  const int unit = cs2 % 4 == 0 ? 4 : 1;
  const auto halve = [&](int cw) {
    const int h = (cw + 1) / 2;
    return cw > unit ? (h + unit - 1) / unit * unit : h;
  };
  g.cw = cs2;
  while (ring_bytes(pp, s, g.cw) > kRingBytes && g.cw > 1) g.cw = halve(g.cw);
  g.strip = std::min(os.h, kStripRows);
  const long long images = std::min(n, 65535);
  auto blocks = [&] { return images * ((cs2 + g.cw - 1) / g.cw) * ((os.h + g.strip - 1) / g.strip); };
  const long long want = 2LL * sms;
  // the direct form where its 1-word tasks are at most 768 a multiprocessor (6 blocks of 128 threads; measured on the H200,
  // AlexNet fp16: faster at norm1's 265 and 530 a multiprocessor, 1 and 2 images, and norm2's 164-655, 1-4 images; slower
  // at norm1's 1,060, 4 images, where the ring's chunks of 4 words won); its output and input words counted in 32 bits
  const long long words = static_cast<long long>(n) * os.h * os.w * cs2, in_words = static_cast<long long>(n) * s.h * s.w * cs2;
  const bool small = words <= 768LL * sms;
  g.direct = std::max(words, in_words) < (1LL << 31) && (form == LrnPoolHalfForm::direct || (form == LrnPoolHalfForm::any && small));
  if (g.direct) {
    g.vec = 1;
    g.cw = cs2;
    g.strip = 0;
    g.grid[0] = static_cast<int>((words + kDirectThreads - 1) / kDirectThreads);
    g.grid[1] = g.grid[2] = 1;
    return g;
  }
  if (blocks() < want) g.strip = 1;  // small batches: more blocks before narrower chunks
  while (blocks() < want && g.cw > 4) g.cw = std::max(4, halve(g.cw));
  g.vec = task_words(cs2, g.cw);
  g.grid[0] = (cs2 + g.cw - 1) / g.cw;
  g.grid[1] = (os.h + g.strip - 1) / g.strip;
  g.grid[2] = static_cast<int>(images);
  return g;
}

void lrn_pool_half(const uint16_t* in, int n, Shape s, const LrnParams& lp, const PoolParams& pp, Shape os, uint16_t* out, bool bf16,
                   int* ovf, cudaStream_t st, LrnPoolHalfForm form) {
  const int cs2 = stored_channels(s.c) / 2;
  const LrnPoolHalfGrid g = lrn_pool_half_grid(n, s, pp, os, sm_count(), form);
  const auto* src = reinterpret_cast<const uint32_t*>(in);
  auto* dst = reinterpret_cast<uint32_t*>(out);
  if (g.direct) {
    const auto total = static_cast<unsigned>(static_cast<long long>(n) * os.h * os.w * cs2), blocks = static_cast<unsigned>(g.grid[0]);
    if (bf16) launch_direct<true>(lp.size / 2, blocks, st, src, total, s, cs2, lp, pp, os, dst, nullptr);
    else launch_direct<false>(lp.size / 2, blocks, st, src, total, s, cs2, lp, pp, os, dst, ovf);
  } else {
    const dim3 grid(static_cast<unsigned>(g.grid[0]), static_cast<unsigned>(g.grid[1]), static_cast<unsigned>(g.grid[2]));
    const size_t smem = ring_bytes(pp, s, g.cw);
    if (bf16) launch<true>(lp.size / 2, g.vec, grid, smem, st, src, n, s, cs2, lp, pp, os, g.cw, g.strip, dst, nullptr);
    else launch<false>(lp.size / 2, g.vec, grid, smem, st, src, n, s, cs2, lp, pp, os, g.cw, g.strip, dst, ovf);
  }
  CUDA_CHECK_LAUNCH();
}

}  // namespace bs::cuda::half
