// Convolution version v58 (band-half): ECE 408's two convolutions in FP16 / BF16 with the weights held in registers:
// conv1 as a product by a banded weight matrix, conv2 as v22's product with its operands' roles swapped.
//
// Why: v22's conv1 (1x48x48 -> 6x44x44, 5x5, activation and 2x2 max pool fused) is an implicit GEMM with the pixels as
// rows: each 16-pixel tile gathers its im2col rows from shared memory, 8 loads per 2 MMAs, and ncu has it at 83 % of
// the L1's wavefronts (experiments/ece408-gpu.md, "Where the time is now"). Neighbouring pixels share 4 of their 5
// window columns, and gathering rows reads each input value up to 25 times.
//
// Here the weights carry the window instead. For 8 output columns x0..x0+7 of one output row, the 12 input columns
// x0..x0+11 of the 5 input rows below it are one column of B (k = (ky, c): 60 values, padded to 64, four k-steps),
// and A is the banded matrix A[(f, x), (ky, c)] = w[f][ky][c - x] (zero outside the 5 taps). A's 48 rows (6 filters x
// 8 columns) are three m16 tiles, made once and held in registers (48 words a lane); B's 8 columns are 8 output
// positions, so one 32-bit load of two neighbouring input values feeds 3 MMAs. Per image: 33 sets of 8 positions,
// 4 k-steps, 12 MMAs and 8 loads a set: a quarter of v22's loads for 1.5x its MMAs (the band's zeros: 60 products a
// value where 25 are needed).
//
// A set is 4 output rows x 2 column blocks: MMA column n = 2q + j is row 4 quad + 2 (q & 1) + j of column block
// x0 / 8 = 2 (set % 3) + (q >> 1), so a lane's two accumulator columns (2t, 2t + 1) are the two rows of one pooling
// window; A's rows are ordered so that its two rows (g, g + 8) are the window's two columns of one filter, and a lane
// pools in registers, with one shuffle per filter pair to pack the output. The 8 positions' row starts then fall in different
// 4-bank groups: the loads are free of bank conflicts where a lane's k pairs do not cross a kernel row.
//
// Each warp takes whole images: the next image's raw words land by cp.async while the current one is multiplied,
// then are converted to 16-bit rows (FP32 input: with fp16's range check) in a buffer of their own.
//
// Measured (H200, 10,000 images, experiments/ece408-gpu.md, "conv v58"): conv1 0.089 -> 0.063 ms, conv2 0.093 -> 0.082;
// conv2 in one block of 27 warps an SM instead of two of 9 ("conv2 in one block an SM"): 0.0858 -> 0.0784 (Op Times).
#include <cuda_pipeline.h>

#include <algorithm>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/engine/epilogue.cuh"
#include "kernels/cuda/engine/gemm_math.cuh"
#include "kernels/cuda/half/activate16.cuh"
#include "kernels/cuda/half/band_conv1.cuh"
#include "kernels/cuda/half/conv1_input.cuh"
#include "kernels/cuda/half/half_ops.hpp"
#include "kernels/cuda/half/half_types.cuh"
#include "kernels/cuda/half/set_ring.cuh"
#include "kernels/cuda/impl_hooks.hpp"
#include "weights_tools/error.hpp"

