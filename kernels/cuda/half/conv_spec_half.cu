// Convolution version v22 (spec-half): ECE 408's two convolutions in FP16 / BF16 on the tensor cores.
//
// Why: the GEMM engine's 16-bit versions (v19-v21) ran ECE 408's conv1 + conv2 in 3.70 ms at 10,000 images, 7x the
// FP32 v11 (0.50 ms): their 64-filter tiles compute 6 and 16 filters at 9 % and 25 % use, conv1's one channel
// (stored as a pair with a zero) halves every gathered word, the input's conversion is a pass of its own, and the
// 2x2 pooling after conv1 another (experiments/precision-half.md). v22 is to v19-v21 what v10/v11 are to the FP32
// engine: kernels compiled for the two shapes, m16n8k16 MMAs (FP32 accumulation) whose tiles fit them.
//
// conv1 (1x48x48 -> 6x44x44, 5x5, then the activation and the 2x2 max pool fused): an implicit GEMM with the pixels
// as rows (16 = 2 rows x 8 columns of outputs), k = (ky, kx) with kx padded to 6 so that k pairs are horizontal
// neighbours (kx = 5 has weight zero; 15 pairs and a pad pair make two k-steps of 16), and 8 filter columns (6 used).
// A k pair of output pixel x starts at input column x + 2j, which is 32-bit aligned only for even x: each image is
// held in shared memory twice as 16-bit pairs, once from column 0 (E) and once from column 1 (O), so every A register
// is one aligned 32-bit load. One warp per image, no block-wide barrier: the warp copies its image in (cp.async, raw
// 32-bit values) and converts it in place. As the first layer it reads the FP32 NCHW input itself (the conversion,
// with fp16's range check, is its first step; with --input-precision fp16 / bf16 the 16-bit NCHW input), else the
// 16-bit NHWC tensor, whose pixels (one channel and the zero
// pad channel) are 32-bit words as well. The epilogue pools in registers and across one shuffle, then adds the bias
// and activates once per pooled output (v10's order: the activations are non-decreasing), and stores channel pairs
// of the NHWC output.
//
// conv2 (6x22x22 -> 16x18x18, 5x5, an activation fused): pixels as rows again (16 per tile, the tiles running
// over a set of 4 images staged by cp.async in a ring of three, persistent blocks as in v11), k = (ky, kx, c) with
// consecutive channels in one 32-bit word of the NHWC input (75 pairs, padded to 80: ten k-steps), and the 16
// filters as two 8-column MMAs, so that each lane's outputs are channel pairs of one pixel: one 32-bit store each.
#include <cuda_pipeline.h>

#include <algorithm>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/engine/epilogue.cuh"
#include "kernels/cuda/engine/gemm_math.cuh"
#include "kernels/cuda/half/activate16.cuh"
#include "kernels/cuda/half/conv1_input.cuh"
#include "kernels/cuda/half/half_ops.hpp"
#include "kernels/cuda/half/half_types.cuh"
#include "kernels/cuda/half/set_ring.cuh"
#include "kernels/cuda/impl_hooks.hpp"
#include "weights_tools/error.hpp"

