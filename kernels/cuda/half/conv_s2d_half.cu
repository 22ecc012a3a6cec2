// Convolution version v38 (half_ops.hpp): s2d-half, a convolution over fewer than 8 channels (AlexNet's conv1: 3 + 1
// stored channels, 11x11 stride 4; VGG's conv1_1: 3 + 1, 3x3 stride 1) rewritten as a stride-1 convolution over a
// space-to-depth tensor whose pixels are whole 8-channel runs, which the GEMM engine auto picks for it (v39-v47 on
// wgmma on Hopper; else v20, or v21 where v20's tiles would not fill the GPU twice) gathers 16 bytes at a time.
//
// Why: v19-v21 gather a pixel's channels in runs of up to 16 bytes; with 4 stored channels a run is 8 bytes, and conv1
// ran at 54 TFLOP/s (4.0 ms at fp16 batch 1024) where conv2 runs at 165; and v39-v47 (wgmma) take only whole runs.
// Stride S groups the input into S x S blocks: output (oy, ox) reads padded rows oy S + ky, that is block row
// oy + ky / S at offset ky % S. So with
//   T[n][Y][X][(r, q, c)] = x[n][c][Y S + r - ph][X S + q - pw]   (0 outside the image and for c >= C)
//   W'[m][(r, q, c)][KY][KX] = w[m][c][KY S + r][KX S + q]         (0 past the kernel and for c >= C)
// the layer is a convolution of T with W' of ceil(KH / S) x ceil(KW / S) taps, stride 1, no padding, over S x S x Ct
// channels, Ct the fewest channels from C up that make S S Ct a multiple of 8: C itself at stride 4, the stored count
// (C + 1) for 3 channels at stride 2, 8 at stride 1 or 3 (where the rewrite is only the padding, spatial and to 8
// channels: VGG's conv1_1 has K = 3 x 3 x 8 = 72, where v20's own is 3 x 3 x 4 = 36 in 8-byte runs).
// For conv1: 3 x 3 taps over 48 channels, K = 432, where the engine's own K is 11 x 11 x 4 = 484; the first form kept
// the pad channel (K = 576) and gained 5 % (experiments/precision-half.md). The repack is one pass over the input that
// writes T (conv1 at batch 1024: 320 MB; conv1_1 at batch 256: 209 MB); as the first layer it reads the FP32 (or
// --input-precision's 16-bit) NCHW input itself, in place of the conversion pass every other version needs.
#include <algorithm>
#include <climits>
#include <numeric>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/engine/epilogue.cuh"
#include "kernels/cuda/engine/fast_div.hpp"
#include "kernels/cuda/half/half_ops.hpp"
#include "kernels/cuda/half/half_types.cuh"
#include "kernels/cuda/impl_hooks.hpp"
#include "kernels/cuda/ops/ops.hpp"
#include "kernels/plan/plan.hpp"
#include "weights_tools/error.hpp"