namespace bs::cuda::half {
namespace {

namespace b1 {
using namespace band1;  // the shape, the band's k order and A's fragments (band_conv1.cuh)
constexpr int kWarps = 4, kMinBlocks = 4;
constexpr int kRawWords = H * W;             // FP32 values or (value, pad) pairs: one word a pixel
constexpr int kTail = 8;                     // zeros after the 16-bit image: the last block reads 2 words past row 47
constexpr int kWarpWords = kRawWords + kImgWords + kTail;
constexpr size_t kSmemBytes = sizeof(uint32_t) * kWarps * kWarpWords;
}  // namespace b1

bool is_conv1(Shape in, const ConvParams& p) {
  return in.c == 1 && in.h == b1::H && in.w == b1::W && p.kh == b1::K && p.kw == b1::K && p.filters == b1::M;
}

template <bool BF16, int MODE, int ACT, bool POOL>
__global__ void __launch_bounds__(b1::kWarps * 32, b1::kMinBlocks)
    conv1_band_kernel(const uint32_t* __restrict__ in, const uint32_t* __restrict__ afrag, const float* __restrict__ bias,
                      uint32_t* __restrict__ out, int n, int* ovf) {
  using namespace b1;
  constexpr bool kTrack = ACT != 1 && ACT != 2;
  constexpr int kInWords = MODE == kH16 ? kImgWords : kRawWords;
  float vmax = 0.0f;
  extern __shared__ __align__(16) uint32_t smem_b1[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  uint32_t* land = smem_b1 + warp * kWarpWords;  // the next image's raw words
  uint32_t* img = land + kRawWords;              // the current image, 16-bit rows of RW words, then kTail zeros
  if (lane < kTail) img[kImgWords + lane] = 0u;
  uint32_t a[MT][KS][4];
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int s = 0; s < KS; ++s)
#pragma unroll
      for (int r = 0; r < 4; ++r) a[i][s][r] = afrag[((i * KS + s) * 4 + r) * 32 + lane];
  // Lanes g < 4 hold filter 2i of tile i, lanes g >= 4 filter 2i + 1 (A's rows are ordered so: band_prepare_kernel).
  const bool hi = g >= 4;
  float bv[MT];  // the bias of this lane's filter in each tile
#pragma unroll
  for (int i = 0; i < MT; ++i) bv[i] = bias ? bias[2 * i + hi] : 0.0f;
  // This lane's B column is position g: q = g >> 1, row 2 (q & 1) + (g & 1) of the quad, column block q >> 1 of the pair.
  const int q = g >> 1, pos_off = (2 * (q & 1) + (g & 1)) * RW + (q >> 1) * (XB / 2);
  int off[KS][2];
#pragma unroll
  for (int s = 0; s < KS; ++s)
#pragma unroll
    for (int h = 0; h < 2; ++h) off[s][h] = pos_off + band_word(16 * s + 8 * h + 2 * t);
  const int stride = gridDim.x * kWarps;
  auto fetch = [&](int im) {
    if (im < n) {
      const uint32_t* src = in + static_cast<long long>(im) * kInWords;
      for (int i = lane; i < kInWords / 4; i += 32) __pipeline_memcpy_async(land + 4 * i, src + 4 * i, 16);
    }
    __pipeline_commit();
  };
  int im = blockIdx.x * kWarps + warp;
  fetch(im);
  for (; im < n; im += stride) {
    __pipeline_wait_prior(0);
    __syncwarp();
    // Convert: word w of the 16-bit image holds pixels 2w, 2w + 1 (columns of one row: W is even).
#pragma unroll 4
    for (int w2 = lane; w2 < kImgWords / 2; w2 += 32) {
      uint2 o;
      if constexpr (MODE == kH16) {
        o = *reinterpret_cast<const uint2*>(land + 2 * w2);
      } else if constexpr (MODE == kF32) {
        const float4 x = *reinterpret_cast<const float4*>(land + 4 * w2);
        track<BF16>(vmax, x.x);
        track<BF16>(vmax, x.y);
        track<BF16>(vmax, x.z);
        track<BF16>(vmax, x.w);
        o = make_uint2(pack2<BF16>(x.x, x.y), pack2<BF16>(x.z, x.w));
      } else {
        const uint4 x = *reinterpret_cast<const uint4*>(land + 4 * w2);
        o = make_uint2((x.x & 0xffffu) | (x.y << 16), (x.z & 0xffffu) | (x.w << 16));
      }
      *reinterpret_cast<uint2*>(img + 2 * w2) = o;
    }
    __syncwarp();  // the landing words are read: the next image may land there
    fetch(im + stride);
    uint32_t* o = out + static_cast<long long>(im) * (POOL ? PH * PW * (M / 2) : OH * OW * (M / 2));
#pragma unroll 1
    for (int quad = 0; quad < OH / 4; ++quad) {
      // The quad's 8 load addresses, then each pair of column blocks at an offset known when compiling (the set loop
      // unrolled: no address arithmetic between the loads).
      const uint32_t* ps[KS][2];
#pragma unroll
      for (int s = 0; s < KS; ++s)
#pragma unroll
        for (int h = 0; h < 2; ++h) ps[s][h] = img + 4 * quad * RW + off[s][h];
#pragma unroll
      for (int pair = 0; pair < NXB / 2; ++pair) {
        const int xb0 = 2 * pair;
        float acc[MT][4];
#pragma unroll
        for (int i = 0; i < MT; ++i) acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.0f;
#pragma unroll
        for (int s = 0; s < KS; ++s) {
          const uint32_t b0 = ps[s][0][xb0 * (XB / 2)], b1 = ps[s][1][xb0 * (XB / 2)];
#pragma unroll
          for (int i = 0; i < MT; ++i) gemm::mma_m16n8k16(acc[i], a[i][s], b0, b1, BF16);
        }
        // acc[i]: filter f = 2i + (g >= 4) at columns x, x + 1 (x = 8 xb + 2 (g % 4), xb = xb0 + (t >> 1)) of rows y, y + 1
        // (y = 4 quad + 2 (t & 1)): (x, y), (x, y + 1), (x + 1, y), (x + 1, y + 1). A pooling window is one lane's.
        const int xb = xb0 + (t >> 1), y = 4 * quad + 2 * (t & 1), x = XB * xb + 2 * (g & 3);
        if constexpr (POOL) {
          const int px = x / 2;
          uint32_t word[MT];
#pragma unroll
          for (int i = 0; i < MT; ++i) {
            const float v = activate16_c<ACT>(fmaxf(fmaxf(acc[i][0], acc[i][1]), fmaxf(acc[i][2], acc[i][3])) + bv[i]);
            const float other = __shfl_xor_sync(0xffffffffu, v, 16);  // the other filter of the pair: lane g ^ 4
            word[i] = store_pair<BF16, kTrack>(hi ? other : v, hi ? v : other, vmax);
          }
          // Both lanes of a filter pair hold the window's 3 words: the lower lane stores two, the upper one.
          if (px < PW) {
            uint32_t* d = o + ((y / 2) * PW + px) * (M / 2);
            if (hi) {
              d[2] = word[2];
            } else {
              d[0] = word[0];
              d[1] = word[1];
            }
          }
        } else {
#pragma unroll
          for (int e = 0; e < 4; ++e) {  // (x + e / 2, y + e % 2)
            uint32_t word[MT];
#pragma unroll
            for (int i = 0; i < MT; ++i) {
              const float v = activate16_c<ACT>(acc[i][e] + bv[i]);
              const float other = __shfl_xor_sync(0xffffffffu, v, 16);
              word[i] = store_pair<BF16, kTrack>(hi ? other : v, hi ? v : other, vmax);
            }
            // The lower lane stores the values of column x, the upper one those of column x + 1.
            if (e / 2 == static_cast<int>(hi) && x + e / 2 < OW) {
              uint32_t* d = o + ((y + e % 2) * OW + x + e / 2) * (M / 2);
#pragma unroll
              for (int i = 0; i < MT; ++i) d[i] = word[i];
            }
          }
        }
      }
    }
    __syncwarp();  // every lane's last read of this image is done before the next one is converted over it
  }
  __pipeline_wait_prior(0);  // the last (empty or unneeded) group
  raise_if_over<BF16>(vmax, ovf);
}

// A's fragments as band_pair orders them, in the precision's 16-bit type.
template <bool BF16>
__global__ void band_prepare_kernel(const float* __restrict__ w, uint32_t* __restrict__ dst) {
  using namespace b1;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < kFragWords; i += gridDim.x * blockDim.x) {
    float v[2];
    band_pair(w, i, v);
    dst[i] = pack2<BF16>(v[0], v[1]);
  }
}

template <bool BF16, int MODE, int ACT, bool POOL>
void launch_band(const HalfConvArgs& a, const uint32_t* in, cudaStream_t s) {
  auto kernel = conv1_band_kernel<BF16, MODE, ACT, POOL>;
  static const int blocks_max = resident_blocks(kernel, b1::kWarps * 32, b1::kSmemBytes);
  const int blocks = std::max(1, std::min(blocks_max, (a.n + b1::kWarps - 1) / b1::kWarps));
  kernel<<<blocks, b1::kWarps * 32, b1::kSmemBytes, s>>>(in, reinterpret_cast<const uint32_t*>(a.prepared), a.bias,
                                                         reinterpret_cast<uint32_t*>(a.out), a.n, a.ovf);
}

template <bool BF16>
void band_forward(const HalfConvArgs& a, cudaStream_t s) {
  dispatch_act(a.act >= 0, a.act == 0 ? Act::relu : a.act == 1 ? Act::tanh : Act::sigmoid, [&](auto code) {
    constexpr int A = decltype(code)::value;
    dispatch_conv1_input(a, [&](const uint32_t* in, auto mode, auto pool) {
      launch_band<BF16, decltype(mode)::value, A, decltype(pool)::value>(a, in, s);
    });
  });
  CUDA_CHECK_LAUNCH();
}

bool band_is_conv1(const Layer& l) { return is_conv1(l.in, std::get<ConvParams>(l.op)); }

// ---- conv2 (6x22x22 -> 16x18x18, 5x5, an activation fused): v22's k order and ring of staged 4-image sets, with the
// roles of the operands swapped. The 16 filters are A's 16 rows, held in registers for the whole kernel (40 words a
// lane, where v22 reloads its B fragments from shared memory for every group of tiles), and 8 pixels are B's columns:
// a k-step's two B registers are the same two words of the pixel's NHWC run that v22's A registers read, one MMA per
// 8 pixels. A's rows are ordered so that a lane's rows g and g + 8 are filters 2g and 2g + 1: its accumulators are two
// channel pairs of two pixels, one 32-bit store each, and a warp's store covers 4 whole pixels.
namespace b2 {
constexpr int C = 6, CW = C / 2, H = 22, W = 22, K = 5, M = 16, OH = H - K + 1, OW = W - K + 1, P = OH * OW;
constexpr int KS = 2 * K;  // a k-step is half of one kernel row's 15 words (padded to 16)
__host__ __device__ constexpr int step_words(int s) { return (s / 2) * W * CW + 8 * (s % 2); }
constexpr int IP = 4;                                 // images per set
// One block of 27 warps an SM, each warp 6 tiles of a set. Two blocks of 9 warps were 9 % slower at 10,000 images: 264
// block slots made 250 blocks of 10 sets, so the busiest SMs ran 20 sets where the mean is 18.94 (one block an SM runs
// 19), and 18 warps an SM hid less latency (ncu: 3.7 active warps a scheduler against 6.7; 3.5 % at 4,096 images, where
// both grids are even). At 1,024 images (two sets a block here, one before) it is 0.5 us slower.
constexpr int kTiles = IP * P / 8, kWarps = 27, NT = kTiles / kWarps, kThreads = 32 * kWarps, kGroup = 3;
constexpr int kImgWords = H * W * CW;
constexpr int kStages = 3;
constexpr int kTail = 4;  // zeros after each buffer of the ring: the last pixel's pad pair reads one word past it
constexpr int kRingWords = SetRing<IP, kImgWords, kThreads, kTail>::kWords;
constexpr size_t kSmemBytes = sizeof(uint32_t) * kRingWords;
constexpr int kFragWords = KS * 4 * 32;  // [KS][a0..a3][32 lanes]
static_assert(IP * P % 8 == 0 && kTiles % kWarps == 0 && NT % kGroup == 0 && kImgWords % 4 == 0, "tiling must divide the set");
}  // namespace b2

bool is_conv2(Shape in, const ConvParams& p) {
  return in.c == b2::C && in.h == b2::H && in.w == b2::W && p.kh == b2::K && p.kw == b2::K && p.filters == b2::M;
}

template <bool BF16, int ACT>
__global__ void __launch_bounds__(b2::kThreads, 1)
    conv2_regs_kernel(const uint32_t* __restrict__ in, const uint32_t* __restrict__ afrag, const float* __restrict__ bias,
                      uint32_t* __restrict__ out, int n, int images_per_block, int* ovf) {
  using namespace b2;
  constexpr bool kTrack = ACT != 1 && ACT != 2;
  float vmax = 0.0f;
  extern __shared__ __align__(16) uint32_t smem_b2[];
  uint32_t* xs = smem_b2;  // [kStages][IP][H, W, CW], each buffer followed by kTail zeros
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  // Zeros everywhere first: slots a short last set leaves unfetched are read (and their results dropped), and a pad
  // pair's zero weight times a NaN bit pattern would not be zero.
  for (int i = threadIdx.x; i < kRingWords; i += kThreads) xs[i] = 0u;
  uint32_t a[KS][4];
#pragma unroll
  for (int s = 0; s < KS; ++s)
#pragma unroll
    for (int r = 0; r < 4; ++r) a[s][r] = afrag[(s * 4 + r) * 32 + lane];
  const float bv0 = bias ? bias[2 * g] : 0.0f, bv1 = bias ? bias[2 * g + 1] : 0.0f;
  __syncthreads();
  const int first = blockIdx.x * images_per_block, last = min(n, first + images_per_block);
  const SetRing<IP, kImgWords, kThreads, kTail> ring{xs, in, first, last};
  static_assert(decltype(ring)::kStages == kStages, "the ring holds kStages sets");
  ring.start();
  for (int b0 = first, step = 0; b0 < last; b0 += IP, ++step) {
    const uint32_t* xb = ring.next(b0, step) + t;
    const long long px0 = static_cast<long long>(b0) * P, px_end = static_cast<long long>(last) * P;
#pragma unroll 1
    for (int u0 = 0; u0 < NT; u0 += kGroup) {
      // This lane's B column in each tile of the group: pixel 8u + g of the set.
      const uint32_t* rp[kGroup];
#pragma unroll
      for (int j = 0; j < kGroup; ++j) {
        const int q = 8 * (warp * NT + u0 + j) + g, slot = q / P, p = q % P;
        rp[j] = xb + slot * kImgWords + ((p / OW) * W + p % OW) * CW;
      }
      float acc[kGroup][4];
#pragma unroll
      for (int j = 0; j < kGroup; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;
#pragma unroll
      for (int s = 0; s < KS; ++s)
#pragma unroll
        for (int j = 0; j < kGroup; ++j) gemm::mma_m16n8k16(acc[j], a[s], rp[j][step_words(s)], rp[j][step_words(s) + 4], BF16);
      // acc[j]: filters 2g (0, 1) and 2g + 1 (2, 3) of pixels 8u + 2t (0, 2) and 8u + 2t + 1 (1, 3): word g of each.
#pragma unroll
      for (int j = 0; j < kGroup; ++j) {
        const long long pix = px0 + 8 * (warp * NT + u0 + j) + 2 * t;
#pragma unroll
        for (int e = 0; e < 2; ++e)
          if (pix + e < px_end)
            out[(pix + e) * (M / 2) + g] = store_pair<BF16, kTrack>(activate16_c<ACT>(acc[j][e] + bv0), activate16_c<ACT>(acc[j][2 + e] + bv1), vmax);
      }
    }
  }
  raise_if_over<BF16>(vmax, ovf);
}

// conv2's A fragments: lane (g, t), k-step s: a0 = (filter 2g, word t of the step), a1 = (filter 2g + 1, word t),
// a2 = (filter 2g, word t + 4), a3 = (filter 2g + 1, word t + 4); word q of a kernel row's run is (kx, channel pair) =
// (q / 3, q % 3), the 16th (q = 15) a pad of weight zero.
template <bool BF16>
__global__ void regs_prepare_kernel(const float* __restrict__ w, uint32_t* __restrict__ dst) {
  using namespace b2;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < kFragWords; i += gridDim.x * blockDim.x) {
    const int lane = i % 32, r = (i / 32) % 4, s = i / 128, g = lane / 4, t = lane % 4;
    const int f = 2 * g + (r & 1), q = 8 * (s % 2) + t + 4 * (r >> 1), ky = s / 2;
    float v0 = 0.0f, v1 = 0.0f;
    if (q < K * CW) {
      const int c = 2 * (q % CW), kx = q / CW;
      v0 = w[((f * C + c) * K + ky) * K + kx];
      v1 = w[((f * C + c + 1) * K + ky) * K + kx];
    }
    dst[i] = pack2<BF16>(v0, v1);
  }
}

template <bool BF16>
void regs_forward(const HalfConvArgs& a, cudaStream_t s) {
  dispatch_act(a.act >= 0, a.act == 0 ? Act::relu : a.act == 1 ? Act::tanh : Act::sigmoid, [&](auto code) {
    auto kernel = conv2_regs_kernel<BF16, decltype(code)::value>;
    static const int blocks_max = resident_blocks(kernel, b2::kThreads, b2::kSmemBytes);
    const PersistentGrid g = persistent_grid(a.n, b2::IP, blocks_max);
    kernel<<<g.blocks, b2::kThreads, b2::kSmemBytes, s>>>(reinterpret_cast<const uint32_t*>(a.in),
                                                          reinterpret_cast<const uint32_t*>(a.prepared), a.bias,
                                                          reinterpret_cast<uint32_t*>(a.out), a.n, g.images_per_block, a.ovf);
  });
  CUDA_CHECK_LAUNCH();
}

}  // namespace
}  // namespace bs::cuda::half