namespace bs::cuda::half {
namespace {

// ---- conv1's shape
namespace c1 {
constexpr int H = 48, W = 48, K = 5, M = 6, OH = H - K + 1, OW = W - K + 1, PH = OH / 2, PW = OW / 2;
constexpr int RW = W / 2;                   // words per row of a 16-bit copy
constexpr int RS = 2 * RW;                  // row stride of the staged image: a row's E copy, then its O copy
constexpr int kPairs = K * 3;               // (ky, kx pair 0..2), padded to 16 (two k-steps)
constexpr int KS = 2;
constexpr int TY = OH / 2, TX = (OW + 7) / 8;  // 2x8-pixel tiles; the last of a row holds 4 columns
constexpr int kWarps = 4, kMinBlocks = 6;
constexpr int kRawWords = H * W;            // one 32-bit word per pixel: an FP32 value or a (channel, pad) pair
constexpr int kTail = 8;                    // zeros after the image: the last tile's unused columns read up to 2 words past it
constexpr int kWarpWords = kRawWords + kTail;
constexpr int kRowsPerPass = 4;             // rows converted per pass: read into registers, then written in place
constexpr size_t kSmemBytes = sizeof(uint32_t) * kWarps * kWarpWords;
constexpr int kFragWords = KS * 32 * 2;
static_assert(OH % 2 == 0 && OW % 4 == 0 && TX % 2 == 0 && W % 2 == 0 && kRawWords % 4 == 0 && kWarpWords % 4 == 0 &&
              H % kRowsPerPass == 0 && kRowsPerPass * RW % 32 == 0, "tiles and copies must divide the image");
}  // namespace c1

// ---- conv2's shape
namespace c2 {
constexpr int C = 6, CW = C / 2, H = 22, W = 22, K = 5, M = 16, OH = H - K + 1, OW = W - K + 1, P = OH * OW;
// k = (ky, kx, channel pair): for one ky the 15 pairs (kx, pair) are 15 consecutive words of the NHWC input, padded
// to 16 (the 16th, of weight zero, reads the next word): a k-step of 16 is half of one ky's run, and a lane's pair
// sits t words (a0) or t + 4 words (a2) after the step's first, so every A register is one load at a compile-time
// offset from one of the lane's two row addresses. (An earlier layout padded each window position's three pairs to
// four: the same loads, 13 k-steps instead of 10.)
constexpr int KS = 2 * K;                   // 10 k-steps
__host__ __device__ constexpr int step_words(int s) { return (s / 2) * W * CW + 8 * (s % 2); }
constexpr int IP = 4;                       // images per set
constexpr int kTiles = IP * P / 16, kWarps = 9, NT = kTiles / kWarps, kThreads = 32 * kWarps;
constexpr int kImgWords = H * W * CW;
constexpr int kStages = 3;
constexpr int kFragWords = KS * 2 * 32 * 2;  // [KS][2 filter halves][32 lanes][b0, b1]
constexpr int kTail = 4;                     // zeros after each buffer of the ring: the last pixel's pad pair reads one word past it
constexpr int kRingWords = SetRing<IP, kImgWords, kThreads, kTail>::kWords;
constexpr size_t kSmemBytes = sizeof(uint32_t) * (kFragWords + kRingWords);
static_assert(IP * P % 16 == 0 && kTiles % kWarps == 0 && NT % 3 == 0 && kImgWords % 4 == 0, "tiling must divide the set");
}  // namespace c2

bool is_conv1(Shape in, const ConvParams& p) { return in.c == 1 && in.h == c1::H && in.w == c1::W && p.kh == c1::K && p.kw == c1::K && p.filters == c1::M; }
bool is_conv2(Shape in, const ConvParams& p) { return in.c == c2::C && in.h == c2::H && in.w == c2::W && p.kh == c2::K && p.kw == c2::K && p.filters == c2::M; }

// Tiles are 2 rows x 8 columns of outputs: MMA row g is pixel (2ty, 8tx + g), row g + 8 the one below, so a lane
// holds both rows of a pooling window's column (one max in registers) and its neighbour column sits in lane ^ 4.
// Tiles go in pairs: one shuffle per value hands lane g even the window of the first tile and lane g odd that of the
// second, so that 24 of the 32 lanes share the activations (an earlier version, one 4x4 tile at a time, pooled with
// four shuffles per value and left the tanh to 6 lanes: 0.346 ms, against 0.12 for the loads and MMAs it needs).
template <bool BF16, int MODE, int ACT, bool POOL>
__global__ void __launch_bounds__(c1::kWarps * 32, c1::kMinBlocks)
    conv1_kernel(const uint32_t* __restrict__ in, const uint32_t* __restrict__ wfrag, const float* __restrict__ bias,
                 uint32_t* __restrict__ out, int n, int* ovf) {
  using namespace c1;
  constexpr bool kTrack = ACT != 1 && ACT != 2;
  float vmax = 0.0f;
  extern __shared__ __align__(16) uint32_t smem1[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  // The warp's image: copied in raw (one word per pixel), then converted in place, row by row, into two 16-bit
  // copies side by side: word w of row y's E copy holds columns 2w, 2w + 1, word w of its O copy (RW words on)
  // columns 2w + 1, 2w + 2 (the last: 47 and a zero). No second buffer: 24 warps per SM hide each other's copies
  // (a first version double-buffered the raw image and fitted 12).
  uint32_t* img_s = smem1 + warp * kWarpWords;
  if (lane < kTail) img_s[kRawWords + lane] = 0u;
  // B fragments (the weights) stay in registers: b0 = (pair t, filter g), b1 = (pair t + 4, filter g).
  uint32_t b[KS][2];
#pragma unroll
  for (int s = 0; s < KS; ++s) {
    b[s][0] = wfrag[(s * 32 + lane) * 2];
    b[s][1] = wfrag[(s * 32 + lane) * 2 + 1];
  }
  const float bv0 = bias && 2 * t < M ? bias[2 * t] : 0.0f, bv1 = bias && 2 * t + 1 < M ? bias[2 * t + 1] : 0.0f;
  // This lane's A registers read pairs 8s + t (a0, a1) and 8s + t + 4 (a2, a3) of column 8tx + g, from the copy
  // where that column's pairs are aligned; the pad pair reads pair 14's words (finite) for a zero weight.
  const uint32_t* cp = img_s + ((g & 1) ? RW : 0);
  const uint32_t* ptr[KS][2];
#pragma unroll
  for (int s = 0; s < KS; ++s)
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const int p = min(8 * s + t + 4 * j, kPairs - 1);
      ptr[s][j] = cp + (p / 3) * RS + p % 3 + (g >> 1);
    }
  const int stride = gridDim.x * kWarps;
  // 16-bit input: half the words, copied into the upper half, so that converting top-down never overwrites a row
  // it has yet to read (row y's two copies end at word 48y + 48, raw row y0 + 4 starts at 1152 + 24 (y0 + 4)).
  constexpr int kInWords = MODE == kH16 ? kRawWords / 2 : kRawWords, kInAt = kRawWords - kInWords;
  for (int img = blockIdx.x * kWarps + warp; img < n; img += stride) {
    const uint32_t* src = in + static_cast<long long>(img) * kInWords;
    for (int i = lane; i < kInWords / 4; i += 32) __pipeline_memcpy_async(img_s + kInAt + 4 * i, src + 4 * i, 16);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncwarp();
#pragma unroll 1
    for (int y0 = 0; y0 < H; y0 += kRowsPerPass) {
      constexpr int kPer = kRowsPerPass * RW / 32;
      uint32_t e[kPer], o[kPer];
#pragma unroll
      for (int k = 0; k < kPer; ++k) {
        const int i = lane + 32 * k, y = y0 + i / RW, c = 2 * (i % RW);
        const uint32_t* r = img_s + y * W + c;
        if constexpr (MODE == kH16) {
          const uint32_t* h = img_s + kInAt + y * RW + c / 2;  // word w of the row: columns 2w, 2w + 1
          e[k] = h[0];
          o[k] = (h[0] >> 16) | (c + 2 < W ? h[1] << 16 : 0u);
        } else if constexpr (MODE == kF32) {
          const float2 x01 = *reinterpret_cast<const float2*>(r);
          const float x2 = c + 2 < W ? __uint_as_float(r[2]) : 0.0f;
          track<BF16>(vmax, x01.x);
          track<BF16>(vmax, x01.y);
          e[k] = pack2<BF16>(x01.x, x01.y);
          o[k] = pack2<BF16>(x01.y, x2);
        } else {
          const uint2 x01 = *reinterpret_cast<const uint2*>(r);
          const uint32_t x2 = c + 2 < W ? (r[2] & 0xffffu) : 0u;
          e[k] = (x01.x & 0xffffu) | (x01.y << 16);
          o[k] = (x01.y & 0xffffu) | (x2 << 16);
        }
      }
      __syncwarp();  // these rows are read: overwrite them
#pragma unroll
      for (int k = 0; k < kPer; ++k) {
        const int i = lane + 32 * k, y = y0 + i / RW, w = i % RW;
        img_s[y * RS + w] = e[k];
        img_s[y * RS + RW + w] = o[k];
      }
    }
    __syncwarp();
    uint32_t* o = out + static_cast<long long>(img) * (POOL ? PH * PW * (M / 2) : OH * OW * (M / 2));
#pragma unroll 1
    for (int ty = 0; ty < TY; ++ty) {
      const int row = 2 * ty * RS;
#pragma unroll
      for (int tx = 0; tx < TX; tx += 2) {
        float acc[2][4];
#pragma unroll
        for (int u = 0; u < 2; ++u) {
          const int off = row + 4 * (tx + u);  // column 8 (tx + u) + g: word 4 (tx + u) + g / 2 of the row
          acc[u][0] = acc[u][1] = acc[u][2] = acc[u][3] = 0.0f;
#pragma unroll
          for (int s = 0; s < KS; ++s) {
            const uint32_t a[4] = {ptr[s][0][off], ptr[s][0][off + RS], ptr[s][1][off], ptr[s][1][off + RS]};
            gemm::mma_m16n8k16(acc[u], a, b[s][0], b[s][1], BF16);
          }
        }
        // acc[u]: filters 2t, 2t + 1 of pixel (2ty, 8(tx + u) + g) (0, 1) and of the pixel below (2, 3).
        if constexpr (POOL) {
          const bool odd = g & 1;
          float v[2];
#pragma unroll
          for (int f = 0; f < 2; ++f) {
            const float a0 = fmaxf(acc[0][f], acc[0][f + 2]), a1 = fmaxf(acc[1][f], acc[1][f + 2]);  // the window's column
            const float other = __shfl_xor_sync(0xffffffffu, odd ? a0 : a1, 4);                       // its neighbour's
            v[f] = fmaxf(odd ? a1 : a0, other);
          }
          const int px = 4 * (tx + (odd ? 1 : 0)) + (g >> 1);  // even lanes: the first tile's window, odd: the second's
          if (t < M / 2 && px < PW)
            o[(ty * PW + px) * (M / 2) + t] = store_pair<BF16, kTrack>(activate16_c<ACT>(v[0] + bv0), activate16_c<ACT>(v[1] + bv1), vmax);
        } else {
#pragma unroll
          for (int u = 0; u < 2; ++u) {
            const int x = 8 * (tx + u) + g;
            if (t < M / 2 && x < OW) {
              uint32_t* d = o + (2 * ty * OW + x) * (M / 2) + t;
              d[0] = store_pair<BF16, kTrack>(activate16_c<ACT>(acc[u][0] + bv0), activate16_c<ACT>(acc[u][1] + bv1), vmax);
              d[OW * (M / 2)] = store_pair<BF16, kTrack>(activate16_c<ACT>(acc[u][2] + bv0), activate16_c<ACT>(acc[u][3] + bv1), vmax);
            }
          }
        }
      }
    }
    __syncwarp();  // every lane's last read of this image is done before the next one lands
  }
  raise_if_over<BF16>(vmax, ovf);
}

template <bool BF16, int ACT>
__global__ void __launch_bounds__(c2::kThreads, 2)
    conv2_kernel(const uint32_t* __restrict__ in, const uint32_t* __restrict__ wfrag, const float* __restrict__ bias,
                 uint32_t* __restrict__ out, int n, int images_per_block, int* ovf) {
  using namespace c2;
  constexpr bool kTrack = ACT != 1 && ACT != 2;
  float vmax = 0.0f;
  extern __shared__ __align__(16) uint32_t smem2[];
  uint32_t* frag = smem2;             // [KS][2][32][2]
  uint32_t* xs = smem2 + kFragWords;  // [kStages][IP][H, W, CW], each buffer followed by kTail zeros
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  for (int i = threadIdx.x; i < kFragWords; i += kThreads) frag[i] = wfrag[i];
  // Zeros everywhere first: slots a short last set leaves unfetched are read (and their results dropped), and a pad
  // pair's zero weight times a NaN bit pattern would not be zero.
  for (int i = threadIdx.x; i < kRingWords; i += kThreads) xs[i] = 0u;
  __syncthreads();
  float bv[2][2];
#pragma unroll
  for (int j = 0; j < 2; ++j) {
    bv[j][0] = bias ? bias[8 * j + 2 * t] : 0.0f;
    bv[j][1] = bias ? bias[8 * j + 2 * t + 1] : 0.0f;
  }
  const int first = blockIdx.x * images_per_block, last = min(n, first + images_per_block);
  const SetRing<IP, kImgWords, kThreads, kTail> ring{xs, in, first, last};
  static_assert(decltype(ring)::kStages == kStages, "the ring holds kStages sets");
  ring.start();
  const uint2* wf = reinterpret_cast<const uint2*>(frag) + lane;
  for (int b0 = first, step = 0; b0 < last; b0 += IP, ++step) {
    const uint32_t* xb = ring.next(b0, step) + t;
    const long long px0 = static_cast<long long>(b0) * P, px_end = static_cast<long long>(last) * P;
#pragma unroll 1
    for (int u0 = 0; u0 < NT; u0 += 3) {
      // This lane's rows in the group's tiles: pixels 16u + g and 16u + g + 8 of the set.
      const uint32_t* rp[3][2];
#pragma unroll
      for (int j = 0; j < 3; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int q = 16 * (warp * NT + u0 + j) + g + 8 * h, slot = q / P, p = q % P;
          rp[j][h] = xb + slot * kImgWords + ((p / OW) * W + p % OW) * CW;
        }
      float acc[3][2][4];
#pragma unroll
      for (int j = 0; j < 3; ++j)
#pragma unroll
        for (int f = 0; f < 2; ++f) acc[j][f][0] = acc[j][f][1] = acc[j][f][2] = acc[j][f][3] = 0.0f;
#pragma unroll
      for (int s = 0; s < KS; ++s) {
        const uint2 w0 = wf[(2 * s) * 32], w1 = wf[(2 * s + 1) * 32];
#pragma unroll
        for (int j = 0; j < 3; ++j) {
          const uint32_t a[4] = {rp[j][0][step_words(s)], rp[j][1][step_words(s)], rp[j][0][step_words(s) + 4],
                                 rp[j][1][step_words(s) + 4]};
          gemm::mma_m16n8k16(acc[j][0], a, w0.x, w0.y, BF16);
          gemm::mma_m16n8k16(acc[j][1], a, w1.x, w1.y, BF16);
        }
      }
      // acc[j][f]: filters 8f + 2t, 8f + 2t + 1 of pixel 16u + g (0, 1) and 16u + g + 8 (2, 3). The set's images are
      // consecutive in the output, so pixel q of the set is output pixel b0 * P + q.
#pragma unroll
      for (int j = 0; j < 3; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const long long pix = px0 + 16 * (warp * NT + u0 + j) + g + 8 * h;
          uint32_t word[2];  // words t and 4 + t of the pixel's 8
#pragma unroll
          for (int f = 0; f < 2; ++f)
            word[f] = store_pair<BF16, kTrack>(activate16_c<ACT>(acc[j][f][2 * h] + bv[f][0]), activate16_c<ACT>(acc[j][f][2 * h + 1] + bv[f][1]), vmax);
          // Lanes t and t ^ 1 trade a word, so that each stores 8 bytes and a store fills whole 32-byte sectors: even
          // t words t, t + 1; odd t words 3 + t, 4 + t. (Two 4-byte stores per value pair filled half a sector each.)
          const bool odd = t & 1;
          const uint32_t other = __shfl_xor_sync(0xffffffffu, odd ? word[0] : word[1], 1);
          if (pix < px_end)
            *reinterpret_cast<uint2*>(out + pix * (M / 2) + (odd ? 3 + t : t)) = odd ? make_uint2(other, word[1]) : make_uint2(word[0], other);
        }
    }
  }
  raise_if_over<BF16>(vmax, ovf);
}

// The weights (M, C, K, K) FP32 as the B fragments each lane loads (c1: [KS][32][2]; c2: [KS][2][32][2]).
template <bool BF16>
__global__ void prepare_kernel(const float* __restrict__ w, bool conv1, uint32_t* __restrict__ dst) {
  const int words = conv1 ? c1::kFragWords : c2::kFragWords;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < words; i += gridDim.x * blockDim.x) {
    const int j = i % 2, lane = (i / 2) % 32, g = lane / 4, t = lane % 4;
    float v0 = 0.0f, v1 = 0.0f;
    if (conv1) {
      const int s = i / 64, p = 8 * s + t + 4 * j, f = g;
      if (f < c1::M && p < c1::kPairs) {
        const int ky = p / 3, kx = 2 * (p % 3);
        v0 = w[(f * c1::K + ky) * c1::K + kx];
        if (kx + 1 < c1::K) v1 = w[(f * c1::K + ky) * c1::K + kx + 1];
      }
    } else {
      // pair t + 4j of k-step s: pair 8 (s % 2) + t + 4j of row ky = s / 2's run, (kx, channel pair) = (q / 3, q % 3)
      const int half = (i / 64) % 2, s = i / 128, q = 8 * (s % 2) + t + 4 * j, f = 8 * half + g;
      if (q < c2::K * c2::CW) {
        const int c = 2 * (q % c2::CW), ky = s / 2, kx = q / c2::CW;
        v0 = w[((f * c2::C + c) * c2::K + ky) * c2::K + kx];
        v1 = w[((f * c2::C + c + 1) * c2::K + ky) * c2::K + kx];
      }
    }
    dst[i] = pack2<BF16>(v0, v1);
  }
}

template <bool BF16, int MODE, int ACT, bool POOL>
void launch_conv1(const HalfConvArgs& a, const uint32_t* in, cudaStream_t s) {
  auto kernel = conv1_kernel<BF16, MODE, ACT, POOL>;
  static const int blocks_max = resident_blocks(kernel, c1::kWarps * 32, c1::kSmemBytes);
  const int blocks = std::max(1, std::min(blocks_max, (a.n + c1::kWarps - 1) / c1::kWarps));
  kernel<<<blocks, c1::kWarps * 32, c1::kSmemBytes, s>>>(in, reinterpret_cast<const uint32_t*>(a.prepared), a.bias,
                                                         reinterpret_cast<uint32_t*>(a.out), a.n, a.ovf);
}

template <bool BF16, int ACT>
void launch_conv2(const HalfConvArgs& a, cudaStream_t s) {
  auto kernel = conv2_kernel<BF16, ACT>;
  static const int blocks_max = resident_blocks(kernel, c2::kThreads, c2::kSmemBytes);
  const PersistentGrid g = persistent_grid(a.n, c2::IP, blocks_max);
  kernel<<<g.blocks, c2::kThreads, c2::kSmemBytes, s>>>(reinterpret_cast<const uint32_t*>(a.in), reinterpret_cast<const uint32_t*>(a.prepared),
                                                        a.bias, reinterpret_cast<uint32_t*>(a.out), a.n, g.images_per_block, a.ovf);
}

template <bool BF16>
void forward_t(const HalfConvArgs& a, cudaStream_t s) {
  dispatch_act(a.act >= 0, a.act == 0 ? Act::relu : a.act == 1 ? Act::tanh : Act::sigmoid, [&](auto code) {
    constexpr int A = decltype(code)::value;
    if (is_conv2(a.is, *a.p)) return launch_conv2<BF16, A>(a, s);
    dispatch_conv1_input(a, [&](const uint32_t* in, auto mode, auto pool) {
      launch_conv1<BF16, decltype(mode)::value, A, decltype(pool)::value>(a, in, s);
    });
  });
  CUDA_CHECK_LAUNCH();
}

}  // namespace

