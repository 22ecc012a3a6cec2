// Convolution version v58 (band-half): v22, with ECE 408's conv1 as a product by a banded weight matrix.
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
// conv2 runs v22's kernel.
#include <cuda_pipeline.h>

#include <algorithm>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/engine/epilogue.cuh"
#include "kernels/cuda/engine/gemm_math.cuh"
#include "kernels/cuda/half/activate16.cuh"
#include "kernels/cuda/half/half_ops.hpp"
#include "kernels/cuda/half/half_types.cuh"
#include "kernels/cuda/impl_hooks.hpp"
#include "weights_tools/error.hpp"

namespace bs::cuda::half {
namespace {

namespace b1 {
constexpr int H = 48, W = 48, K = 5, M = 6, OH = H - K + 1, OW = W - K + 1, PH = OH / 2, PW = OW / 2;
constexpr int RW = W / 2;                    // words per 16-bit row
constexpr int XB = 8;                        // output columns per column block (A's rows per filter)
constexpr int CL = XB + K - 1;               // input columns a block reads in one kernel row
constexpr int KV = K * CL;                   // 60 k values, padded to 64
constexpr int KS = 4;                        // k-steps of 16
constexpr int MT = M / 2;                    // m16 tiles: filters 2i and 2i + 1
constexpr int NXB = (OW + XB - 1) / XB;      // 6 column blocks, the last with 4 of its 8 columns in the layer
constexpr int kWarps = 4, kMinBlocks = 4;
constexpr int kRawWords = H * W;             // FP32 values or (value, pad) pairs: one word a pixel
constexpr int kImgWords = H * RW;
constexpr int kTail = 8;                     // zeros after the 16-bit image: the last block reads 2 words past row 47
constexpr int kWarpWords = kRawWords + kImgWords + kTail;
constexpr size_t kSmemBytes = sizeof(uint32_t) * kWarps * kWarpWords;
constexpr int kFragWords = MT * KS * 4 * 32;  // [MT][KS][a0..a3][32 lanes]
static_assert(OH % 4 == 0 && NXB == 6 && OW % 4 == 0 && KV <= 16 * KS && CL % 2 == 0 && kImgWords % 64 == 0,
              "the sets and k pairs must tile the image");
}  // namespace b1

bool is_conv1(Shape in, const ConvParams& p) {
  return in.c == 1 && in.h == b1::H && in.w == b1::W && p.kh == b1::K && p.kw == b1::K && p.filters == b1::M;
}

// What the landing words hold: FP32 values (the model's input), (value, 0) pairs of a 16-bit NHWC tensor with its pad
// channel, or 16-bit NCHW values (the input with --input-precision fp16 / bf16).
enum InMode { kF32, kW32, kH16 };

// k value k of the band (k < 64) as the word offset of its pair in the 16-bit image, from a position's first word;
// the pad values (k >= 60, weight zero) read the last real pair.
__device__ __forceinline__ int band_word(int k) {
  k = min(k, b1::KV - 2);
  return (k / b1::CL) * b1::RW + (k % b1::CL) / 2;
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

// A's fragments: lane (g, t) of tile i, k-step s holds a0 = (row g, k 2t, 2t + 1), a1 = (row g + 8, ...), a2 = (row g,
// k + 8), a3 = (row g + 8, k + 8). Row r of tile i is filter 2i + (r % 8 >= 4) at column 2 (r % 4) + (r >= 8) of the
// block, so that a lane's rows g and g + 8 are horizontal neighbours of one filter: with its two accumulator columns
// (vertical neighbours) it holds a whole 2x2 pooling window.
template <bool BF16>
__global__ void band_prepare_kernel(const float* __restrict__ w, uint32_t* __restrict__ dst) {
  using namespace b1;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < kFragWords; i += gridDim.x * blockDim.x) {
    const int lane = i % 32, r = (i / 32) % 4, s = (i / 128) % KS, tile = i / (128 * KS), g = lane / 4, t = lane % 4;
    const int row = g + 8 * (r & 1), f = 2 * tile + ((row & 7) >= 4), x = 2 * (row & 3) + (row >= 8), k0 = 16 * s + 2 * t + 8 * (r >> 1);
    float v[2];
    for (int e = 0; e < 2; ++e) {
      const int k = k0 + e, ky = k / CL, kx = k % CL - x;
      v[e] = k < KV && kx >= 0 && kx < K ? w[(f * K + ky) * K + kx] : 0.0f;
    }
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
    if (a.in_f32) {
      const auto* in = reinterpret_cast<const uint32_t*>(a.in_f32);
      if (a.pool) launch_band<BF16, kF32, A, true>(a, in, s);
      else launch_band<BF16, kF32, A, false>(a, in, s);
    } else if (a.in_nchw16) {
      const auto* in = reinterpret_cast<const uint32_t*>(a.in_nchw16);
      if (a.pool) launch_band<BF16, kH16, A, true>(a, in, s);
      else launch_band<BF16, kH16, A, false>(a, in, s);
    } else {
      const auto* in = reinterpret_cast<const uint32_t*>(a.in);
      if (a.pool) launch_band<BF16, kW32, A, true>(a, in, s);
      else launch_band<BF16, kW32, A, false>(a, in, s);
    }
  });
  CUDA_CHECK_LAUNCH();
}

bool band_is_conv1(const Layer& l) { return is_conv1(l.in, std::get<ConvParams>(l.op)); }

}  // namespace
}  // namespace bs::cuda::half

namespace bs::cuda {

void register_conv_band_half(Registry& r) {
  using namespace half;
  static const ImplHooks hooks{
      .half_conv_prepare =
          [](int, const float* w, const Layer& l, bool bf16, float* p, cudaStream_t s) {
            if (!band_is_conv1(l)) return spec_half_prepare(w, l, bf16, p, s);
            auto* dst = reinterpret_cast<uint32_t*>(p);
            if (bf16) band_prepare_kernel<true><<<4, 256, 0, s>>>(w, dst);
            else band_prepare_kernel<false><<<4, 256, 0, s>>>(w, dst);
            CUDA_CHECK_LAUNCH();
          },
      .half_conv_forward =
          [](int, const HalfConvArgs& a, cudaStream_t s) {
            if (!a.prepared) fail("conv v58", "weights were not prepared");
            if (!is_conv1(a.is, *a.p)) return spec_half_forward(a, s);
            if (a.bf16) band_forward<true>(a, s);
            else band_forward<false>(a, s);
          },
      .half_reads_model_input = [](int, const Layer& l) { return spec_half_reads_model_input(l); }};
  Impl i = cuda_impl(LayerKind::conv, 58, "band-half",
                     "v22, with conv1 as a product by a banded weight matrix held in registers (a quarter of v22's shared "
                     "loads): conv1 reads the FP32 input itself (first layer) and fuses activation + 2x2 max pool",
                     &hooks);
  i.shapes = "ECE 408 conv1, conv2";
  i.math = "fp16/bf16";
  i.precisions = {Precision::fp16, Precision::bf16};
  i.fuses_act = i.fuses_pool2x2 = true;
  i.prep_layout = 58;
  i.supports = [](const Layer& l, const Epilogue& e) { return spec_half_supports(l, e.pool2x2); };
  i.prepared_floats = [](const Layer& l, Shape, Precision) {
    return band_is_conv1(l) ? static_cast<size_t>(b1::kFragWords) : spec_half_prepared_floats(l);
  };
  r.add(std::move(i));
}

}  // namespace bs::cuda