namespace bs::cuda::half {
namespace {

constexpr int kMaxStride = 4;

struct S2d {  // a kernel argument: plain values only
  int s, cs, c, kh, kw, ph, pw;  // stride, the input's stored and real channels, the kernel, top and left padding
  int ct;                        // channels per pixel in T: the fewest from C up that make S S Ct a multiple of 8
  int c2, kh2, kw2, h2, w2, m;   // T's channels S S Ct, the new kernel, T's rows and columns, the filters
  FastDiv h2_div, words_div;     // by h2 and by T's words a pixel (c2 / 2), for the repack's indices
};

S2d s2d_of(const ConvParams& c, Shape in, Shape out) {
  S2d g;
  g.s = c.sh;
  g.cs = stored_channels(in.c);
  g.c = in.c;
  g.kh = c.kh;
  g.kw = c.kw;
  g.ph = c.ph;
  g.pw = c.pw;
  const int step = 8 / std::gcd(g.s * g.s, 8);
  g.ct = (g.c + step - 1) / step * step;
  g.c2 = g.s * g.s * g.ct;
  g.kh2 = (c.kh + g.s - 1) / g.s;
  g.kw2 = (c.kw + g.s - 1) / g.s;
  g.h2 = out.h + g.kh2 - 1;
  g.w2 = out.w + g.kw2 - 1;
  g.m = c.filters;
  g.h2_div = FastDiv(static_cast<uint32_t>(g.h2));
  g.words_div = FastDiv(static_cast<uint32_t>(g.c2 / 2));
  return g;
}
S2d s2d_of(const Layer& l) { return s2d_of(std::get<ConvParams>(l.op), l.in, l.out); }

// The stride-1 layer the engine runs (no weights of its own: the prepared ones are W').
Layer inner_layer(const S2d& g, Shape out) {
  ConvParams p;
  p.filters = g.m;
  p.kh = g.kh2;
  p.kw = g.kw2;
  return {"", p, {g.c2, g.h2, g.w2}, out};
}

// The engine's version for the inner layer: auto's (v39-v47, v60 or v61 on wgmma where the GPU has it, else v21 where
// v20's tiles would give fewer than two waves, else v20).
int inner_version(const Layer& inner, int n) { return heuristic_version(inner, n, Precision::fp16, sm_count())->number; }

// The prepared weights: the engine's layout for v19-v21, then v39-v47's (K-major), then W' in FP32.
size_t wgmma_offset(const Layer& inner) { return conv_half_prepared_floats(inner); }
size_t w_offset(const Layer& inner) { return wgmma_offset(inner) + wgmma_half_prepared_floats(inner); }

long long t_words(const S2d& g, int n) { return static_cast<long long>(n) * g.h2 * g.w2 * g.c2 / 2; }

enum Src { kF32, kH16, kNhwc };

constexpr int kMaxWords = kMaxStride * kMaxStride * 8 / 2;  // T's words per pixel: S S Ct / 2 (Ct <= 8)

// The 16-bit inputs, and FP32 ones at an (S, Ct) s2d_warp_kernel (below) is not built for. A block per (image, block
// row Y) in turn (rows, rows + grid, ...: one wave of blocks, so that a block tabulates once for many rows), threads over
// (block column X, word of T): consecutive threads write
// consecutive words and read the few pixels of one S x S block (through L1). Where each of a word's two channels
// j = (r S + q) Ct + c comes from, (r, q, c), is tabulated once per block, so that a thread's work is one division (a
// FastDiv: the compiler's division by a runtime int was a quarter of the instructions) and its loads. With a block per
// row, at 256 images 14,592 blocks each built the table and met a barrier for one row: ncu read the kernel at 87 us for
// 238 MB, issue-bound with barrier stalls 4.7 per issue (experiments/results/h200-wgmma-half-epilogue/).
// A thread takes kS2dUnroll words a round, a block's width apart, and issues all their loads before its first store:
// AlexNet's conv1 row is 57 x 24 words, so 256 threads take it in one round with 12 loads each in flight (one word at a
// time, the row took six DRAM latencies in turn; experiments/batch1-latency.md, "v38's repack: every load of a thread's
// round in flight").
constexpr int kS2dUnroll = 6;

template <bool BF16, int SRC>
__global__ void __launch_bounds__(256) s2d_kernel(const void* __restrict__ in, Shape is, S2d g, unsigned rows, uint32_t* __restrict__ t,
                                                 int* ovf) {
  __shared__ int2 from[kMaxWords][2];  // {r << 16 | q, c} of each half of each word
  const int words = g.c2 / 2;
  for (int j = threadIdx.x; j < 2 * words; j += blockDim.x) {
    const int pix = j / g.ct;
    from[j / 2][j % 2] = make_int2((pix / g.s) << 16 | (pix % g.s), j - pix * g.ct);
  }
  __syncthreads();
  const long long plane = static_cast<long long>(is.h) * is.w;
  const int total = g.w2 * words;
  for (unsigned br = blockIdx.x; br < rows; br += gridDim.x) {
    const long long img = g.h2_div.div(br);
    const int yb = static_cast<int>(br - img * g.h2);
    uint32_t* row = t + static_cast<long long>(br) * g.w2 * words;
    for (int i0 = threadIdx.x; i0 < total; i0 += kS2dUnroll * blockDim.x) {
      float v[kS2dUnroll][2];
      uint16_t raw[kS2dUnroll][2];
#pragma unroll
      for (int u = 0; u < kS2dUnroll; ++u) {
        const int i = i0 + u * blockDim.x;
        const int xb = static_cast<int>(g.words_div.div(static_cast<uint32_t>(i))), wd = i - xb * words;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          v[u][h] = 0.0f;
          raw[u][h] = 0;
          if (i < total) {
            const int2 f = from[wd][h];
            const int y = yb * g.s + (f.x >> 16) - g.ph, x = xb * g.s + (f.x & 0xffff) - g.pw, c = f.y;
            const bool ok = c < g.c && static_cast<unsigned>(y) < static_cast<unsigned>(is.h) && static_cast<unsigned>(x) < static_cast<unsigned>(is.w);
            if (ok) {
              if constexpr (SRC == kNhwc) raw[u][h] = static_cast<const uint16_t*>(in)[((img * is.h + y) * is.w + x) * g.cs + c];
              else if constexpr (SRC == kH16) raw[u][h] = static_cast<const uint16_t*>(in)[(img * g.c + c) * plane + static_cast<long long>(y) * is.w + x];
              else v[u][h] = static_cast<const float*>(in)[(img * g.c + c) * plane + static_cast<long long>(y) * is.w + x];
            }
          }
        }
      }
#pragma unroll
      for (int u = 0; u < kS2dUnroll; ++u) {
        const int i = i0 + u * blockDim.x;
        if (i >= total) break;
        if constexpr (SRC == kF32) {
          check_range<BF16>(v[u][0], ovf);
          check_range<BF16>(v[u][1], ovf);
          row[i] = pack2<BF16>(v[u][0], v[u][1]);
        } else {
          row[i] = static_cast<uint32_t>(raw[u][0]) | static_cast<uint32_t>(raw[u][1]) << 16;
        }
      }
    }
  }
}

// The FP32 NCHW input (v38 as the first layer) at compile-time S and CT (AlexNet's conv1: 4 and 3; S 2 and CT 4; S 1 and
// CT 8): a warp per segment, 32 / S consecutive pixels of T in one block row (a row of w2 pixels has ceil(w2 S / 32)
// segments, the last one short), segments (image, Y, segment) in turn. For each channel c and block row r' the warp reads
// 32 consecutive floats of input row Y S + r' - ph (lane l column X0 S + l - pw: a 128-byte run, one or two lines) into
// its own slice of shared memory, [c][r'][33] (rows of 33 floats: the reads below fall in 32 different banks); after
// __syncwarp lane (p, r) = (l / S, l % S) reads its pixel's run of row r, [c][r][S p + q] for q < S and c < CT, and stores
// T's channels (r S + q) CT + c as S CT / 2 words (AlexNet: 6 words, 24 bytes; 16 bytes for the other two), the warp's
// 8 pixels' runs consecutive (768 bytes).
// Its forms, measured on the H200 (experiments/results/h200-b16/, calls 8, 9 and 11): s2d_kernel's tables cost about 100
// instructions a word (3.9 M warp instructions for conv1 at 16 images, issue-bound, 7.8 us under ncu); a thread a whole
// pixel (48 loads in flight, 78 registers) 8.5 us, latency-bound at 12 warps a multiprocessor; a thread a (pixel, block
// row), 12 loads of 4 bytes each touching four lines a warp, 7.2 us, and conv1 0.93-0.98x s2d_kernel's time at 16-1,024
// images. This form issues twice that one's instructions (2.4 M at 16 images) and runs as long at 16 images (7.2 us
// under ncu, one wave of blocks, long-scoreboard stalls 5.2 an issue where 16; conv1 1.00-1.01x in fp16, 1.02x in bf16),
// but from 32 images, where the row form's scattered loads queue, conv1 takes 0.96-0.97x its time in fp16 (1.080 ->
// 1.031-1.043 ms at 1,024), 0.97-0.98x in bf16. The values and their rounding are s2d_kernel's (pack2 of the same
// floats), the range checked once a thread on the largest |value| (as check_range: NaN passes). Blocks of kWarpThreads
// threads, or 64 where those would leave multiprocessors without one (the loop strides by the launch's warps).
constexpr int kWarpThreads = 256;
template <bool BF16, int S, int CT>
__global__ void __launch_bounds__(kWarpThreads) s2d_warp_kernel(const float* __restrict__ in, Shape is, S2d g, unsigned segments,
                                                                int per_row, uint32_t* __restrict__ t, int* ovf) {
  constexpr int RUN = S * CT, WORDS = RUN / 2, PX = 32 / S;
  static_assert(RUN % 4 == 0, "a task's run is whole 8-byte pieces");
  __shared__ float slice[kWarpThreads / 32][CT * S][33];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, p = lane / S, r = lane % S, warps = blockDim.x / 32;
  const long long plane = static_cast<long long>(is.h) * is.w;
  float vmax = 0.0f;
  for (unsigned w = blockIdx.x * warps + warp; w < segments; w += gridDim.x * warps) {
    const unsigned row = w / per_row, img = g.h2_div.div(row);  // w = (img h2 + Y) per_row + segment
    const int x0 = static_cast<int>(w - row * per_row) * PX, yb = static_cast<int>(row - img * g.h2);
    const int x = x0 * S + lane - g.pw;
    const bool xok = static_cast<unsigned>(x) < static_cast<unsigned>(is.w) && x0 + p < g.w2;
#pragma unroll
    for (int c = 0; c < CT; ++c)
#pragma unroll
      for (int rr = 0; rr < S; ++rr) {
        const int y = yb * S + rr - g.ph;
        const bool ok = xok && c < g.c && static_cast<unsigned>(y) < static_cast<unsigned>(is.h);
        slice[warp][c * S + rr][lane] = ok ? __ldg(in + (static_cast<long long>(img) * g.c + c) * plane + static_cast<long long>(y) * is.w + x) : 0.0f;
      }
    __syncwarp();
    float v[RUN];
#pragma unroll
    for (int c = 0; c < CT; ++c)
#pragma unroll
      for (int q = 0; q < S; ++q) v[q * CT + c] = slice[warp][c * S + r][S * p + q];
    __syncwarp();  // the slice is rewritten by the next segment
    if (x0 + p >= g.w2) continue;
    uint32_t wd[WORDS];
#pragma unroll
    for (int j = 0; j < WORDS; ++j) {
      vmax = fmaxf(vmax, fmaxf(fabsf(v[2 * j]), fabsf(v[2 * j + 1])));
      wd[j] = pack2<BF16>(v[2 * j], v[2 * j + 1]);
    }
    uint32_t* dst = t + (static_cast<long long>(row) * g.w2 + x0 + p) * (S * WORDS) + r * WORDS;
    if constexpr (WORDS % 4 == 0) {
#pragma unroll
      for (int j = 0; j < WORDS / 4; ++j) reinterpret_cast<uint4*>(dst)[j] = make_uint4(wd[4 * j], wd[4 * j + 1], wd[4 * j + 2], wd[4 * j + 3]);
    } else {
#pragma unroll
      for (int j = 0; j < WORDS / 2; ++j) reinterpret_cast<uint2*>(dst)[j] = make_uint2(wd[2 * j], wd[2 * j + 1]);
    }
  }
  check_range<BF16>(vmax, ovf);
}

// The (S, Ct) pairs s2d_warp_kernel is built for: 3 channels at stride 4 (AlexNet), 2 (Ct = the stored 4) and 1 (Ct = 8).
bool warp_form(const S2d& g) { return (g.s == 4 && g.ct == 3) || (g.s == 2 && g.ct == 4) || (g.s == 1 && g.ct == 8); }

// W' (M, S S Ct, KH', KW') in FP32 from w (M, C, KH, KW), zeros past the kernel and in the pad channel.
__global__ void s2d_weights_kernel(const float* __restrict__ w, int m, S2d g, float* __restrict__ dst) {
  const long long total = static_cast<long long>(m) * g.c2 * g.kh2 * g.kw2;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total; i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const int kx2 = static_cast<int>(i % g.kw2), ky2 = static_cast<int>((i / g.kw2) % g.kh2);
    const int cc = static_cast<int>((i / (static_cast<long long>(g.kw2) * g.kh2)) % g.c2);
    const long long f = i / (static_cast<long long>(g.kw2) * g.kh2 * g.c2);
    const int c = cc % g.ct, q = (cc / g.ct) % g.s, r = cc / (g.ct * g.s);
    const int ky = ky2 * g.s + r, kx = kx2 * g.s + q;
    dst[i] = c < g.c && ky < g.kh && kx < g.kw ? w[((f * g.c + c) * g.kh + ky) * g.kw + kx] : 0.0f;
  }
}

