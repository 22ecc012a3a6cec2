// ECE 408's conv1 (1x48x48 -> 6x44x44, 5x5) as a product by a banded weight matrix: the shape, the band's k order
// and the weights of A's fragments. Shared by conv v58 (half/conv_band_half.cu, fp16/bf16) and v59
// (ops/conv_band_3xf16.cu, FP32 accuracy from three FP16 products).
//
// For 8 output columns x0..x0+7 of one output row, the 12 input columns x0..x0+11 of the 5 input rows below it are one
// column of B: k = (ky, c), 60 values padded to 64, four k-steps of 16. A is the banded matrix
// A[(f, x), (ky, c)] = w[f][ky][c - x] (zero outside the 5 taps): 6 filters x 8 columns = 48 rows, three m16 tiles.
#pragma once
#include <cuda_runtime.h>

namespace bs::cuda::band1 {

constexpr int H = 48, W = 48, K = 5, M = 6, OH = H - K + 1, OW = W - K + 1, PH = OH / 2, PW = OW / 2;
constexpr int RW = W / 2;                    // words per 16-bit row
constexpr int XB = 8;                        // output columns per column block (A's rows per filter)
constexpr int CL = XB + K - 1;               // input columns a block reads in one kernel row
constexpr int KV = K * CL;                   // 60 k values, padded to 64
constexpr int KS = 4;                        // k-steps of 16
constexpr int MT = M / 2;                    // m16 tiles: filters 2i and 2i + 1
constexpr int NXB = (OW + XB - 1) / XB;      // 6 column blocks, the last with 4 of its 8 columns in the layer
constexpr int kImgWords = H * RW;            // one image as 16-bit rows
constexpr int kFragWords = MT * KS * 4 * 32;  // [MT][KS][a0..a3][32 lanes]
static_assert(OH % 4 == 0 && NXB == 6 && OW % 4 == 0 && KV <= 16 * KS && CL % 2 == 0 && kImgWords % 64 == 0,
              "the sets and k pairs must tile the image");

// k value k of the band (k < 64) as the word offset of its pair in the 16-bit image, from a position's first word;
// the pad values (k >= 60, weight zero) read the last real pair.
__device__ __forceinline__ int band_word(int k) {
  k = min(k, KV - 2);
  return (k / CL) * RW + (k % CL) / 2;
}

// The two weights of A's fragment word i = ((tile * KS + s) * 4 + r) * 32 + lane. Lane (g, t) of tile i, k-step s
// holds a0 = (row g, k 2t, 2t + 1), a1 = (row g + 8, ...), a2 = (row g, k + 8), a3 = (row g + 8, k + 8). Row r of tile
// i is filter 2i + (r % 8 >= 4) at column 2 (r % 4) + (r >= 8) of the block, so that a lane's rows g and g + 8 are
// horizontal neighbours of one filter (2i + (g >= 4)): with its two accumulator columns (vertical neighbours) it holds
// a whole 2x2 pooling window.
__device__ __forceinline__ void band_pair(const float* __restrict__ w, int i, float v[2]) {
  const int lane = i % 32, r = (i / 32) % 4, s = (i / 128) % KS, tile = i / (128 * KS), g = lane / 4, t = lane % 4;
  const int row = g + 8 * (r & 1), f = 2 * tile + ((row & 7) >= 4), x = 2 * (row & 3) + (row >= 8), k0 = 16 * s + 2 * t + 8 * (r >> 1);
  for (int e = 0; e < 2; ++e) {
    const int k = k0 + e, ky = k / CL, kx = k % CL - x;
    v[e] = k < KV && kx >= 0 && kx < K ? w[(f * K + ky) * K + kx] : 0.0f;
  }
}

}  // namespace bs::cuda::band1
