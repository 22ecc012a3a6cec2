// Probe: how fast does the host move a pageable input into pinned staging memory, by number of threads, alone and
// while a copy engine reads another pinned buffer (as in `--transfers overlapped --host-memory pageable`, where chunk
// c+1's staging runs beside chunk c's host-to-device copy)? At AlexNet batch 1024 FP32 that path has taken 42-45 ms in
// every session (633 MB: ~14.5 GB/s), whatever the kernels took; with the kernels at 31 ms it is 1.41x them.
// One copy: a 158 MB chunk (256 AlexNet images) from a 633 MB pageable buffer (a different quarter each time, so no
// cache holds it) into a pinned buffer, split into T equal slices over T OpenMP threads (as host_copy() does).
// Build: nvcc -O2 -std=c++17 -Xcompiler -fopenmp host_copy_rate.cu -o host_copy_rate
#include <cuda_runtime.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "check.cuh"

static void copy(char* dst, const char* src, size_t bytes, int threads) {
  const size_t slice = (bytes + threads - 1) / threads;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int t = 0; t < threads; ++t) {
    const size_t at = std::min(bytes, slice * t), len = std::min(bytes - at, slice);
    std::memcpy(dst + at, src + at, len);
  }
}

int main() {
  const size_t chunk = 256ull * 3 * 227 * 227 * 4, total = 4 * chunk;
  char* src = static_cast<char*>(std::malloc(total));
  std::memset(src, 1, total);
  char *stage, *other, *dev;
  CK(cudaMallocHost(&stage, chunk));
  CK(cudaMallocHost(&other, chunk));
  CK(cudaMalloc(&dev, chunk));
  std::memset(stage, 0, chunk);
  std::memset(other, 0, chunk);
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  auto t0 = std::chrono::steady_clock::now();
  CK(cudaMemcpyAsync(dev, other, chunk, cudaMemcpyHostToDevice, s));
  CK(cudaStreamSynchronize(s));
  const double dma = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("cores %d; one pinned %.0f MB host-to-device copy alone: %.2f ms, %.1f GB/s\n", omp_get_num_procs(),
              chunk / 1e6, dma * 1e3, chunk / dma / 1e9);
  std::printf("%7s %14s %10s %18s %10s %12s\n", "threads", "alone ms", "GB/s", "beside a DMA ms", "GB/s", "DMA GB/s");
  for (int threads : {1, 2, 4, 8, 12, 16}) {
    std::vector<double> alone, beside, dma_rate;
    for (int r = 0; r < 9; ++r) {
      const char* from = src + (r % 4) * chunk;
      t0 = std::chrono::steady_clock::now();
      copy(stage, from, chunk, threads);
      alone.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      cudaEvent_t a, b;
      CK(cudaEventCreate(&a));
      CK(cudaEventCreate(&b));
      CK(cudaEventRecord(a, s));
      CK(cudaMemcpyAsync(dev, other, chunk, cudaMemcpyHostToDevice, s));
      CK(cudaEventRecord(b, s));
      t0 = std::chrono::steady_clock::now();
      copy(stage, src + ((r + 1) % 4) * chunk, chunk, threads);
      beside.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      CK(cudaStreamSynchronize(s));
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, a, b));
      dma_rate.push_back(chunk / (ms * 1e-3) / 1e9);
      CK(cudaEventDestroy(a));
      CK(cudaEventDestroy(b));
    }
    auto med = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    std::printf("%7d %14.2f %10.1f %18.2f %10.1f %12.1f\n", threads, med(alone) * 1e3, chunk / med(alone) / 1e9,
                med(beside) * 1e3, chunk / med(beside) / 1e9, med(dma_rate));
  }
  return 0;
}