Support spec_half_supports(const Layer& layer, bool pool) {
  const ConvParams& p = std::get<ConvParams>(layer.op);
  if (p.sh != 1 || p.sw != 1 || p.padded() || p.groups != 1) return {false, "v22 is compiled for stride 1, no padding, one group"};
  if (is_conv1(layer.in, p)) return {};
  if (is_conv2(layer.in, p)) {
    if (pool) return {false, "v22 fuses pooling on conv1's shape (1x48x48) only"};
    return {};
  }
  return {false, "v22 is compiled only for the shapes (1x48x48, 6 filters 5x5), (6x22x22, 16 filters 5x5)"};
}

bool spec_half_reads_model_input(const Layer& layer) { return is_conv1(layer.in, std::get<ConvParams>(layer.op)); }

size_t spec_half_prepared_floats(const Layer& layer) {
  return is_conv1(layer.in, std::get<ConvParams>(layer.op)) ? c1::kFragWords : c2::kFragWords;
}

void spec_half_prepare(const float* w, const Layer& layer, bool bf16, float* prepared, cudaStream_t s) {
  const bool conv1 = is_conv1(layer.in, std::get<ConvParams>(layer.op));
  auto* dst = reinterpret_cast<uint32_t*>(prepared);
  if (bf16) prepare_kernel<true><<<4, 256, 0, s>>>(w, conv1, dst);
  else prepare_kernel<false><<<4, 256, 0, s>>>(w, conv1, dst);
  CUDA_CHECK_LAUNCH();
}

