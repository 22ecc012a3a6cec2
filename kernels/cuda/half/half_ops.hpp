// The half-precision path of the cuda backend (--precision fp16 / bf16): every activation between layers is a
// 16-bit NHWC tensor (N, H, W, Cs) whose channel stride Cs is C rounded up to even (so that channel pairs are
// 32-bit words: the convolutions' implicit im2col gathers a pair of channels per 4-byte copy, and the epilogues
// store pairs); the pad channel, where there is one, holds zero after a convolution or fully connected layer and
// weights of zero read it. Weights are converted once, at preparation, into the engine's layouts. All products
// run on the tensor cores (mma.sync m16n8k16) with FP32 accumulation; pooling, LRN, activations and softmax read
// and write the 16-bit type and compute in FP32.
//
// Menus (kernels/plan/menus.cpp has the one-line summaries):
//   conv v19 gemm-half       the GEMM engine, A = implicit im2col of the NHWC input (M = images x pixels), B = the
//                            weights (N = filters), 128x128x32-word tiles (64 k per stage), 4 stages
//   conv v20 gemm-half-128x64  v19 with 128 pixels x 64 filters per block (two blocks per SM)
//   conv v21 gemm-half-64    v19 with 64x64 tiles, for small layers and batches
//   conv v48 gemm-half-64-cluster  v21 with its split-K reduced in a thread-block cluster (Hopper): batch 1 to a few
//   conv v22 spec-half       ECE 408's two shapes compiled in, m16n8k16 tiles that fit them (conv_spec_half.cu): conv1
//                            reads the FP32 input itself as the first layer and fuses the activation and 2x2 max pool,
//                            conv2 fuses the activation
//   conv v58 band-half       ECE 408's shapes with the weights in registers (conv_band_half.cu): conv1 as a product by a
//                            banded weight matrix (the input's pairs are B: a quarter of v22's shared loads), conv2
//                            with the 16 filters as A and 8 pixels as B
//   fc v12 gemm-half         the GEMM engine, A = X^T (images), B = W^T, 128x128 tiles
//   fc v13 gemm-half-64      v12 with 64x64 tiles
// Each fuses bias and the activation after it; split-K when the tiles alone would not fill the GPU.
//
// `ovf`: with fp16, where a kernel raises the layer's overflow flag (null: bf16, whose range is FP32's).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/exec/backend.hpp"
#include "kernels/model/model.hpp"

