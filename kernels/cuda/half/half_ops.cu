// The half-precision path's other layers (half_ops.hpp): NHWC 16-bit tensors in and out, FP32 inside.
// Consecutive threads take consecutive channel pairs of a pixel (one 32-bit word each), so that reads and
// writes are coalesced; pooling and LRN read their windows through L1/L2 as the FP32 kernels do.
#include <algorithm>
#include <cfloat>
#include <cstdint>
#include <type_traits>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/engine/epilogue.cuh"
#include "kernels/cuda/half/activate16.cuh"
#include "kernels/cuda/half/half_ops.hpp"
#include "kernels/cuda/ops/block_reduce.cuh"
#include "kernels/cuda/ops/pool_gather.cuh"
#include "kernels/cuda/half/half_types.cuh"

namespace bs::cuda::half {
namespace {

#define GRID_STRIDE(i, total)                                                                                        \
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < (total); \
       i += static_cast<long long>(gridDim.x) * blockDim.x)

// One thread per (image, pixel): reads its channels from the C planes (coalesced across threads), writes
// its Cs values (the pad channel zero).
template <bool BF16>
__global__ void to_nhwc(const float* __restrict__ in, long long images_pixels, int plane, int c, int cs, uint16_t* __restrict__ out, int* ovf) {
  GRID_STRIDE(i, images_pixels) {
    const long long img = i / plane, q = i - img * plane;
    const float* src = in + img * c * plane + q;
    uint32_t* dst = reinterpret_cast<uint32_t*>(out + i * cs);
    for (int ch = 0; ch < cs; ch += 2) {
      const float v0 = src[static_cast<long long>(ch) * plane];
      const float v1 = ch + 1 < c ? src[static_cast<long long>(ch + 1) * plane] : 0.0f;
      check_range<BF16>(v0, ovf);
      check_range<BF16>(v1, ovf);
      dst[ch / 2] = pack2<BF16>(v0, v1);
    }
  }
}

// One thread per (image, pixel, channel pair), for inputs of many channels and few pixels (a flat vector: a fully
// connected layer first, as tune times one): one thread per pixel would walk all the channels alone (9,216 on one
// thread took 0.45 ms of a 30 us layer).
template <bool BF16>
__global__ void to_nhwc_pairs(const float* __restrict__ in, long long pairs, int plane, int c, int cs, uint16_t* __restrict__ out,
                              int* ovf) {
  const int per_pixel = cs / 2;
  GRID_STRIDE(i, pairs) {
    const long long pix = i / per_pixel, img = pix / plane, q = pix - img * plane;
    const int ch = 2 * static_cast<int>(i - pix * per_pixel);
    const float* src = in + (img * c + ch) * plane + q;
    const float v0 = src[0], v1 = ch + 1 < c ? src[plane] : 0.0f;
    check_range<BF16>(v0, ovf);
    check_range<BF16>(v1, ovf);
    reinterpret_cast<uint32_t*>(out)[i] = pack2<BF16>(v0, v1);
  }
}

// --input-precision fp16 / bf16: the input arrives as 16-bit NCHW values (converted on the host); only the layout
// changes: one thread per (image, pixel), cs channels written (cs = c: packed; c rounded up to even: the pad zero).
__global__ void nchw16_to_nhwc(const uint16_t* __restrict__ in, long long images_pixels, int plane, int c, int cs, uint16_t* __restrict__ out) {
  GRID_STRIDE(i, images_pixels) {
    const long long img = i / plane, q = i - img * plane;
    const uint16_t* src = in + img * c * plane + q;
    uint16_t* dst = out + i * cs;
    for (int ch = 0; ch < cs; ++ch) dst[ch] = ch < c ? src[static_cast<long long>(ch) * plane] : uint16_t{0};
  }
}

// The packed form (cs = c, any parity), one 16-bit store per value: the cudnn backend's tensors and weights.
template <bool BF16>
__global__ void to_nhwc_packed(const float* __restrict__ in, long long images_pixels, int plane, int c, uint16_t* __restrict__ out, int* ovf) {
  GRID_STRIDE(i, images_pixels) {
    const long long img = i / plane, q = i - img * plane;
    const float* src = in + img * c * plane + q;
    uint16_t* dst = out + i * c;
    for (int ch = 0; ch < c; ++ch) dst[ch] = store_value<BF16>(src[static_cast<long long>(ch) * plane], ovf);
  }
}

// One thread per NCHW output value (coalesced writes). nonfinite (or null): raised where an inf or NaN comes back.
template <bool BF16>
__global__ void from_nhwc(const uint16_t* __restrict__ in, long long total, int plane, int c, int cs, float* __restrict__ out,
                          int* nonfinite) {
  GRID_STRIDE(i, total) {
    const long long q = i % plane, ch = (i / plane) % c, img = i / (static_cast<long long>(plane) * c);
    const float v = to_float<BF16>(in[(img * plane + q) * cs + ch]);
    if (nonfinite && !isfinite(v)) *reinterpret_cast<volatile int*>(nonfinite) = 1;
    out[i] = v;
  }
}

template <bool BF16>
__global__ void act_kernel(uint32_t* x, long long words, int act, float alpha) {
  GRID_STRIDE(i, words) {
    const uint32_t v = x[i];
    x[i] = pack2<BF16>(activate16_alpha(to_float<BF16>(static_cast<uint16_t>(v & 0xffffu)), act, alpha),
                       activate16_alpha(to_float<BF16>(static_cast<uint16_t>(v >> 16)), act, alpha));
  }
}

// The 16-bit values of a flat tensor of `count` (the cudnn backend's packed NHWC of an odd channel count: no pairs).
template <bool BF16>
__global__ void act_values_kernel(uint16_t* x, long long count, int act, float alpha) {
  GRID_STRIDE(i, count) x[i] = from_float<BF16>(activate16_alpha(to_float<BF16>(x[i]), act, alpha));
}

// One thread per (image, output pixel, channel) of a packed NHWC tensor of C channels (any count: the cudnn backend's).
template <bool BF16>
__global__ void pool_values_kernel(const uint16_t* __restrict__ in, long long total, Shape is, PoolParams p, Shape os,
                                   uint16_t* __restrict__ out) {
  GRID_STRIDE(i, total) {
    const int c = static_cast<int>(i % is.c);
    const long long pix = i / is.c;
    const int ox = static_cast<int>(pix % os.w), oy = static_cast<int>((pix / os.w) % os.h);
    const long long img = pix / (static_cast<long long>(os.w) * os.h);
    const PoolWindow w = p.window(is.h, is.w, oy, ox);
    const bool is_max = p.kind == PoolKind::max;
    float a = is_max ? -FLT_MAX : 0.0f;
    for_window<uint16_t>(p, w, [&](int y, int x) { return in[((img * is.h + y) * is.w + x) * is.c + c]; }, [&](uint16_t h) {
      const float f = to_float<BF16>(h);
      a = is_max ? fmaxf(a, f) : a + f;
    });
    out[i] = from_float<BF16>(is_max ? a : a / w.count);
  }
}

// One thread per (image, output pixel, run of VEC channel pairs): VEC = 4 reads and writes 16 bytes at a time where
// the stored channels are a multiple of 8 (every VGG and AlexNet pooling), else VEC = 1, one 32-bit pair. Index is
// unsigned where the words fit in 32 bits (its divisions a few instructions each, where 64-bit ones are a call of about
// a hundred: the 64-bit form of this kernel was issue-bound at 45 % of DRAM on VGG-16's pools); long long otherwise.
// MAX: max pooling, else average. The values are those of the FP32 kernel (max and the sum in FP32, one rounding).
template <bool BF16, bool MAX, int VEC, class Index>
__global__ void __launch_bounds__(256) pool_kernel(const uint32_t* __restrict__ in, Index total, Shape is, PoolParams p, Shape os,
                                                  int cs2, uint32_t* __restrict__ out) {
  using Vec = std::conditional_t<VEC == 4, uint4, uint32_t>;
  const Index runs = static_cast<Index>(cs2 / VEC);
  for (Index i = blockIdx.x * static_cast<Index>(blockDim.x) + threadIdx.x; i < total; i += static_cast<Index>(gridDim.x) * blockDim.x) {
    const Index pix = i / runs, run = i - pix * runs;
    const Index row = pix / static_cast<Index>(os.w);
    const int ox = static_cast<int>(pix - row * static_cast<Index>(os.w));
    const Index img = row / static_cast<Index>(os.h);
    const int oy = static_cast<int>(row - img * static_cast<Index>(os.h));
    const PoolWindow w = p.window(is.h, is.w, oy, ox);
    float a[2 * VEC];
#pragma unroll
    for (int j = 0; j < 2 * VEC; ++j) a[j] = MAX ? -FLT_MAX : 0.0f;
    const Vec* base = reinterpret_cast<const Vec*>(in) + img * static_cast<Index>(is.h) * is.w * runs + run;
    for_window<Vec>(p, w, [&](int y, int x) { return base[(static_cast<Index>(y) * is.w + x) * runs]; }, [&](const Vec& v) {
      const uint32_t* words = reinterpret_cast<const uint32_t*>(&v);
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        const float f0 = to_float<BF16>(static_cast<uint16_t>(words[j] & 0xffffu)), f1 = to_float<BF16>(static_cast<uint16_t>(words[j] >> 16));
        a[2 * j] = MAX ? fmaxf(a[2 * j], f0) : a[2 * j] + f0;
        a[2 * j + 1] = MAX ? fmaxf(a[2 * j + 1], f1) : a[2 * j + 1] + f1;
      }
    });
    Vec o;
    uint32_t* ow = reinterpret_cast<uint32_t*>(&o);
#pragma unroll
    for (int j = 0; j < VEC; ++j) ow[j] = MAX ? pack2<BF16>(a[2 * j], a[2 * j + 1]) : pack2<BF16>(a[2 * j] / w.count, a[2 * j + 1] / w.count);
    reinterpret_cast<Vec*>(out)[i] = o;
  }
}

