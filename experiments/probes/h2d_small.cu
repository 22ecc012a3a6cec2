// Probe: how long does a pinned host-to-device copy of one AlexNet image (3 x 227 x 227 floats, 618 KB) take, and
// does splitting it over several streams (copy engines) shorten it? At batch 1 the sweep's breakdown shows the input
// copy at 31-33 us (about 19 GB/s), against 55 GB/s for the 633 MB batch-1024 copy (experiments/end-to-end.md).
// "written": the host buffer is rewritten by the CPU before every copy (as the sweep refills its input before each
// pass), so the copy reads lines that are dirty in the CPU's caches; "clean": the same buffer, untouched between copies.
// Prints, per size and per number of pieces, the median and p10/p90 of: the GPU interval between events around the
// copies (fork/join over streams) and the host interval from the first copy call to the synchronisation's return.
// Build: nvcc -O2 -arch=sm_90 h2d_small.cu -o h2d_small
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#define CK(x)                                                                   \
  do {                                                                          \
    cudaError_t e_ = (x);                                                       \
    if (e_ != cudaSuccess) {                                                    \
      std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      return 1;                                                                 \
    }                                                                           \
  } while (0)

static double pct(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(p * (v.size() - 1))];
}

int main() {
  int engines = 0;
  CK(cudaDeviceGetAttribute(&engines, cudaDevAttrAsyncEngineCount, 0));
  std::printf("async engines: %d\n", engines);
  const size_t max_bytes = size_t{64} << 20;
  char *host, *dev;
  CK(cudaMallocHost(&host, max_bytes));
  CK(cudaMalloc(&dev, max_bytes));
  std::fill(host, host + max_bytes, 1);
  cudaStream_t s[4];
  cudaEvent_t fork, join[4], t0, t1;
  for (int i = 0; i < 4; ++i) {
    CK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
    CK(cudaEventCreateWithFlags(&join[i], cudaEventDisableTiming));
  }
  CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  CK(cudaEventCreate(&t0));
  CK(cudaEventCreate(&t1));
  const size_t image = size_t{3} * 227 * 227 * 4;
  const size_t sizes[] = {64 << 10, 256 << 10, image, 2 * image, 8 * image, size_t{16} << 20, max_bytes};
  std::printf("host buffer | bytes | pieces | gpu us p50 (p10-p90) | GB/s | host us p50 (p10-p90)\n");
  for (bool written : {false, true})
  for (size_t bytes : sizes) {
    for (int pieces : {1, 2, 4}) {
      if (written && (pieces > 2 || bytes > (size_t{16} << 20))) continue;
      std::vector<double> gpu, host_us;
      const int reps = bytes > (size_t{8} << 20) ? 30 : 300;
      for (int r = 0; r < reps + 10; ++r) {
        if (written) std::fill(host, host + bytes, static_cast<char>(r));
        const auto h0 = std::chrono::steady_clock::now();
        CK(cudaEventRecord(t0, s[0]));
        CK(cudaEventRecord(fork, s[0]));
        const size_t piece = (bytes / pieces + 255) / 256 * 256;
        for (int i = 0; i < pieces; ++i) {
          const size_t off = i * piece;
          if (off >= bytes) break;
          if (i > 0) CK(cudaStreamWaitEvent(s[i], fork, 0));
          CK(cudaMemcpyAsync(dev + off, host + off, std::min(piece, bytes - off), cudaMemcpyHostToDevice, s[i]));
          if (i > 0) {
            CK(cudaEventRecord(join[i], s[i]));
            CK(cudaStreamWaitEvent(s[0], join[i], 0));
          }
        }
        CK(cudaEventRecord(t1, s[0]));
        CK(cudaStreamSynchronize(s[0]));
        const auto h1 = std::chrono::steady_clock::now();
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, t0, t1));
        if (r < 10) continue;
        gpu.push_back(ms * 1e3);
        host_us.push_back(std::chrono::duration<double, std::micro>(h1 - h0).count());
      }
      const double g = pct(gpu, 0.5);
      std::printf("%s | %zu | %d | %.1f (%.1f-%.1f) | %.1f | %.1f (%.1f-%.1f)\n", written ? "written" : "clean", bytes, pieces, g, pct(gpu, 0.1), pct(gpu, 0.9),
                  bytes / g * 1e-3, pct(host_us, 0.5), pct(host_us, 0.1), pct(host_us, 0.9));
    }
  }
  return 0;
}
