// What the fully connected weight streams on mma.sync share: fc v17 (16-bit, half/fc_stream_half.cu) and fc v20 (FP32,
// 3xTF32, engine/fc_stream_tf32.cu). A block of warps takes 8 NT outputs; its warps split K into chunks; the images are
// the mma's m (16 a pass), the outputs its n.
#pragma once
#include <cuda_runtime.h>

namespace bs::cuda::stream_mma {

// Outputs a block, in tiles of 8: as many as still give every SM a block (4 tiles for 4,096 outputs on 132 SMs would
// leave 4 idle: 2).
inline int tiles_for(int outputs, int sms) {
  for (int nt : {4, 2})
    if ((outputs + 8 * nt - 1) / (8 * nt) >= sms) return nt;
  return 1;
}

// A warp's K loop over chunks c0 = warp, warp + step, ... with two register stages: one stage's loads are issued before
// the other stage's products run. load(stage, chunk) must give zeros for chunks past the end (their products add
// nothing); multiply(stage) adds a stage's products.
template <class Stage, class Load, class Multiply>
__device__ __forceinline__ void two_stages(int warp, int chunks, int step, Load&& load, Multiply&& multiply) {
  Stage s0, s1;
  load(s0, warp);
  for (int c0 = warp; c0 < chunks; c0 += 2 * step) {
    load(s1, c0 + step);
    multiply(s0);
    if (c0 + step >= chunks) break;
    load(s0, c0 + 2 * step);
    multiply(s1);
  }
}

// A warp's m16n8 accumulator tiles into partial[output][image] (its 8 NT outputs, 16 images): lane (g, t) holds images
// g and g + 8 of outputs 2 t and 2 t + 1 of each tile.
template <int NT, class Partial>
__device__ __forceinline__ void store_tiles(Partial& partial, const float (&acc)[NT][4], int g, int t) {
#pragma unroll
  for (int j = 0; j < NT; ++j) {
    partial[8 * j + 2 * t][g] = acc[j][0];
    partial[8 * j + 2 * t + 1][g] = acc[j][1];
    partial[8 * j + 2 * t][g + 8] = acc[j][2];
    partial[8 * j + 2 * t + 1][g + 8] = acc[j][3];
  }
}

// The block's sum over its WARPS warps' partial tiles (partial[warp][output][image]), the bias added: each output
// o0 + col < outputs of each image img < nb goes to store(img, o, v). The block's WARPS x 32 threads share the pairs.
template <int NT, int IMAGES, int WARPS, class Partial, class Store>
__device__ __forceinline__ void sum_warps(const Partial& partial, int o0, int nb, int outputs, const float* bias, Store&& store) {
  for (int i = threadIdx.x; i < NT * 8 * IMAGES; i += WARPS * 32) {
    const int col = i / IMAGES, img = i % IMAGES, o = o0 + col;
    if (img >= nb || o >= outputs) continue;
    float v = 0.0f;
#pragma unroll
    for (int q = 0; q < WARPS; ++q) v += partial[q][col][img];
    if (bias) v += bias[o];
    store(img, o, v);
  }
}

}  // namespace bs::cuda::stream_mma