size_t weight_floats(const S2d& g) { return static_cast<size_t>(g.m) * g.c2 * g.kh2 * g.kw2; }

Support s2d_half_supports(const Layer& l, bool pool) {
  if (pool) return {false, "v38 fuses the activation that follows, not pooling"};
  const ConvParams& c = std::get<ConvParams>(l.op);
  if (c.groups != 1) return {false, "v38 runs ungrouped convolutions only"};
  if (c.sh != c.sw || c.sh > kMaxStride)
    return {false, "v38 rewrites strides of 1 to " + std::to_string(kMaxStride) + ", the same along both axes"};
  if (stored_channels(l.in.c) >= 8)
    return {false, "v38 is for inputs of fewer than 8 channels (this layer has " + std::to_string(l.in.c) +
                       "): the engine gathers 8 or more in whole 16-byte runs itself"};
  const S2d g = s2d_of(l);
  if (c.kh < c.sh || c.kw < c.sw) return {false, "v38 needs a kernel at least as large as its stride"};
  if (static_cast<long long>(g.h2) * g.s > INT_MAX / 4 || static_cast<long long>(g.w2) * g.s * g.c2 > INT_MAX / 4)
    return {false, "v38: the rewritten image is too large"};
  return conv_half_supports(20, inner_layer(g, l.out), false);
}

