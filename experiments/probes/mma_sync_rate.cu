// Probe: the FP16 tensor cores' rate through mma.sync (m16n8k16, FP32 accumulation: HMMA.16816.F32), the instruction
// every ECE 408 kernel on the tensor cores uses (v22, v57, v58, v59). Each warp runs CHAINS independent accumulators
// through ITER steps of one MMA each, operands in registers (no memory traffic), on WARPS warps a multiprocessor, one
// wave; TFLOP/s = 2 x 16 x 8 x 16 x MMAs / time, median of 7 launches. experiments/ece408-gpu.md ("conv v59") compares
// it with the H200's dense FP16 peak through wgmma (989 TFLOP/s at 1.83 GHz on the H100's data sheet).
// Build: nvcc -std=c++20 -O3 -arch=sm_90 -I. experiments/probes/mma_sync_rate.cu -o mma_sync_rate
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "experiments/probes/check.cuh"

constexpr int kIter = 4096;

template <int CHAINS>
__global__ void mma_chains(float* out, uint32_t seed) {
  uint32_t a[4], b[2];
  for (int r = 0; r < 4; ++r) a[r] = (seed * (threadIdx.x + 7 * r + 1)) & 0x3bff3bffu;  // finite fp16 pairs
  for (int r = 0; r < 2; ++r) b[r] = (seed * (threadIdx.x + 3 * r + 5)) & 0x3bff3bffu;
  float acc[CHAINS][4] = {};
  for (int it = 0; it < kIter; ++it) {
#pragma unroll
    for (int c = 0; c < CHAINS; ++c)
      asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                   : "+f"(acc[c][0]), "+f"(acc[c][1]), "+f"(acc[c][2]), "+f"(acc[c][3])
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
  float s = 0.0f;
  for (int c = 0; c < CHAINS; ++c) s += acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

template <int CHAINS>
void run(int sms, int warps) {
  const int blocks = sms * warps / 4, threads = 128;  // blocks of 4 warps, warps / 4 of them a multiprocessor
  float* out = nullptr;
  CK(cudaMalloc(&out, sizeof(float) * blocks * threads));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::vector<float> ms;
  for (int rep = 0; rep < 8; ++rep) {
    CK(cudaEventRecord(e0));
    mma_chains<CHAINS><<<blocks, threads>>>(out, 2654435761u + rep);
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float t = 0.0f;
    CK(cudaEventElapsedTime(&t, e0, e1));
    if (rep) ms.push_back(t);  // the first launch warms up
  }
  CK(cudaGetLastError());
  std::sort(ms.begin(), ms.end());
  const double t = ms[ms.size() / 2] * 1e-3, mmas = static_cast<double>(blocks) * 4 * kIter * CHAINS;
  std::printf("warps/SM %2d  chains %d  %8.3f ms  %7.1f TFLOP/s\n", warps, CHAINS, t * 1e3, mmas * 4096.0 / t * 1e-12);
  CK(cudaFree(out));
}

int main() {
  int dev = 0, sms = 0, clock_khz = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev));
  std::printf("%d SMs, %.2f GHz (attribute)\n", sms, clock_khz * 1e-6);
  for (int warps : {4, 8, 12, 16, 32}) {
    run<2>(sms, warps);
    run<4>(sms, warps);
    run<8>(sms, warps);
  }
  return 0;
}
