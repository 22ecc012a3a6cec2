#include <cstdint>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/engine/gemm_math.cuh"
#include "kernels/cuda/engine/gemm_prep.hpp"

namespace bs::cuda {
namespace {

// 32x32 tiles through shared memory (one column of padding against bank conflicts): reads and writes both
// coalesced. ROUND: each value rounded to the nearest TF32 on its way (cvt.rna, ties away from zero).
template <bool ROUND>
__global__ void transpose_pad_kernel(const float* __restrict__ src, int rows, int cols, float* __restrict__ dst,
                                     int rows_pad, int cols_pad) {
  __shared__ float tile[32][33];
  const long long b = blockIdx.z;
  const int r0 = blockIdx.y * 32, c0 = blockIdx.x * 32, tx = threadIdx.x, ty = threadIdx.y;
#pragma unroll
  for (int j = 0; j < 32; j += 8) {
    const int r = r0 + ty + j, c = c0 + tx;
    float v = (r < rows && c < cols) ? src[(b * rows + r) * cols + c] : 0.0f;
    if constexpr (ROUND) {
      uint32_t t;
      asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(t) : "f"(v));
      v = __uint_as_float(t);
    }
    tile[ty + j][tx] = v;
  }
  __syncthreads();
#pragma unroll
  for (int j = 0; j < 32; j += 8) {
    const int c = c0 + ty + j, r = r0 + tx;
    if (c < cols_pad && r < rows_pad) dst[(b * cols_pad + c) * rows_pad + r] = tile[tx][ty + j];
  }
}

// One thread a value of the padded (G, Kpad, Mpad) operand: w (G, Mg, K) element (m, k), zero in the padding, split as
// tf32_split<3> splits it in the K loop, written where lane (gr, t) of the m16n8k8 A fragment of chunk (k / 8, m / 16)
// finds it: a0 (k t, m gr), a1 (t, gr + 8), a2 (t + 4, gr), a3 (t + 4, gr + 8); hi at 4 lane + r, lo 128 floats on.
__global__ void tf32_fragments_kernel(const float* __restrict__ w, int groups, int mg, int k_count, float* __restrict__ dst, int m_pad,
                                      int k_pad) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<long long>(groups) * k_pad * m_pad) return;
  const int m = static_cast<int>(i % m_pad), k = static_cast<int>((i / m_pad) % k_pad);
  const long long g = i / (static_cast<long long>(m_pad) * k_pad);
  const float v = m < mg && k < k_count ? w[(g * mg + m) * k_count + k] : 0.0f;
  uint32_t hi, lo;
  gemm::tf32_split<3>(v, hi, lo);
  const int kr = k % 8, mr = m % 16;
  const int lane = (mr % 8) * 4 + kr % 4, r = (mr / 8) + 2 * (kr / 4);
  float* chunk = dst + 2 * g * k_pad * m_pad + (static_cast<long long>(k / 8) * (m_pad / 16) + m / 16) * 256;
  chunk[4 * lane + r] = __uint_as_float(hi);
  chunk[128 + 4 * lane + r] = __uint_as_float(lo);
}

__global__ void k_table_kernel(int2* table, int k_count, int k_pad, int kh, int kw, int dh, int dw, int h, int w) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= k_pad) return;
  if (k < k_count) {
    const int x = (k % kw) * dw, y = ((k / kw) % kh) * dh, c = k / (kw * kh);
    table[k] = make_int2(c * h * w + y * w + x, (y << 16) | x);
  } else {
    table[k] = make_int2(0, kNoRow << 16);
  }
}

// One entry per chunk of 4 k (words) of the NHWC order k = (ky, kx, c) over cgs words per tap.
__global__ void nhwc_k_table_kernel(int2* table, int chunks, int k, int cgs, int kw, int dh, int dw, int w, int cs) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= chunks) return;
  const int kk = 4 * j;
  if (kk < k) {
    const int tap = kk / cgs, c = kk - tap * cgs, ky = tap / kw, y = ky * dh, x = (tap - ky * kw) * dw;
    table[j] = make_int2((y * w + x) * cs + c, (y << 16) | x);
  } else {
    table[j] = make_int2(0, kNoRow << 16);
  }
}

}  // namespace

void transpose_pad(const float* src, int batch, int rows, int cols, float* dst, int rows_pad, int cols_pad, cudaStream_t s,
                   bool round_tf32) {
  const dim3 grid((cols_pad + 31) / 32, (rows_pad + 31) / 32, batch);
  if (round_tf32) transpose_pad_kernel<true><<<grid, dim3(32, 8), 0, s>>>(src, rows, cols, dst, rows_pad, cols_pad);
  else transpose_pad_kernel<false><<<grid, dim3(32, 8), 0, s>>>(src, rows, cols, dst, rows_pad, cols_pad);
  CUDA_CHECK_LAUNCH();
}

void prepare_tf32_fragments(const float* w, int groups, int mg, int k, float* dst, int m_pad, int k_pad, cudaStream_t s) {
  const long long total = static_cast<long long>(groups) * k_pad * m_pad;
  tf32_fragments_kernel<<<static_cast<unsigned>((total + 255) / 256), 256, 0, s>>>(w, groups, mg, k, dst, m_pad, k_pad);
  CUDA_CHECK_LAUNCH();
}

void build_k_table(int2* table, int k, int k_pad, int kh, int kw, int dh, int dw, int h, int w, cudaStream_t s) {
  k_table_kernel<<<(k_pad + 255) / 256, 256, 0, s>>>(table, k, k_pad, kh, kw, dh, dw, h, w);
  CUDA_CHECK_LAUNCH();
}

void build_nhwc_k_table(int2* table, int chunks, int k, int cgs, int kw, int dh, int dw, int w, int cs, cudaStream_t s) {
  nhwc_k_table_kernel<<<(chunks + 255) / 256, 256, 0, s>>>(table, chunks, k, cgs, kw, dh, dw, w, cs);
  CUDA_CHECK_LAUNCH();
}

}  // namespace bs::cuda
