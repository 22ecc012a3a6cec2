// Convolution version v59 (band-3xf16): ECE 408's conv1 at FP32 accuracy on the FP16 tensor cores, as v58's product by
// a banded weight matrix (half/band_conv1.cuh) with every operand in two FP16 parts; conv2's shape runs v57's kernel.
//
// Why: at 10,000 images v10's conv1 (FP32 FFMA, the activation and 2x2 max pool fused) takes 0.152 ms on the H200, 0.93
// instructions issued a scheduler and cycle, three quarters of them FFMA: FP32's own ceiling is about 0.09 ms there
// (experiments/ece408-gpu.md, "FP32 conv1 (v10)"), and issue 35 asks 0.30 ms for conv1 + conv2, with v57's conv2 at 0.21.
// v58 runs the same layer in fp16 in 0.063 ms with a third of the tensor pipe busy; three products a value fit beside it.
//
// The split is v51-v57's (engine/f16_parts.cuh): an image's values scaled by a power of two that puts its largest |x| in
// [2^14, 2^15), x s = hi + lo, hi = fp16(x s), lo = fp16(x s - hi); each filter's weights likewise with a power of
// two of their own. The sum hi*lo + lo*hi + hi*hi (lo*lo, about 2^-22 of a product, dropped) in FP32; then the 2x2
// max, the division by both powers of two (exact, so it keeps the max), the bias and the activation. A's hi and lo
// fragments (96 words a lane) are made from the FP32 weights when a block starts and held in registers.
//
// Per set of 8 positions (4 output rows x 2 column blocks): 16 shared loads and 36 MMAs (v58: 8 and 12), 1,188 MMAs an
// image. Each warp takes whole images: while one is multiplied the next lands by cp.async; its largest |x| is found and
// its hi and lo rows are written in buffers of their own. 18.5 KB a warp, blocks of 4 warps, 3 blocks an SM (168
// registers a thread).
//
// Measured (H200, 10,000 images; experiments/ece408-gpu.md, "FP32 conv1 on the FP16 tensor cores (v59)"): conv1's Op
// Time 0.1523-0.1537 ms against v10's 0.1516-0.1523 in the same calls, the network's error against cpu-ref the same as
// v57's (2.5e-7), and 13.8 us against v10's 3.2 at 1 image. The MMAs alone would take 77 us at mma.sync's rate on the
// H200 (630 TFLOP/s: experiments/probes/mma_sync_rate.cu); the tensor pipe is 55 % busy, and the other 4 instructions
// an MMA (the split, tanh, the stores) take turns with the MMAs more than they overlap. Not auto's choice.
#include <cuda_pipeline.h>

#include <algorithm>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/engine/epilogue.cuh"
#include "kernels/cuda/engine/f16_parts.cuh"
#include "kernels/cuda/engine/gemm_math.cuh"
#include "kernels/cuda/half/band_conv1.cuh"
#include "kernels/cuda/impl_hooks.hpp"
#include "kernels/cuda/ops/conv.hpp"

