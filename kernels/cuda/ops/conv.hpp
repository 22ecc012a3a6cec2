// Convolution on the GPU: a menu of numbered versions (the llm.c dev/cuda habit). Version numbers and
// names appear in CSVs and reports, so results and code stay matched.
//
//   v1 direct          one thread per output, weights in global memory
//   v2 smem-tile       one block per 16x16 output tile of one (image, filter); the input tile it reads
//                      ((16-1)*stride+K)^2 per channel is staged in shared memory
//   v3 constant        v1 with the weights in __constant__ memory (64 KiB); a layer with more weights is
//                      run in chunks of filters, each chunk uploaded by cudaMemcpyToSymbolAsync (visible in
//                      the profile as its own copy)
//   v4 texture         v1 with the weights read through a texture object (the read-only / texture cache)
//   v5 unroll-gemm     im2col ("unroll") kernel into a workspace, then the tiled shared-memory SGEMM
//                      (images processed in chunks so the workspace stays bounded)
//   v6 implicit-gemm   unroll fused into the GEMM (implicit GEMM): 64x64 block tiles, 4x4 outputs per
//                      thread in registers, the im2col matrix never written
//   v7 specialised     kernels compiled for fixed (C, K, M) shapes, stride 1, no padding: weights in
//                      __constant__ memory read as FFMA immediates, the input tile in shared memory, each
//                      thread computing every filter for two neighbouring outputs
//   v8 fused           v7 with bias + activation + 2x2 max pool folded into its epilogue when the model has
//                      them right after the convolution; the pooled map is all it writes
//   v9 tiled-spec      compile-time shapes like v7, but weights staged in shared memory as (C, K, K, M) and
//                      a register tile of PX outputs x MQ filters per thread (conv_tiled_spec.cu says why)
//   v10 tiled-fused    v9 with v8's fused bias + activation + 2x2 max pool epilogue
//   v11 tc-3xtf32      v10, except that ECE 408 conv2's shape runs on the tensor cores: an implicit GEMM in
//                      mma.sync TF32 steps with every operand split into two TF32 parts and three products
//                      per FP32 product, so the result keeps FP32 accuracy (conv_tc.cu); fuses an
//                      activation there, not pooling
//   v12 gemm-fma       the GEMM engine (gemm_engine.cuh, conv_gemm.cu) for any shape: implicit GEMM with
//                      128x128x32 tiles, 8x8 FP32 FFMA outputs per thread, 3-stage cp.async pipeline, split-K
//                      for small grids, bias + the following activation in the epilogue
//   v13 gemm-3xtf32    the same engine on the tensor cores with 3xTF32 (FP32 accuracy), 128x64x32 tiles
//   v14 gemm-3xtf32-64 v13 with 64x64x32 tiles, for small layers and batches
//   v15 gemm-3xtf32-128  v13 with 128x128x32 tiles, one block per SM
//   v16-v18              --precision tf32 on v15, v13, v14's tiles; v19-v22 fp16/bf16 (half_ops.hpp)
//   v23-v25 wgmma-tf32*  --precision tf32 on the engine's Hopper mainloop (gemm_wgmma.cuh, conv_wgmma.cu): wgmma
//                        from 128-byte-swizzled shared memory, 128 pixels x 128 / 192 / 96 filters per block
//   v26-v28 wgmma-nhwc*  v23-v25 reading an NHWC copy of the input, 4 channels per 16-byte copy
//   v29, v30             v26, v28 with 256 pixels per block
//   v31-v33              v26 on 4 or 3 warpgroups: 256 x 128, 192 x 128, 256 x 96
//   v34-v36 wgmma-3xtf32*  FP32 accuracy on the wgmma mainloop: 3xTF32 with both operands split into two parts
// Each version is one descriptor in the registry (kernels/plan/registry.hpp), registered by the file that implements
// it (impl_hooks.hpp lists the files); the menu's one-line summaries are in those descriptors. v12-v18 and v23-v36 read
// their weights prepared once into the engine's layout (the descriptor's prepared_floats; ImplHooks::conv_prepare).
//
// Every version handles bias; v1-v6 and v12-v15 handle any stride, padding and groups. The descriptors' supports()
// say why not otherwise.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/exec/backend.hpp"
#include "kernels/model/model.hpp"
#include "kernels/plan/registry.hpp"