size_t s2d_half_prepared_floats(const Layer& l) {
  const S2d g = s2d_of(l);
  return w_offset(inner_layer(g, l.out)) + weight_floats(g);
}

size_t s2d_half_workspace_floats(const Layer& l, int n, bool bf16) {
  const S2d g = s2d_of(l);
  const Layer inner = inner_layer(g, l.out);
  const int v = inner_version(inner, n);
  const size_t engine = is_wgmma_half(v) ? wgmma_half_workspace_floats(v, inner, n, bf16)
                                    : std::max(conv_half_workspace_floats(20, inner, n, bf16), conv_half_workspace_floats(21, inner, n, bf16));
  return static_cast<size_t>(t_words(g, n)) + engine;
}

void s2d_half_prepare(int, const float* w, const Layer& l, bool bf16, float* prepared, cudaStream_t s) {
  const S2d g = s2d_of(l);
  const Layer inner = inner_layer(g, l.out);
  float* wt = prepared + w_offset(inner);  // W' in FP32, then the engines' layouts of it
  s2d_weights_kernel<<<grid_for(static_cast<long long>(weight_floats(g))), 256, 0, s>>>(w, g.m, g, wt);
  CUDA_CHECK_LAUNCH();
  conv_half_prepare(20, wt, inner, bf16, prepared, s);
  if (wgmma_half_supports(39, inner).ok) wgmma_half_prepare(39, wt, inner, bf16, prepared + wgmma_offset(inner), s);
}

