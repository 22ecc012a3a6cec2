// Probe: do CUDA events recorded around cublasGemmEx (FP16 operands, FP32 compute) enclose its kernel?
// The cudnn backend's fp16 fc6 at batch 1024 timed 0.012 ms between its events (77 GFLOP: impossible) while
// CUPTI saw the GEMM kernel outside every layer. Build: nvcc -O2 -arch=sm_90 cublas_events.cu -lcublas
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>

__global__ void touch(float* p) { if (threadIdx.x == 0) p[0] += 1.0f; }
__global__ void spin(long long cycles) {  // one block busy for `cycles`: the work before the GEMM
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {}
}

int main() {
  const int m = 4096, n = 1024, k = 9216;
  __half *a, *b, *c;
  float* f;
  cudaMalloc(&a, sizeof(__half) * m * k);
  cudaMalloc(&b, sizeof(__half) * k * n);
  cudaMalloc(&c, sizeof(__half) * m * n);
  cudaMalloc(&f, sizeof(float));
  cudaMemset(a, 0, sizeof(__half) * m * k);
  cudaMemset(b, 0, sizeof(__half) * k * n);
  cudaStream_t s;
  cudaStreamCreate(&s);
  cublasHandle_t h;
  cublasCreate(&h);
  cublasSetStream(h, s);
  const float one = 1.0f, zero = 0.0f;
  auto gemm = [&] {
    cublasStatus_t st = cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one, a, CUDA_R_16F, k, b, CUDA_R_16F, k, &zero, c,
                                     CUDA_R_16F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    if (st != CUBLAS_STATUS_SUCCESS) std::printf("gemm status %d\n", st);
  };
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  for (int i = 0; i < 5; ++i) gemm();
  cudaStreamSynchronize(s);
  for (int rep = 0; rep < 3; ++rep) {
    float ms = 0, ms2 = 0;
    cudaEventRecord(e0, s);
    gemm();
    cudaEventRecord(e1, s);
    cudaEventSynchronize(e1);
    cudaEventElapsedTime(&ms, e0, e1);
    cudaEventRecord(e0, s);
    gemm();
    touch<<<1, 32, 0, s>>>(f);
    cudaEventRecord(e1, s);
    cudaEventSynchronize(e1);
    cudaEventElapsedTime(&ms2, e0, e1);
    auto t0 = std::chrono::steady_clock::now();
    gemm();
    cudaStreamSynchronize(s);
    const double host = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    cudaEvent_t b0, b1;  // blocking-sync events, created per rep
    cudaEventCreateWithFlags(&b0, cudaEventBlockingSync);
    cudaEventCreateWithFlags(&b1, cudaEventBlockingSync);
    float ms3 = 0;
    cudaEventRecord(b0, s);
    gemm();
    cudaEventRecord(b1, s);
    cudaEventSynchronize(b1);
    cudaEventElapsedTime(&ms3, b0, b1);
    std::printf("events around gemm %.4f ms | gemm + kernel %.4f ms | host gemm+sync %.4f ms | blocking events %.4f ms\n", ms, ms2, host, ms3);
  }
  // After other work (as in a network): a kernel, the begin event, the GEMM, a kernel, the end event.
  for (int wait = 0; wait < 2; ++wait)
    for (int rep = 0; rep < 3; ++rep) {
      float ms = 0;
      spin<<<1, 32, 0, s>>>(2000000);
      cudaEventRecord(e0, s);
      if (wait) cudaStreamWaitEvent(s, e0, 0);
      gemm();
      touch<<<1, 32, 0, s>>>(f);
      cudaEventRecord(e1, s);
      cudaEventSynchronize(e1);
      cudaEventElapsedTime(&ms, e0, e1);
      std::printf("after a kernel%s: events around gemm + kernel %.4f ms\n", wait ? " (stream waits on the begin event)" : "", ms);
    }
  std::printf("%s\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}