namespace bs::cuda {

// What a fused epilogue does after the convolution (kernels/plan/registry.hpp).
using Epilogue = bs::Epilogue;

struct ConvArgs {
  const float* in = nullptr;    // (N, C, H, W)
  const float* w = nullptr;     // (M, C/groups, KH, KW)
  uint64_t weights_id = 0;      // names w while it stays unchanged on the device (const_bank.hpp); 0: unknown
  const float* bias = nullptr;  // (M,) or null
  float* out = nullptr;         // (N, M, OH, OW), or (N, M, OH/2, OW/2) with a pooling epilogue
  int n = 0;
  Shape is, os;  // input and (unpooled) output shape per image
  const ConvParams* p = nullptr;
  cudaTextureObject_t wtex = 0;    // v4: texture over w
  const float* prepared = nullptr;  // v12-v15: the weights in the engine's layout, then the k table (conv_prepare)
  float* workspace = nullptr;      // v5: im2col chunk; v12-v15: split-K partial sums
  size_t workspace_floats = 0;
  Epilogue epi;                    // v8, v10, v11
};

// conv v51-v56 (conv_wgmma_3xf16.cu): whether the layer's input pass runs fused, one thread-block cluster per image
// reading the input once, or as a max pass and a copy pass (f16_split.cuh).
bool f16_split_fused(int version, const Layer& layer);
// The same pass on n images of x (host, FP32, the layer's input), fused (where it runs; band_for's launch shape) or in
// two passes: its words (hi, then lo), each image's max |x| as FP32 bits, and the fused pass's blocks (bands) an image
// (tests compare the two ways bit for bit).
struct F16SplitWords {
  std::vector<uint32_t> words;
  std::vector<unsigned> amax;
  int blocks = 0;
};
F16SplitWords f16_split_words(int version, const Layer& layer, const std::vector<float>& x, int n, bool two_passes);

namespace detail {
// Implemented in conv_basic.cu: v1, v2, v4, v5, v6.
Support basic_supports(int version, const Layer& layer, const Epilogue& epi);
size_t basic_workspace_floats(int version, const Layer& layer, int n);
void basic_forward(int version, const ConvArgs& a, cudaStream_t s);
// Implemented in conv_const.cu (the translation unit that owns the __constant__ weight bank).
Support const_supports(int version, const Layer& layer, const Epilogue& epi);
void const_forward(int version, const ConvArgs& a, cudaStream_t s);
// Implemented in conv_tiled_spec.cu.
Support tiled_supports(int version, const Layer& layer, const Epilogue& epi);
void tiled_forward(int version, const ConvArgs& a, cudaStream_t s);
// Implemented in conv_tc.cu. tc_supports serves v11 and v57 (conv_tc_f16.cu), which share its shapes: conv2's on the
// tensor cores, conv1's on v10's kernel; `version` names the one asked about in the reasons.
bool tc_is_conv2(Shape in, const ConvParams& p);
Support tc_supports(int version, const Layer& layer, const Epilogue& epi);
void tc_forward(const ConvArgs& a, cudaStream_t s);
// Implemented in conv_tc_f16.cu: v57's conv2 kernel (3xFP16), which v59 (conv_band_3xf16.cu) runs too, and whether the
// device gives it its 222 KB block (false without a GPU).
void tc3_conv2_forward(const ConvArgs& a, cudaStream_t s);
bool tc3_conv2_fits();
// Implemented in conv_gemm.cu.
Support gemm_supports(int version, const Layer& layer, const Epilogue& epi);
size_t gemm_prepared_floats(int version, const Layer& layer);
size_t gemm_workspace_floats(int version, const Layer& layer, int n);
void gemm_prepare(int version, const ConvArgs& a, float* prepared, cudaStream_t s);
void gemm_forward(int version, const ConvArgs& a, cudaStream_t s);
// The split-K reduction of v12-v18 and v23-v25: partial sums (splits, G, Mg, ncols) in a.workspace, summed into
// a.out (N, M, OH, OW) with the bias and the activation code act (-1: none).
void conv_splitk_finish(const ConvArgs& a, int splits, int groups, int mg, int ncols, int p, int act, cudaStream_t s);
// Implemented in conv_wgmma.cu (built for sm_90a).
Support wgmma_supports(int version, const Layer& layer, const Epilogue& epi);
size_t wgmma_prepared_floats(int version, const Layer& layer);
size_t wgmma_workspace_floats(int version, const Layer& layer, int n);
void wgmma_prepare(int version, const ConvArgs& a, float* prepared, cudaStream_t s);
void wgmma_forward(int version, const ConvArgs& a, cudaStream_t s);
}  // namespace detail

}  // namespace bs::cuda