template <bool BF16, bool MAX>
void launch_pool(const uint32_t* in, int n, Shape is, const PoolParams& p, Shape os, int cs2, uint32_t* out, cudaStream_t st) {
  const bool wide = cs2 % 4 == 0 && reinterpret_cast<uintptr_t>(in) % 16 == 0 && reinterpret_cast<uintptr_t>(out) % 16 == 0;
  const long long words = static_cast<long long>(n) * os.h * os.w * cs2;
  const long long in_words = static_cast<long long>(n) * is.h * is.w * cs2;
  const long long total = wide ? words / 4 : words;
  const unsigned blocks = grid_for(total);
  if (std::max(words, in_words) < (1LL << 31)) {
    const auto t = static_cast<unsigned>(total);
    if (wide) pool_kernel<BF16, MAX, 4, unsigned><<<blocks, 256, 0, st>>>(in, t, is, p, os, cs2, out);
    else pool_kernel<BF16, MAX, 1, unsigned><<<blocks, 256, 0, st>>>(in, t, is, p, os, cs2, out);
  } else {
    if (wide) pool_kernel<BF16, MAX, 4, long long><<<blocks, 256, 0, st>>>(in, total, is, p, os, cs2, out);
    else pool_kernel<BF16, MAX, 1, long long><<<blocks, 256, 0, st>>>(in, total, is, p, os, cs2, out);
  }
}