void s2d_half_forward(int, const HalfConvArgs& a, cudaStream_t s) {
  if (!a.prepared) fail("conv v38", "weights were not prepared");
  const S2d g = s2d_of(*a.p, a.is, a.os);
  const Layer inner = inner_layer(g, a.os);
  auto* t = reinterpret_cast<uint32_t*>(a.workspace);
  const long long rows = static_cast<long long>(a.n) * g.h2;  // (image, block row)
  if (rows > INT_MAX) fail("conv v38", "batch " + std::to_string(a.n) + " gives more than 2^31 block rows; use a smaller batch");
  const auto r = static_cast<unsigned>(rows);
  const void* src = a.in_f32 ? static_cast<const void*>(a.in_f32) : a.in_nchw16 ? static_cast<const void*>(a.in_nchw16) : a.in;
  const int kind = a.in_f32 ? kF32 : a.in_nchw16 ? kH16 : kNhwc;
  // one wave: as many blocks as the GPU holds at once (resident_blocks, of this instantiation), each taking rows in turn
  const auto go = [&](auto kernel) {
    static const int resident = resident_blocks(kernel, 256, 0);
    kernel<<<static_cast<unsigned>(std::min<long long>(rows, resident)), 256, 0, s>>>(src, a.is, g, r, t, a.ovf);
  };
  // the FP32 input at the (S, Ct) of s2d_warp_kernel: a warp a segment, as many blocks as they need up to one wave;
  // blocks of 2 warps where blocks of 8 would leave multiprocessors without one (AlexNet at 1-2 images: 456 segments an
  // image)
  const int per_row = (g.w2 * g.s + 31) / 32;
  const long long segments = rows * per_row;
  const auto by_warp = [&](auto kernel) {
    const int threads = segments >= (kWarpThreads / 32LL) * sm_count() ? kWarpThreads : 64;
    static const int resident = resident_blocks(kernel, kWarpThreads, 0);
    const long long warps = threads / 32;
    const auto blocks = static_cast<unsigned>(std::min<long long>((segments + warps - 1) / warps, resident * (kWarpThreads / threads)));
    kernel<<<blocks, threads, 0, s>>>(a.in_f32, a.is, g, static_cast<unsigned>(segments), per_row, t, a.ovf);
  };
  auto launch = [&]<bool BF16>() {
    if (kind == kF32 && warp_form(g) && segments < (1LL << 31)) {
      if (g.s == 4) by_warp(s2d_warp_kernel<BF16, 4, 3>);
      else if (g.s == 2) by_warp(s2d_warp_kernel<BF16, 2, 4>);
      else by_warp(s2d_warp_kernel<BF16, 1, 8>);
    } else if (kind == kF32) go(s2d_kernel<BF16, kF32>);
    else if (kind == kH16) go(s2d_kernel<BF16, kH16>);
    else go(s2d_kernel<BF16, kNhwc>);
  };
  if (a.bf16) launch.template operator()<true>();
  else launch.template operator()<false>();
  CUDA_CHECK_LAUNCH();
  HalfConvArgs b = a;
  b.in = reinterpret_cast<const uint16_t*>(t);
  b.in_f32 = nullptr;
  b.in_nchw16 = nullptr;
  b.is = inner.in;
  b.p = &std::get<ConvParams>(inner.op);
  b.workspace = a.workspace + t_words(g, a.n);
  b.workspace_floats = a.workspace_floats - static_cast<size_t>(t_words(g, a.n));
  const int v = inner_version(inner, a.n);
  if (is_wgmma_half(v)) {
    b.prepared = a.prepared + wgmma_offset(inner);
    wgmma_half_forward(v, b, s);
  } else {
    conv_half_forward(v, b, s);
  }
}

}  // namespace
}  // namespace bs::cuda::half

