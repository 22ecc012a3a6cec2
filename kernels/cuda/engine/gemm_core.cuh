// The tiled shared-memory SGEMM core shared by conv v5 (explicit im2col), conv v6 (implicit GEMM) and the
// tiled fully connected layer. A Problem supplies the sizes and three device functions:
//   a(z, m, k)         element of A (M x K)
//   b(z, k, n)         element of B (K x N): a plain matrix, or computed on the fly from the input image
//   store(z, m, n, v)  where C(m, n) goes (with bias)
//   b_k_fastest        true when B is contiguous along k (B = W^T for fully connected), so that the tile
//                      load walks k first and stays coalesced
// Each block computes a BM x BN tile of C for batch index z = blockIdx.z, stepping through K by BK; each of
// its (BM/TM)*(BN/TN) threads keeps a TM x TN tile of C in registers.
#pragma once
#include <cuda_runtime.h>

namespace bs::cuda {

template <int BM, int BN, int BK, int TM, int TN, class Problem>
__global__ void __launch_bounds__((BM / TM) * (BN / TN)) gemm_kernel(Problem pr) {
  constexpr int kThreads = (BM / TM) * (BN / TN);
  __shared__ float As[BK][BM + 4];  // A tile stored k-major so a thread's TM values sit side by side
  __shared__ float Bs[BK][BN + 4];
  const int z = blockIdx.z;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int tid = threadIdx.x;
  const int tm = (tid / (BN / TN)) * TM, tn = (tid % (BN / TN)) * TN;
  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  for (int k0 = 0; k0 < pr.K; k0 += BK) {
    for (int i = tid; i < BM * BK; i += kThreads) {  // consecutive threads: consecutive k of one row
      const int mm = i / BK, kk = i % BK;
      const int m = m0 + mm, k = k0 + kk;
      As[kk][mm] = (m < pr.M && k < pr.K) ? pr.a(z, m, k) : 0.0f;
    }
    for (int i = tid; i < BK * BN; i += kThreads) {  // consecutive threads: consecutive n (or k) of B
      const int kk = Problem::b_k_fastest ? i % BK : i / BN, nn = Problem::b_k_fastest ? i / BK : i % BN;
      const int k = k0 + kk, n = n0 + nn;
      Bs[kk][nn] = (k < pr.K && n < pr.N) ? pr.b(z, k, n) : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float ra[TM], rb[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i) ra[i] = As[kk][tm + i];
#pragma unroll
      for (int j = 0; j < TN; ++j) rb[j] = Bs[kk][tn + j];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const int m = m0 + tm + i, n = n0 + tn + j;
      if (m < pr.M && n < pr.N) pr.store(z, m, n, acc[i][j]);
    }
}

template <int BM, int BN, int BK, int TM, int TN, class Problem>
void launch_gemm(const Problem& pr, int batch, cudaStream_t s) {
  dim3 grid((pr.N + BN - 1) / BN, (pr.M + BM - 1) / BM, batch);
  gemm_kernel<BM, BN, BK, TM, TN, Problem><<<grid, (BM / TM) * (BN / TN), 0, s>>>(pr);
}

// Picks a tile shape by M so that small filter counts do not waste most of the block.
template <class Problem>
void launch_gemm_auto(const Problem& pr, int batch, cudaStream_t s) {
  if (pr.M <= 16) launch_gemm<16, 256, 8, 4, 4>(pr, batch, s);
  else if (pr.M <= 32) launch_gemm<32, 128, 8, 4, 4>(pr, batch, s);
  else launch_gemm<64, 64, 16, 4, 4>(pr, batch, s);
}

}  // namespace bs::cuda