// One thread per (pixel, channel pair): b = a * (k + alpha / size * sum of squares over the window)^-beta, the
// window clipped to the C real channels (the pad channel is written as zero).
template <bool BF16>
__global__ void lrn_kernel(const uint16_t* __restrict__ in, long long total, int c, int cs, LrnParams p, uint16_t* __restrict__ out, int* ovf) {
  const int half = p.size / 2;
  const float scale = p.alpha / p.size;
  GRID_STRIDE(i, total) {
    const long long pix = i / (cs / 2);
    const int c0 = static_cast<int>(i - pix * (cs / 2)) * 2;
    const uint16_t* at = in + pix * cs;
    float r[2];
    for (int h = 0; h < 2; ++h) {
      const int ch = c0 + h;
      if (ch >= c) { r[h] = 0.0f; continue; }
      float sum = 0.0f;
      for (int j = max(0, ch - half); j <= min(c - 1, ch + half); ++j) {
        const float v = to_float<BF16>(at[j]);
        sum = fmaf(v, v, sum);
      }
      r[h] = to_float<BF16>(at[ch]) * lrn_factor(p, scale, sum);
      check_range<BF16>(r[h], ovf);
    }
    reinterpret_cast<uint32_t*>(out)[i] = pack2<BF16>(r[0], r[1]);
  }
}