namespace bs::cuda {

void register_conv_s2d_half(Registry& r) {
  static const ImplHooks hooks{.half_conv_prepare = half::s2d_half_prepare,
                               .half_conv_forward = half::s2d_half_forward,
                               .half_reads_model_input = [](int, const Layer&) { return true; }};  // as the first layer, always
  Impl i = cuda_impl(LayerKind::conv, 38, "s2d-half",
                     "a convolution over fewer than 8 channels (AlexNet's conv1, VGG's conv1_1) as a stride-1 convolution over a "
                     "space-to-depth copy of its input (S x S pixels as channels, padded to whole 8-channel runs), run by auto's engine for it (v39-v47, "
                     "v60 or v61 on wgmma where the GPU has it, else v20/v21) in 16-byte gathers; as the first layer it reads the model's input itself (--precision fp16 or bf16)",
                     &hooks);
  i.shapes = "stride 1-4 (equal), fewer than 8 input channels, a kernel at least as large as the stride, no groups";
  i.math = "fp16/bf16";
  i.precisions = {Precision::fp16, Precision::bf16};
  i.fuses_act = true;
  i.prep_layout = 38;
  i.supports = [](const Layer& l, const Epilogue& e) { return half::s2d_half_supports(l, e.pool2x2); };
  i.workspace_floats = [](const Layer& l, Shape, int n, Precision p) { return half::s2d_half_workspace_floats(l, n, p == Precision::bf16); };
  i.prepared_floats = [](const Layer& l, Shape, Precision) { return half::s2d_half_prepared_floats(l); };
  r.add(std::move(i));
}

}  // namespace bs::cuda