void spec_half_forward(const HalfConvArgs& a, cudaStream_t s) {
  if (!a.prepared) fail("conv v22", "weights were not prepared");
  if (a.bf16) forward_t<true>(a, s);
  else forward_t<false>(a, s);
}

}  // namespace bs::cuda::half

namespace bs::cuda {

void register_conv_spec_half(Registry& r) {
  static const ImplHooks hooks{
      .half_conv_prepare = [](int, const float* w, const Layer& l, bool bf16, float* p, cudaStream_t s) { half::spec_half_prepare(w, l, bf16, p, s); },
      .half_conv_forward = [](int, const half::HalfConvArgs& a, cudaStream_t s) { half::spec_half_forward(a, s); },
      .half_reads_model_input = [](int, const Layer& l) { return half::spec_half_reads_model_input(l); }};
  Impl i = cuda_impl(LayerKind::conv, 22, "spec-half",
                     "compile-time shapes on FP16/BF16 tensor cores, m16n8k16 tiles that fit them: conv1 reads the FP32 input "
                     "itself (first layer) and fuses activation + 2x2 max pool, conv2 fuses the activation", &hooks);
  i.shapes = "ECE 408 conv1, conv2";
  i.math = "fp16/bf16";
  i.precisions = {Precision::fp16, Precision::bf16};
  i.fuses_act = i.fuses_pool2x2 = true;
  i.prep_layout = 22;
  i.supports = [](const Layer& l, const Epilogue& e) { return half::spec_half_supports(l, e.pool2x2); };
  i.prepared_floats = [](const Layer& l, Shape, Precision) { return half::spec_half_prepared_floats(l); };
  r.add(std::move(i));
}

}  // namespace bs::cuda