namespace bs::cuda {

void register_conv_band_half(Registry& r) {
  using namespace half;
  static const ImplHooks hooks{
      .half_conv_prepare =
          [](int, const float* w, const Layer& l, bool bf16, float* p, cudaStream_t s) {
            auto* dst = reinterpret_cast<uint32_t*>(p);
            if (band_is_conv1(l)) {
              if (bf16) band_prepare_kernel<true><<<4, 256, 0, s>>>(w, dst);
              else band_prepare_kernel<false><<<4, 256, 0, s>>>(w, dst);
            } else {
              if (bf16) regs_prepare_kernel<true><<<4, 256, 0, s>>>(w, dst);
              else regs_prepare_kernel<false><<<4, 256, 0, s>>>(w, dst);
            }
            CUDA_CHECK_LAUNCH();
          },
      .half_conv_forward =
          [](int, const HalfConvArgs& a, cudaStream_t s) {
            if (!a.prepared) fail("conv v58", "weights were not prepared");
            if (is_conv2(a.is, *a.p)) {
              if (a.bf16) regs_forward<true>(a, s);
              else regs_forward<false>(a, s);
            } else if (a.bf16) {
              band_forward<true>(a, s);
            } else {
              band_forward<false>(a, s);
            }
          },
      .half_reads_model_input = [](int, const Layer& l) { return spec_half_reads_model_input(l); }};
  Impl i = cuda_impl(LayerKind::conv, 58, "band-half",
                     "ECE 408's shapes on FP16/BF16 tensor cores with the weights in registers: conv1 as a product by a "
                     "banded weight matrix (a quarter of v22's shared loads), reading the FP32 input itself (first layer) and "
                     "fusing activation + 2x2 max pool; conv2 with the filters as A, 8 pixels as B, the activation fused",
                     &hooks);
  i.shapes = "ECE 408 conv1, conv2";
  i.math = "fp16/bf16";
  i.precisions = {Precision::fp16, Precision::bf16};
  i.fuses_act = i.fuses_pool2x2 = true;
  i.prep_layout = 58;
  i.supports = [](const Layer& l, const Epilogue& e) { return spec_half_supports(l, e.pool2x2); };
  i.prepared_floats = [](const Layer& l, Shape, Precision) {
    return static_cast<size_t>(band_is_conv1(l) ? b1::kFragWords : b2::kFragWords);
  };
  r.add(std::move(i));
}

}  // namespace bs::cuda
