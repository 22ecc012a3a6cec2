// The GPU's other layers: activation, pooling, LRN, softmax, and the fully connected menu:
//   fc v1 naive     one thread per output, dot product over the inputs, weights in global memory
//   fc v2 tiled     the tiled shared-memory SGEMM (gemm_core.cuh), bias in its epilogue
//   fc v3 texture   one warp per output, weights read through a texture object, shuffle reduction
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
int parse_fc_variant(const std::string& text);
constexpr int kDefaultFcVariant = 2;

// in (N, I), w (O, I), bias (O,) or null, out (N, O); wtex is a texture over w (v3)
void fc_forward(int version, const float* in, int n, int inputs, const float* w, cudaTextureObject_t wtex,
                const float* bias, int outputs, float* out, cudaStream_t s);

}  // namespace bs::cuda