namespace bs::cuda {
namespace {

namespace b3 {
using namespace band1;
constexpr int kWarps = 4, kMinBlocks = 3;
constexpr int kRawWords = H * W;       // the landing FP32 image
constexpr int kTail = 8;               // zeros after each 16-bit image: the last block reads 2 words past row 47
constexpr int kLo = kImgWords + kTail;  // the lo image's offset from the hi image's
constexpr int kWarpWords = kRawWords + 2 * kLo;
constexpr size_t kSmemBytes = sizeof(uint32_t) * kWarps * kWarpWords;
constexpr int kPieces = kRawWords / 4 / 32;  // 16-byte pieces of an image per lane
static_assert(kRawWords % 128 == 0 && kImgWords % 64 == 0, "an image is whole pieces a lane");
}  // namespace b3

bool is_band_conv1(Shape in, const ConvParams& p) {
  return in.c == 1 && in.h == b3::H && in.w == b3::W && p.kh == b3::K && p.kw == b3::K && p.filters == b3::M;
}

template <int ACT, bool POOL>
__global__ void __launch_bounds__(b3::kWarps * 32, b3::kMinBlocks)
    conv1_band3_kernel(const float* __restrict__ in, const float* __restrict__ w, const float* __restrict__ bias,
                       float* __restrict__ out, int n) {
  using namespace b3;
  using namespace f16split;
  extern __shared__ __align__(16) uint32_t smem_b3[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  float* land = reinterpret_cast<float*>(smem_b3 + warp * kWarpWords);  // the next image, FP32
  uint32_t* img = smem_b3 + warp * kWarpWords + kRawWords;              // hi rows, kTail zeros, lo rows, kTail zeros
  if (lane < kTail) img[kImgWords + lane] = img[kLo + kImgWords + lane] = 0u;
  // This lane's filter in tile i is 2i + upper (band_pair's row order). Its power of two, A's hi and lo words, the bias.
  const int upper = g >= 4;
  float wi[MT], bv[MT];
  uint32_t ah[MT][KS][4], al[MT][KS][4];
#pragma unroll
  for (int i = 0; i < MT; ++i) {
    const float* wf = w + (2 * i + upper) * K * K;
    float m = 0.0f;
    for (int j = 0; j < K * K; ++j) m = max_nan(m, fabsf(wf[j]));
    const int sh = scale_shift(__float_as_uint(m));
    const float sw = pow2(sh);
    wi[i] = pow2(-sh);
    bv[i] = bias ? bias[2 * i + upper] : 0.0f;
#pragma unroll
    for (int s = 0; s < KS; ++s)
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        float v[2];
        band_pair(w, ((i * KS + s) * 4 + r) * 32 + lane, v);
        __half h0, l0, h1, l1;
        split_f16(v[0], sw, h0, l0);
        split_f16(v[1], sw, h1, l1);
        ah[i][s][r] = word(h0, h1);
        al[i][s][r] = word(l0, l1);
      }
  }
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
      const float* src = in + static_cast<long long>(im) * kRawWords;
#pragma unroll
      for (int j = 0; j < kPieces; ++j) __pipeline_memcpy_async(land + 4 * (lane + 32 * j), src + 4 * (lane + 32 * j), 16);
    }
    __pipeline_commit();
  };
  int im = blockIdx.x * kWarps + warp;
  fetch(im);
  for (; im < n; im += stride) {
    __pipeline_wait_prior(0);
    __syncwarp();
    // The largest magnitude as bits: as unsigned integers NaN > inf > every finite value, so a NaN wins (scale_shift
    // then gives 0, as for inf).
    unsigned m = 0u;
#pragma unroll 6
    for (int j = 0; j < kPieces; ++j) {
      const uint4 x = reinterpret_cast<const uint4*>(land)[lane + 32 * j];
      m = max(max(m, x.x & 0x7fffffffu), max(max(x.y & 0x7fffffffu, x.z & 0x7fffffffu), x.w & 0x7fffffffu));
    }
#pragma unroll
    for (int o = 16; o; o >>= 1) m = max(m, __shfl_xor_sync(0xffffffffu, m, o));
    const int sh = scale_shift(m);
    const float sx = pow2(sh), ix = pow2(-sh);
    const float4* l4 = reinterpret_cast<const float4*>(land);
    // Word w of a 16-bit image holds pixels 2w, 2w + 1 (columns of one row: W is even); a float4 is two words.
#pragma unroll 6
    for (int j = 0; j < kPieces; ++j) {
      const int w2 = lane + 32 * j;
      uint2 h, l;
      split4(l4[w2], sx, h, l);
      *reinterpret_cast<uint2*>(img + 2 * w2) = h;
      *reinterpret_cast<uint2*>(img + kLo + 2 * w2) = l;
    }
    __syncwarp();  // the landing words are read: the next image may land there
    fetch(im + stride);
    float* o = out + static_cast<long long>(im) * (POOL ? M * PH * PW : M * OH * OW);
    // The 3 sets of a quad (4 output rows): their products, then their stores.
    auto products = [&](int quad, float (&acc)[NXB / 2][MT][4]) {
      const uint32_t* ps[KS][2];
#pragma unroll
      for (int s = 0; s < KS; ++s)
#pragma unroll
        for (int h = 0; h < 2; ++h) ps[s][h] = img + 4 * quad * RW + off[s][h];
#pragma unroll
      for (int pair = 0; pair < NXB / 2; ++pair) {
        const int xb0 = 2 * pair;
#pragma unroll
        for (int i = 0; i < MT; ++i) acc[pair][i][0] = acc[pair][i][1] = acc[pair][i][2] = acc[pair][i][3] = 0.0f;
#pragma unroll
        for (int s = 0; s < KS; ++s) {
          const uint32_t h0 = ps[s][0][xb0 * (XB / 2)], h1 = ps[s][1][xb0 * (XB / 2)];
          const uint32_t l0 = ps[s][0][kLo + xb0 * (XB / 2)], l1 = ps[s][1][kLo + xb0 * (XB / 2)];
#pragma unroll
          for (int i = 0; i < MT; ++i) {  // the small products first, as v57
            gemm::mma_m16n8k16(acc[pair][i], ah[i][s], l0, l1, false);
            gemm::mma_m16n8k16(acc[pair][i], al[i][s], h0, h1, false);
            gemm::mma_m16n8k16(acc[pair][i], ah[i][s], h0, h1, false);
          }
        }
      }
    };
    // Element e of tile i: filter 2i + upper at (x + e / 2, y + e % 2), x = 8 xb + 2 (g % 4), xb = xb0 + (t >> 1),
    // y = 4 quad + 2 (t & 1): a lane holds a whole pooling window. Max before the scales and the bias: both keep the
    // order (a power of two, then one addition), and so does the activation.
    auto store = [&](int quad, const float (&acc)[NXB / 2][MT][4]) {
#pragma unroll
      for (int pair = 0; pair < NXB / 2; ++pair) {
        const int xb = 2 * pair + (t >> 1), y = 4 * quad + 2 * (t & 1), x = XB * xb + 2 * (g & 3);
#pragma unroll
        for (int i = 0; i < MT; ++i) {
          if constexpr (POOL) {
            const float v = fmaxf(fmaxf(acc[pair][i][0], acc[pair][i][1]), fmaxf(acc[pair][i][2], acc[pair][i][3]));
            const float r = activate_c<ACT>(v * ix * wi[i] + bv[i]);
            if (x / 2 < PW) o[((2 * i + upper) * PH + y / 2) * PW + x / 2] = r;
          } else {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              const float r = activate_c<ACT>(acc[pair][i][e] * ix * wi[i] + bv[i]);
              if (x + e / 2 < OW) o[((2 * i + upper) * OH + y + e % 2) * OW + x + e / 2] = r;
            }
          }
        }
      }
    };
#pragma unroll 1
    for (int quad = 0; quad < OH / 4; ++quad) {
      float acc[NXB / 2][MT][4];
      products(quad, acc);
      store(quad, acc);
    }
    __syncwarp();  // every lane's last read of this image is done before the next one is split over it
  }
  __pipeline_wait_prior(0);  // the last (empty or unneeded) group
}

