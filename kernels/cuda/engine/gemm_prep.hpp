// Preparing operands in the layouts the GEMM engine reads (gemm_engine.cuh): k-major and zero-padded, so
// that every tile load is a 16-byte cp.async with no bounds check. Run on the device: once per set of
// resident weights, or for every layer run with per-layer transfers (where the prepared copy lives in the
// layer's workspace, allocated and freed with it).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

namespace bs::cuda {

// dst (batch, cols_pad, rows_pad) = src (batch, rows, cols) transposed, zeros in the padding; round_tf32: every value
// rounded to the nearest TF32 (for a tensor-core operand that would otherwise be truncated: conv_wgmma.cu).
void transpose_pad(const float* src, int batch, int rows, int cols, float* dst, int rows_pad, int cols_pad, cudaStream_t s,
                   bool round_tf32 = false);

// The same padded (G, Kpad, Mpad) operand of w (G, Mg, K) as its 3xTF32 parts (gemm_math.cuh's tf32_split<3>) in the
// order of the m16n8k8 A fragments, 2 x G x Kpad x Mpad floats: per group Kpad / 8 rows of Mpad / 16 chunks, a chunk
// the 32 lanes' four hi values (lane (g, t): a0 (k t, m g), a1 (k t, m g + 8), a2 (k t + 4, m g), a3 (k t + 4, m g + 8))
// and then their four lo values (conv v64: the weights split once, not in every block's K loop).
void prepare_tf32_fragments(const float* w, int groups, int mg, int k, float* dst, int m_pad, int k_pad, cudaStream_t s);

// The implicit-im2col table of a convolution: for reduction index k = (c * KH + ky) * KW + kx of one group, the tap's
// offsets from the window's origin {c * H * W + y * W + x, y << 16 | x}, y = ky * dh and x = kx * dw (dilation);
// entries k_pad > k >= K hold a row offset no image has. The kernels reading it never see ky or the dilation.
void build_k_table(int2* table, int k, int k_pad, int kh, int kw, int dh, int dw, int h, int w, cudaStream_t s);
constexpr int kNoRow = 0x7fff;  // the padding entries' ky

// The same for the NHWC order k = (ky, kx, c) over cgs words per tap (wgmma_conv_loads.cuh), one entry per chunk of 4
// words (cgs a multiple of 4): {(y * W + x) * cs + c, y << 16 | x}, cs the words per input pixel; chunks past k hold
// kNoRow.
void build_nhwc_k_table(int2* table, int chunks, int k, int cgs, int kw, int dh, int dw, int w, int cs, cudaStream_t s);

}  // namespace bs::cuda
