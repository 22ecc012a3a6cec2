// The GPU's other layers: activation, pooling, LRN (lrn_pool.cu), softmax, and the fully connected menu (each version
// a descriptor in the registry, registered by the file that implements it: impl_hooks.hpp):
//   fc v1 naive     one thread per output, dot product over the inputs, weights in global memory
//   fc v2 tiled     the tiled shared-memory SGEMM (gemm_core.cuh), bias in its epilogue
//   fc v3 texture   one warp per output, weights read through a texture object, shuffle reduction
//   fc v4 warp      one warp per output row for up to 8 images at once: the weight row is read once, in
//                   16-byte pieces through the read-only path (__ldg)
//   fc v5 stream    weight streaming for small batches (fc_gemm.cu): every weight read once at memory
//                   bandwidth, 4 16-byte loads in flight per lane
//   fc v6-v9        the GEMM engine (gemm_engine.cuh): v6 FP32 FFMA, v7 3xTF32 tensor cores (FP32 accuracy),
//                   v8 = v7 with 64x64 tiles, v9 with 128x64; weights prepared once as W^T (fc_prepared_floats,
//                   fc_prepare)
//   fc auto         the tuning table's choice, else the planner's heuristic (kernels/plan/heuristics.cpp). v2 and
//                   v6-v9 split K across blocks when their tiles alone would leave SMs idle.
// v5-v9 fuse the activation that follows (FcArgs::act).
#pragma once
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "kernels/model/model.hpp"

namespace bs::cuda {

void activation_forward(float* x, long long count, const ActParams& a, cudaStream_t s);                   // in place
void pool_forward(const float* in, int n, Shape is, const PoolParams& p, Shape os, float* out, cudaStream_t s);
void lrn_forward(const float* in, int n, Shape s_, const LrnParams& p, float* out, cudaStream_t s);
// LRN then pooling in one kernel: whether the LRN's plane fits its shared memory, and the kernel. os: the
// pooling's output shape.
bool lrn_pool_fusable(Shape lrn_shape);
void lrn_pool_forward(const float* in, int n, Shape s_, const LrnParams& lp, const PoolParams& pp, Shape os, float* out,
                      cudaStream_t s);
// Whether LRN (then the pooling pp, output os; pp null: LRN alone) at batch n runs the channel walk, the kernel for
// batches that give it enough blocks; else the one-thread-per-output kernels. lrn_walk_shape: its launch shape on a GPU
// of `sms` multiprocessors (ok false where it does not run): blocks of `chunk` channels of a tile of `tile_rows` rows
// (pooled rows with pooling), `chunks` x `tiles` x images of them.
struct WalkShape {
  bool ok = false;
  int chunk = 0, tile_rows = 0, tiles = 0, ppt = 0, threads = 0;
  long long chunks = 0, blocks = 0;
};
WalkShape lrn_walk_shape(int n, Shape s_, const LrnParams& lp, const PoolParams* pp, Shape os, int sms);
bool lrn_walk_runs(int n, Shape s_, const LrnParams& lp, const PoolParams* pp, Shape os);
void softmax_forward(const float* in, int n, int features, float* out, cudaStream_t s);
// --input-precision u8: count bytes widened to floats (in 4-byte aligned, out 16-byte aligned).
void u8_to_float(const unsigned char* in, long long count, float* out, cudaStream_t s);

// --copies kernel: `bytes` copied by a kernel, to the device (src in pinned host memory, read over the bus) or from
// it (dst in pinned host memory), so that a pass's copies can sit inside its CUDA graph. The profiler books these
// kernels as htod / dtoh copies (kernels/profile/profile.hpp, bus_copy_direction).
void bus_copy(void* dst, const void* src, size_t bytes, bool to_device, cudaStream_t s);
// One block that does nothing: the first work behind a host function, so that the stream's release from it is not
// counted in the first layer's events (gpu_pipeline.cpp, StreamGate).
void empty_launch(cudaStream_t s);

struct FcArgs {
  const float* in = nullptr;  // (N, I)
  int n = 0, inputs = 0, outputs = 0;
  const float* w = nullptr;           // (O, I)
  cudaTextureObject_t wtex = 0;       // v3: texture over w
  const float* bias = nullptr;        // (O,) or null
  const float* prepared = nullptr;    // v6-v9: W^T padded (fc_prepare)
  float* out = nullptr;               // (N, O)
  float* workspace = nullptr;         // v2: split-K partials; v6-v9: X^T and split-K partials
  size_t workspace_floats = 0;
  int act = -1;                       // v5-v9: activation code (epilogue.cuh act_code), -1: none
};

// The current device's multiprocessor count, asked once per process (ops.cu).
int sm_count();

namespace detail {
// ops.cu: fc v1-v4.
size_t fc_basic_workspace_floats(int version, int n, int inputs, int outputs);
void fc_basic_forward(int version, const FcArgs& a, cudaStream_t s);
// fc_gemm.cu: fc v5 (stream), v6-v11 (the GEMM engine).
size_t fc_engine_prepared_floats(int inputs, int outputs);
size_t fc_engine_workspace_floats(int version, int n, int inputs, int outputs);
void fc_engine_prepare(const float* w, int inputs, int outputs, float* prepared, cudaStream_t s);
void fc_stream_forward(const FcArgs& a, cudaStream_t s);
void fc_engine_forward(int version, const FcArgs& a, cudaStream_t s);
}  // namespace detail

}  // namespace bs::cuda