// One block per image over its H*W*Cs stored values (the pad channels skipped and written as zero).
template <bool BF16>
__global__ void softmax_kernel(const uint16_t* __restrict__ in, int values, int c, int cs, uint16_t* __restrict__ out) {
  __shared__ float red[32];
  const uint16_t* x = in + static_cast<long long>(blockIdx.x) * values;
  uint16_t* y = out + static_cast<long long>(blockIdx.x) * values;
  float m = -FLT_MAX;
  for (int i = threadIdx.x; i < values; i += blockDim.x)
    if (i % cs < c) m = fmaxf(m, to_float<BF16>(x[i]));
  m = block_reduce<true>(m, red);
  float s = 0.0f;
  for (int i = threadIdx.x; i < values; i += blockDim.x)
    if (i % cs < c) s += expf(to_float<BF16>(x[i]) - m);
  s = block_reduce<false>(s, red);
  for (int i = threadIdx.x; i < values; i += blockDim.x)
    y[i] = from_float<BF16>(i % cs < c ? expf(to_float<BF16>(x[i]) - m) / s : 0.0f);
}

}  // namespace

void to_half_nhwc(const float* in, int n, Shape s, uint16_t* out, bool bf16, int* ovf, cudaStream_t st) {
  const long long work = static_cast<long long>(n) * s.h * s.w;
  const int cs = stored_channels(s.c);
  if (cs > 64) {  // many channels a pixel: a thread per channel pair (an image's input has 1 to 4 channels)
    const long long pairs = work * (cs / 2);
    if (bf16) to_nhwc_pairs<true><<<grid_for(pairs), 256, 0, st>>>(in, pairs, s.h * s.w, s.c, cs, out, nullptr);
    else to_nhwc_pairs<false><<<grid_for(pairs), 256, 0, st>>>(in, pairs, s.h * s.w, s.c, cs, out, ovf);
  } else if (bf16) {
    to_nhwc<true><<<grid_for(work), 256, 0, st>>>(in, work, s.h * s.w, s.c, cs, out, nullptr);
  } else {
    to_nhwc<false><<<grid_for(work), 256, 0, st>>>(in, work, s.h * s.w, s.c, cs, out, ovf);
  }
  CUDA_CHECK_LAUNCH();
}

void input16_to_nhwc(const uint16_t* in, int n, Shape s, bool packed, uint16_t* out, cudaStream_t st) {
  const long long work = static_cast<long long>(n) * s.h * s.w;
  nchw16_to_nhwc<<<grid_for(work), 256, 0, st>>>(in, work, s.h * s.w, s.c, packed ? s.c : stored_channels(s.c), out);
  CUDA_CHECK_LAUNCH();
}

void from_half_nhwc(const uint16_t* in, int n, Shape s, float* out, bool bf16, cudaStream_t st) {
  const long long total = static_cast<long long>(n) * s.size();
  const int cs = stored_channels(s.c);
  if (bf16) from_nhwc<true><<<grid_for(total), 256, 0, st>>>(in, total, s.h * s.w, s.c, cs, out, nullptr);
  else from_nhwc<false><<<grid_for(total), 256, 0, st>>>(in, total, s.h * s.w, s.c, cs, out, nullptr);
  CUDA_CHECK_LAUNCH();
}

void to_half_packed(const float* in, int n, Shape s, uint16_t* out, bool bf16, int* ovf, cudaStream_t st) {
  const long long work = static_cast<long long>(n) * s.h * s.w;
  if (bf16) to_nhwc_packed<true><<<grid_for(work), 256, 0, st>>>(in, work, s.h * s.w, s.c, out, nullptr);
  else to_nhwc_packed<false><<<grid_for(work), 256, 0, st>>>(in, work, s.h * s.w, s.c, out, ovf);
  CUDA_CHECK_LAUNCH();
}

