// Preparing operands in the layouts the GEMM engine reads (gemm_engine.cuh): k-major and zero-padded, so
// that every tile load is a 16-byte cp.async with no bounds check. Run on the device: once per set of
// resident weights, or for every layer run with per-layer transfers (where the prepared copy lives in the
// layer's workspace, allocated and freed with it).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

namespace bs::cuda {

// dst (batch, cols_pad, rows_pad) = src (batch, rows, cols) transposed, zeros in the padding.
void transpose_pad(const float* src, int batch, int rows, int cols, float* dst, int rows_pad, int cols_pad, cudaStream_t s);

// The implicit-im2col table of a convolution: for reduction index k = (c * KH + ky) * KW + kx of one group,
// {c * H * W + ky * W + kx, ky << 16 | kx}; entries k_pad > k >= K hold a row offset no image has.
void build_k_table(int2* table, int k, int k_pad, int kh, int kw, int h, int w, cudaStream_t s);
constexpr int kNoRow = 0x7fff;  // the padding entries' ky

}  // namespace bs::cuda