template <int ACT, bool POOL>
void launch_band3(const ConvArgs& a, cudaStream_t s) {
  auto kernel = conv1_band3_kernel<ACT, POOL>;
  static const int blocks_max = resident_blocks(kernel, b3::kWarps * 32, b3::kSmemBytes);
  const int blocks = std::max(1, std::min(blocks_max, (a.n + b3::kWarps - 1) / b3::kWarps));
  kernel<<<blocks, b3::kWarps * 32, b3::kSmemBytes, s>>>(a.in, a.w, a.bias, a.out, a.n);
}

void forward(const ConvArgs& a, cudaStream_t s) {
  if (detail::tc_is_conv2(a.is, *a.p)) return detail::tc3_conv2_forward(a, s);
  dispatch_act(a.epi.has_act, a.epi.act, [&](auto code) {
    constexpr int A = decltype(code)::value;
    if (a.epi.pool2x2) launch_band3<A, true>(a, s);
    else launch_band3<A, false>(a, s);
  });
  CUDA_CHECK_LAUNCH();
}

Support supports(const Layer& l, const Epilogue& e) {
  const ConvParams& p = std::get<ConvParams>(l.op);
  if (p.sh != 1 || p.sw != 1 || p.padded() || p.groups != 1 || p.dilated())
    return {false, "v59 is compiled for stride 1, no padding or dilation, one group"};
  if (detail::tc_is_conv2(l.in, p)) {
    if (e.pool2x2) return {false, "v59's conv2 kernel (v57's) fuses an activation but no pooling"};
    if (!detail::tc3_conv2_fits())
      return {false, "v59's conv2 kernel (v57's) needs a GPU that gives a block 222 KB of shared memory (compute capability "
                     "9.0) and a build for it"};
    return {};
  }
  if (!is_band_conv1(l.in, p))
    return {false, "v59 is compiled for ECE 408's conv1 (1x48x48, 6 filters of 5x5) and conv2 (6x22x22, 16 filters of 5x5)"};
  return {};
}

}  // namespace

void register_conv_band_3xf16(Registry& r) {
  static const ImplHooks hooks{.conv_forward = [](int, const ConvArgs& a, cudaStream_t s) { forward(a, s); }};
  Impl i = cuda_impl(LayerKind::conv, 59, "band-3xf16",
                     "ECE 408's shapes at FP32 accuracy on the FP16 tensor cores (3xFP16, a power of two per image and per "
                     "filter): conv1 as v58's product by a banded weight matrix, the activation and 2x2 max pool fused; conv2 "
                     "on v57's kernel",
                     &hooks);
  i.shapes = "ECE 408 conv1, conv2";
  i.fuses_act = i.fuses_pool2x2 = true;
  i.supports = supports;
  r.add(std::move(i));
}

}  // namespace bs::cuda
