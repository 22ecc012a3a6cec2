// The GPU's other layers: activation, pooling, LRN, softmax, and the fully connected menu:
//   fc v1 naive     one thread per output, dot product over the inputs, weights in global memory
//   fc v2 tiled     the tiled shared-memory SGEMM (gemm_core.cuh), bias in its epilogue
//   fc v3 texture   one warp per output, weights read through a texture object, shuffle reduction
//   fc v4 warp      one warp per output row for up to 8 images at once: the weight row is read once, in
//                   16-byte pieces through the read-only path (__ldg); for small batches, where the layer
//                   is a pass over the weights
//   fc auto         v4 for batches up to 16, else v2 (default). v2 splits K across blocks (partial sums in
//                   the workspace, then a reduction) when its tiles alone would leave most SMs idle
#pragma once
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "kernels/model.hpp"

namespace bs::cuda {

void activation_forward(float* x, long long count, Act act, cudaStream_t s);                   // in place
void pool_forward(const float* in, int n, Shape is, const PoolParams& p, Shape os, float* out, cudaStream_t s);
void lrn_forward(const float* in, int n, Shape s_, const LrnParams& p, float* out, cudaStream_t s);
void softmax_forward(const float* in, int n, int features, float* out, cudaStream_t s);

struct FcVersion {
  int number;
  const char* name;
};
const std::vector<FcVersion>& fc_versions();
int parse_fc_variant(const std::string& text);  // "auto" is 0
constexpr int kAutoFcVariant = 0;
int resolve_fc_variant(int version, int n);      // auto -> the version used for n images

// Workspace floats fc_forward needs (v2's split-K partial sums).
size_t fc_workspace_floats(int version, int n, int inputs, int outputs);
// in (N, I), w (O, I), bias (O,) or null, out (N, O); wtex is a texture over w (v3)
void fc_forward(int version, const float* in, int n, int inputs, const float* w, cudaTextureObject_t wtex,
                const float* bias, int outputs, float* out, float* workspace, size_t workspace_floats, cudaStream_t s);

}  // namespace bs::cuda