namespace bs::cuda::half {

inline int stored_channels(int c) { return c + (c & 1); }

struct HalfConvArgs {
  const uint16_t* in = nullptr;  // (N, H, W, Cs)
  const float* bias = nullptr;   // (M,) or null, FP32
  const float* prepared = nullptr;  // conv_half_prepare's words, then its k table
  uint16_t* out = nullptr;       // (N, OH, OW, Ms)
  int n = 0;
  Shape is, os;
  const ConvParams* p = nullptr;
  int act = -1;                  // activation code (act_code.hpp), -1: none
  float* workspace = nullptr;    // split-K partial sums
  size_t workspace_floats = 0;
  int* ovf = nullptr;
  bool bf16 = false;
  const float* in_f32 = nullptr;  // v22 on conv1's shape as the first layer: the FP32 NCHW input (in is then unused)
  const uint16_t* in_nchw16 = nullptr;  // the same with --input-precision fp16 / bf16: the 16-bit NCHW input
  bool pool = false;              // v22 on conv1's shape: the 2x2 max pool fused (out is the pooled tensor)
};

// v19-v21 (conv_half.cu). pool: whether the 2x2 max pool after the layer is to be fused (refused: v22 on conv1's shape
// only fuses it).
Support conv_half_supports(int version, const Layer& layer, bool pool = false);
size_t conv_half_prepared_floats(const Layer& layer);  // 32-bit words
size_t conv_half_workspace_floats(int version, const Layer& layer, int n, bool bf16);
// w: (M, C/groups, KH, KW) FP32 on the device.
void conv_half_prepare(int version, const float* w, const Layer& layer, bool bf16, float* prepared, cudaStream_t s);
void conv_half_forward(int version, const HalfConvArgs& a, cudaStream_t s);

// v39-v47 (conv_wgmma_half.cu, sm_90a): the same layouts, weights prepared K-major.
constexpr int kWgmmaHalfFirst = 39, kWgmmaHalfLast = 47;
// v39-v47, v60 / v61 (v44's and v45's tiles with the cluster split-K) and v65 (v44 with 4 stages): the versions
// wgmma_half_forward runs.
// v66-v71 (conv_wgmma_tma.cu): v45's, v65's, v42's, v61's, v60's and v41's tiles with their stages loaded by TMA; the
// wgmma_half_* functions below take them too.
inline bool is_wgmma_tma(int version) { return version >= 66 && version <= 71; }
// v72 / v73 (conv_wgmma_halo.cu): short K with the block's weights resident and each tile's input rows read once, A
// from registers by ldmatrix; the same weights and the wgmma_half_* functions below.
inline bool is_wgmma_halo(int version) { return version == 72 || version == 73; }
inline bool is_wgmma_half(int version) {
  return (version >= kWgmmaHalfFirst && version <= kWgmmaHalfLast) || version == 60 || version == 61 || version == 65 || is_wgmma_tma(version) ||
         is_wgmma_halo(version);
}
Support wgmma_half_supports(int version, const Layer& layer, bool pool = false);
size_t wgmma_half_prepared_floats(const Layer& layer);
size_t wgmma_half_workspace_floats(int version, const Layer& layer, int n, bool bf16);
void wgmma_half_prepare(int version, const float* w, const Layer& layer, bool bf16, float* prepared, cudaStream_t s);
// Only the k table, after the (G, Mg, Kw_pad) words (fc v16 writes its own words).
void wgmma_half_prepare_table(const Layer& layer, float* prepared, cudaStream_t s);
void wgmma_half_forward(int version, const HalfConvArgs& a, cudaStream_t s);
// What the TMA versions need beyond the cp.async ones' (16 channels a tap, the tensor maps' ranges), their workspace and
// their launch (conv_wgmma_tma.cu; wgmma_half_forward checks the launch first and calls it).
Support wgmma_tma_limits(int version, const Layer& layer);
size_t wgmma_tma_workspace_floats(int version, const Layer& layer, int n, bool bf16);
void wgmma_tma_forward(int version, const HalfConvArgs& a, cudaStream_t s);
// The same for v72 / v73 (conv_wgmma_halo.cu); they need no workspace.
Support wgmma_halo_limits(int version, const Layer& layer);
void wgmma_halo_forward(int version, const HalfConvArgs& a, cudaStream_t s);

// v22 (conv_spec_half.cu).
Support spec_half_supports(const Layer& layer, bool pool);
bool spec_half_reads_model_input(const Layer& layer);
size_t spec_half_prepared_floats(const Layer& layer);
void spec_half_prepare(const float* w, const Layer& layer, bool bf16, float* prepared, cudaStream_t s);
void spec_half_forward(const HalfConvArgs& a, cudaStream_t s);

struct HalfFcArgs {
  const uint16_t* in = nullptr;  // (N, H, W, Cs) of the layer's input shape, flattened: (N, K) with K = H*W*Cs
  int n = 0, outputs = 0;
  Shape is;                      // the layer's input shape (C, H, W)
  const float* bias = nullptr;   // (O,) or null
  const float* prepared = nullptr;
  uint16_t* out = nullptr;       // (N, Os)
  int act = -1;
  float* workspace = nullptr;    // X^T words, then split-K partials
  size_t workspace_floats = 0;
  int* ovf = nullptr;
  bool bf16 = false;
};

size_t fc_half_prepared_floats(Shape is, int outputs);
size_t fc_half_workspace_floats(int version, int n, Shape is, int outputs, bool bf16);
// w: (O, C*H*W) FP32 on the device, in the NCHW flattening order of the model; prepared in NHWC order.
void fc_half_prepare(const float* w, Shape is, int outputs, bool bf16, float* prepared, cudaStream_t s);
void fc_half_forward(int version, const HalfFcArgs& a, cudaStream_t s);

// fc v16 (fc_half.cu): the layer as a 1x1 convolution on the wgmma versions (conv v39-v47).
Support fc_wgmma_supports(const Layer& l);
size_t fc_wgmma_prepared_floats(Shape is, int outputs);
size_t fc_wgmma_workspace_floats(int n, Shape is, int outputs, bool bf16);
void fc_wgmma_prepare(const float* w, Shape is, int outputs, bool bf16, float* prepared, cudaStream_t s);
void fc_wgmma_forward(int version, const HalfFcArgs& a, cudaStream_t s);

// The other layers (half_ops.cu).
void to_half_nhwc(const float* in, int n, Shape s, uint16_t* out, bool bf16, int* ovf, cudaStream_t st);    // NCHW FP32 -> NHWC
void from_half_nhwc(const uint16_t* in, int n, Shape s, float* out, bool bf16, cudaStream_t st);            // NHWC -> NCHW FP32
// --input-precision fp16 / bf16: 16-bit NCHW (converted on the host) -> NHWC, packed (cs = C) or with the pad channel.
void input16_to_nhwc(const uint16_t* in, int n, Shape s, bool packed, uint16_t* out, cudaStream_t st);
// Packed NHWC (channel stride C, no pad channel): the cudnn backend's 16-bit tensors, and its weight layouts
// (filters (M, KH, KW, C/groups) are an NHWC tensor of M images). fp16: a value beyond 65504 raises *ovf; a value
// that comes back inf or NaN raises *nonfinite (null: no check; bf16 never checks).
void to_half_packed(const float* in, int n, Shape s, uint16_t* out, bool bf16, int* ovf, cudaStream_t st);
void from_half_packed(const uint16_t* in, int n, Shape s, float* out, bool bf16, int* nonfinite, cudaStream_t st);
// packed: the cudnn backend's NHWC tensors, whose channel stride is C itself (odd counts included), where the cuda
// backend's is C rounded up to even.
void act_half(uint16_t* x, int n, Shape s, const ActParams& a, bool bf16, cudaStream_t st, bool packed = false);  // in place
void pool_half(const uint16_t* in, int n, Shape is, const PoolParams& p, Shape os, uint16_t* out, bool bf16, cudaStream_t st,
               bool packed = false);
void lrn_half(const uint16_t* in, int n, Shape s, const LrnParams& p, uint16_t* out, bool bf16, int* ovf, cudaStream_t st);
void softmax_half(const uint16_t* in, int n, Shape s, uint16_t* out, bool bf16, cudaStream_t st);

// LRN and the pooling after it in one kernel (lrn_pool_half.cu; the same values as lrn_half then pool_half, to the bit).
Support lrn_pool_half_supports(const LrnParams& lp, Shape lrn_shape, const PoolParams& pp);
// Two forms: the ring (a block computes its strip's LRN rows into shared memory, then pools them) where the batch fills
// the GPU, and the direct form (a thread computes the LRN at each position of its own window, one word, no barrier) where it
// does not. `any` lets lrn_pool_half_grid choose; the tests force each.
enum class LrnPoolHalfForm { any, ring, direct };
struct LrnPoolHalfGrid {
  bool direct = false;
  int vec = 0;            // words a task: ring 8, 4 or 1; direct 1
  int cw = 0, strip = 0;  // ring: channel pairs per chunk, output rows per strip
  int grid[3] = {};       // ring: chunks, strips, images; direct: blocks of 128 threads, 1, 1
};
// The launch's shape for `sms` multiprocessors: the direct form where its 1-word tasks are at most 768 a multiprocessor
// (and its input and output words fewer than 2^31); else the ring, with whole pixels and strips of 4 rows where that fills the GPU twice over, else
// strips of one row and chunks down to 4 words.
LrnPoolHalfGrid lrn_pool_half_grid(int n, Shape lrn_shape, const PoolParams& pp, Shape os, int sms, LrnPoolHalfForm form = LrnPoolHalfForm::any);
void lrn_pool_half(const uint16_t* in, int n, Shape s, const LrnParams& lp, const PoolParams& pp, Shape os, uint16_t* out, bool bf16,
                   int* ovf, cudaStream_t st, LrnPoolHalfForm form = LrnPoolHalfForm::any);

}  // namespace bs::cuda::half