void from_half_packed(const uint16_t* in, int n, Shape s, float* out, bool bf16, int* nonfinite, cudaStream_t st) {
  const long long total = static_cast<long long>(n) * s.size();
  if (bf16) from_nhwc<true><<<grid_for(total), 256, 0, st>>>(in, total, s.h * s.w, s.c, s.c, out, nullptr);
  else from_nhwc<false><<<grid_for(total), 256, 0, st>>>(in, total, s.h * s.w, s.c, s.c, out, nonfinite);
  CUDA_CHECK_LAUNCH();
}

void act_half(uint16_t* x, int n, Shape s, const ActParams& a, bool bf16, cudaStream_t st, bool packed) {
  if (packed && s.c % 2) {  // an odd count of values per pixel: no pairs to take
    const long long count = static_cast<long long>(n) * s.size();
    if (bf16) act_values_kernel<true><<<grid_for(count), 256, 0, st>>>(x, count, act_code(a.act), a.alpha);
    else act_values_kernel<false><<<grid_for(count), 256, 0, st>>>(x, count, act_code(a.act), a.alpha);
    CUDA_CHECK_LAUNCH();
    return;
  }
  const long long words = static_cast<long long>(n) * s.h * s.w * stored_channels(s.c) / 2;
  auto* w = reinterpret_cast<uint32_t*>(x);
  if (bf16) act_kernel<true><<<grid_for(words), 256, 0, st>>>(w, words, act_code(a.act), a.alpha);
  else act_kernel<false><<<grid_for(words), 256, 0, st>>>(w, words, act_code(a.act), a.alpha);
  CUDA_CHECK_LAUNCH();
}

void pool_half(const uint16_t* in, int n, Shape is, const PoolParams& p, Shape os, uint16_t* out, bool bf16, cudaStream_t st,
               bool packed) {
  if (packed && is.c % 2) {
    const long long total = static_cast<long long>(n) * os.size();
    if (bf16) pool_values_kernel<true><<<grid_for(total), 256, 0, st>>>(in, total, is, p, os, out);
    else pool_values_kernel<false><<<grid_for(total), 256, 0, st>>>(in, total, is, p, os, out);
    CUDA_CHECK_LAUNCH();
    return;
  }
  const int cs2 = stored_channels(is.c) / 2;
  const auto* src = reinterpret_cast<const uint32_t*>(in);
  auto* dst = reinterpret_cast<uint32_t*>(out);
  const bool is_max = p.kind == PoolKind::max;
  if (bf16) is_max ? launch_pool<true, true>(src, n, is, p, os, cs2, dst, st) : launch_pool<true, false>(src, n, is, p, os, cs2, dst, st);
  else is_max ? launch_pool<false, true>(src, n, is, p, os, cs2, dst, st) : launch_pool<false, false>(src, n, is, p, os, cs2, dst, st);
  CUDA_CHECK_LAUNCH();
}

void lrn_half(const uint16_t* in, int n, Shape s, const LrnParams& p, uint16_t* out, bool bf16, int* ovf, cudaStream_t st) {
  const int cs = stored_channels(s.c);
  const long long total = static_cast<long long>(n) * s.h * s.w * cs / 2;
  if (bf16) lrn_kernel<true><<<grid_for(total), 256, 0, st>>>(in, total, s.c, cs, p, out, nullptr);
  else lrn_kernel<false><<<grid_for(total), 256, 0, st>>>(in, total, s.c, cs, p, out, ovf);
  CUDA_CHECK_LAUNCH();
}

void softmax_half(const uint16_t* in, int n, Shape s, uint16_t* out, bool bf16, cudaStream_t st) {
  const int cs = stored_channels(s.c), values = s.h * s.w * cs;
  if (bf16) softmax_kernel<true><<<n, 256, 0, st>>>(in, values, s.c, cs, out);
  else softmax_kernel<false><<<n, 256, 0, st>>>(in, values, s.c, cs, out);
  CUDA_CHECK_LAUNCH();
}

}  // namespace bs::cuda::half
