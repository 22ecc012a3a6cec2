// Probe: how close to its kernel sum can one batch-1 request get, and which part of the gap does each way of
// submitting it remove? The eleventh session measured AlexNet batch 1 with --cuda-graph and an 8-bit input at
// 0.229 ms end to end against 0.1996 ms of kernels (1.15x); its traces showed the kernels back to back and put the
// rest in the host's submissions, the GPU's start and the output's return (experiments/end-to-end.md).
//
// A stand-in for the pass: 19 kernels of 132 blocks that each spin for the time the AlexNet kernel of the same
// position took (the batch-1 trace), between an input copy (bytes of one image: 154587 for u8, 618348 for FP32)
// and a 4000-byte output copy, pinned host buffers, the input rewritten by the CPU before every request.
// Kernel times come from %globaltimer stamps (block 0 of each kernel), so the kernel sum is measured, not assumed.
//
// Ways of submitting (each timed from just before its first call to the host knowing the output is in):
//   eager      copy in, 19 launches, copy out, cudaStreamSynchronize
//   graph      copy in, cudaGraphLaunch (the kernels), copy out, cudaStreamSynchronize   (batchscope today)
//   graph-spin the same, cudaStreamQuery in a loop instead of the synchronisation
//   one-graph  one graph holding copy in, kernels and copy out; cudaGraphLaunch, cudaStreamSynchronize
//   one-spin   the same, cudaStreamQuery loop
//   bus-*      the copies made by kernels that read or write the pinned host buffer through its unified address
//              (zero-copy) instead of by the copy engines: bus-in, bus-out, bus-both, bus-graph (one graph),
//              bus-armed; and the parts alone: nop (one empty kernel), copy-in, copy-out, kernels, in+kernels,
//              kernels+out, armed-bare (no copies)
//   armed      the one graph behind a 1-thread kernel that waits for a flag in mapped host memory, launched before
//              the clock starts (as a server would between requests); the clock runs from the host's flag store
//              to the host seeing a done flag that a last 1-thread kernel writes into mapped host memory
// Build: nvcc -O2 -std=c++17 -arch=sm_90 b1_submit.cu -o b1_submit; run: ./b1_submit [reps] [input bytes]
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "check.cuh"

__device__ __forceinline__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Every block spins for `ns`; block 0 stamps its start and end. The first kernel also reads the input (as the
// widening kernel does) and the last writes the output, so the copies are real dependencies.
__global__ void spin(long long ns, unsigned long long* stamp, const unsigned char* in, size_t in_bytes, float* out) {
  const unsigned long long t0 = now_ns();
  if (in && blockIdx.x == 0 && threadIdx.x == 0) {
    unsigned s = 0;
    for (size_t i = 0; i < in_bytes; i += 4096) s += in[i];
    if (s == 0xffffffffu) stamp[0] = 0;  // keeps the reads
  }
  while (static_cast<long long>(now_ns() - t0) < ns) {
  }
  if (out && blockIdx.x == 0 && threadIdx.x < 1000) out[threadIdx.x] = static_cast<float>(threadIdx.x);
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    stamp[0] = t0;
    stamp[1] = now_ns();
  }
}

// A copy made by a kernel instead of a copy engine: the GPU reads (or writes) the pinned host buffer over the bus
// through its unified address. 16-byte accesses, every thread of the grid in flight at once; block 0 stamps it.
__global__ void bus_copy(unsigned char* dst, const unsigned char* src, size_t bytes, unsigned long long* stamp) {
  const unsigned long long t0 = now_ns();
  const size_t vecs = bytes / 16, stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < vecs; i += stride)
    reinterpret_cast<uint4*>(dst)[i] = reinterpret_cast<const uint4*>(src)[i];
  for (size_t i = vecs * 16 + blockIdx.x * blockDim.x + threadIdx.x; i < bytes; i += stride) dst[i] = src[i];
  if (blockIdx.x == 0) {
    __syncthreads();
    if (threadIdx.x == 0) {
      stamp[0] = t0;
      stamp[1] = now_ns();
    }
  }
}

__global__ void wait_flag(volatile unsigned* flag) {
  while (*flag == 0) {
  }
  *flag = 0;
  __threadfence_system();
}

__global__ void set_flag(volatile unsigned* flag) {
  __threadfence_system();
  *flag = 1;
  __threadfence_system();
}

// The AlexNet batch-1 kernels' times (us), in order (experiments/results/h100-e2e-s11/smallcudagraph-inu8.trace.json).
static const double kUs[] = {1.91, 17.64, 3.58, 10.01, 1.19, 1.67, 14.07, 3.10, 4.05, 18.36,
                             3.10, 14.31, 2.86, 14.31, 2.62, 2.86, 52.45, 24.56, 7.63};
static const int kKernels = sizeof(kUs) / sizeof(kUs[0]);

struct Pass {
  unsigned char *h_in, *d_in;
  float *h_out, *d_out;
  unsigned long long* d_stamp;
  size_t in_bytes;
  void kernels(cudaStream_t s) const {
    for (int k = 0; k < kKernels; ++k)
      spin<<<132, 128, 0, s>>>(static_cast<long long>(kUs[k] * 1000), d_stamp + 2 * k, k == 0 ? d_in : nullptr,
                               in_bytes, k == kKernels - 1 ? d_out : nullptr);
  }
  void copy_in(cudaStream_t s) const { CK(cudaMemcpyAsync(d_in, h_in, in_bytes, cudaMemcpyHostToDevice, s)); }
  void copy_out(cudaStream_t s) const { CK(cudaMemcpyAsync(h_out, d_out, 4000, cudaMemcpyDeviceToHost, s)); }
  void bus_in(cudaStream_t s) const { bus_copy<<<132, 256, 0, s>>>(d_in, h_in, in_bytes, d_stamp + 2 * kKernels); }
  void bus_out(cudaStream_t s) const {
    bus_copy<<<1, 256, 0, s>>>(reinterpret_cast<unsigned char*>(h_out), reinterpret_cast<const unsigned char*>(d_out),
                               4000, d_stamp + 2 * kKernels + 2);
  }
};

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 300;
  Pass p{};
  p.in_bytes = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 154587;
  CK(cudaMallocHost(&p.h_in, p.in_bytes));
  CK(cudaMallocHost(&p.h_out, 4000));
  CK(cudaMalloc(&p.d_in, p.in_bytes));
  CK(cudaMalloc(&p.d_out, 4000));
  CK(cudaMalloc(&p.d_stamp, (2 * kKernels + 4) * sizeof(unsigned long long)));
  unsigned *h_go, *h_done, *d_go, *d_done;
  CK(cudaHostAlloc(&h_go, 64, cudaHostAllocMapped));
  CK(cudaHostAlloc(&h_done, 64, cudaHostAllocMapped));
  CK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&d_go), h_go, 0));
  CK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&d_done), h_done, 0));
  *h_go = 0;
  *h_done = 0;
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  auto graph_of = [&](auto body) {
    cudaGraph_t g;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    body();
    CK(cudaStreamEndCapture(s, &g));
    cudaGraphExec_t e;
    CK(cudaGraphInstantiate(&e, g, 0));
    CK(cudaGraphDestroy(g));
    CK(cudaGraphUpload(e, s));
    CK(cudaStreamSynchronize(s));
    return e;
  };
  cudaGraphExec_t g_kernels = graph_of([&] { p.kernels(s); });
  cudaGraphExec_t g_nop = graph_of([&] { spin<<<132, 128, 0, s>>>(0, p.d_stamp, nullptr, 0, nullptr); });
  // Armed: the pass behind a kernel that waits for the host's go flag, and a kernel that raises the done flag after it.
  auto armed_graph_of = [&](auto body) {
    return graph_of([&] {
      wait_flag<<<1, 1, 0, s>>>(d_go);
      body();
      set_flag<<<1, 1, 0, s>>>(d_done);
    });
  };
  auto whole = [&] { p.copy_in(s); p.kernels(s); p.copy_out(s); };
  auto bus = [&] { p.bus_in(s); p.kernels(s); p.bus_out(s); };
  cudaGraphExec_t g_armed_bare = armed_graph_of([&] { p.kernels(s); });
  cudaGraphExec_t g_whole = graph_of(whole);
  cudaGraphExec_t g_armed = armed_graph_of(whole);
  cudaGraphExec_t g_bus = graph_of(bus);
  cudaGraphExec_t g_bus_armed = armed_graph_of(bus);
  auto sync = [&] { CK(cudaStreamSynchronize(s)); };
  auto spin_wait = [&] {
    cudaError_t e;
    while ((e = cudaStreamQuery(s)) == cudaErrorNotReady) {
    }
    CK(e);
  };
  struct Way {
    const char* name;
    std::function<void()> arm, go;
  };
  auto arm = [&](cudaGraphExec_t g) {
    return [&, g] {
      CK(cudaGraphLaunch(g, s));
      std::this_thread::sleep_for(std::chrono::microseconds(300));  // the server's idle time between requests
    };
  };
  auto go_armed = [&] {
    std::atomic_thread_fence(std::memory_order_release);
    *reinterpret_cast<volatile unsigned*>(h_go) = 1;
    while (*reinterpret_cast<volatile unsigned*>(h_done) == 0) {
    }
    std::atomic_thread_fence(std::memory_order_acquire);
  };
  const std::vector<Way> ways = {
      // The parts, each alone: a round trip of one empty kernel, the copies alone, the kernels with one copy.
      {"nop", {}, [&] { CK(cudaGraphLaunch(g_nop, s)); sync(); }},
      {"copy-in", {}, [&] { p.copy_in(s); sync(); }},
      {"copy-out", {}, [&] { p.copy_out(s); sync(); }},
      {"kernels", {}, [&] { CK(cudaGraphLaunch(g_kernels, s)); sync(); }},
      {"in+kernels", {}, [&] { p.copy_in(s); CK(cudaGraphLaunch(g_kernels, s)); sync(); }},
      {"kernels+out", {}, [&] { CK(cudaGraphLaunch(g_kernels, s)); p.copy_out(s); sync(); }},
      {"armed-bare", arm(g_armed_bare), go_armed},
      {"eager", {}, [&] { p.copy_in(s); p.kernels(s); p.copy_out(s); sync(); }},
      {"graph", {}, [&] { p.copy_in(s); CK(cudaGraphLaunch(g_kernels, s)); p.copy_out(s); sync(); }},
      {"graph-spin", {}, [&] { p.copy_in(s); CK(cudaGraphLaunch(g_kernels, s)); p.copy_out(s); spin_wait(); }},
      {"one-graph", {}, [&] { CK(cudaGraphLaunch(g_whole, s)); sync(); }},
      {"one-spin", {}, [&] { CK(cudaGraphLaunch(g_whole, s)); spin_wait(); }},
      {"armed", arm(g_armed), go_armed},
      // The copies made by kernels over the bus (zero-copy): in, out, both, both in one graph, both armed.
      {"bus-in", {}, [&] { p.bus_in(s); CK(cudaGraphLaunch(g_kernels, s)); p.copy_out(s); sync(); }},
      {"bus-out", {}, [&] { p.copy_in(s); CK(cudaGraphLaunch(g_kernels, s)); p.bus_out(s); sync(); }},
      {"bus-both", {}, [&] { p.bus_in(s); CK(cudaGraphLaunch(g_kernels, s)); p.bus_out(s); sync(); }},
      {"bus-graph", {}, [&] { CK(cudaGraphLaunch(g_bus, s)); sync(); }},
      {"bus-armed", arm(g_bus_armed), go_armed},
  };
  std::printf("input %zu bytes, output 4000 bytes, %d kernels asked to spin %.2f us in all, %d repetitions\n",
              p.in_bytes, kKernels, [] { double t = 0; for (double u : kUs) t += u; return t; }(), reps);
  std::printf("%-11s %9s %9s %9s %9s %7s %9s %9s %9s\n", "way", "e2e_p50", "e2e_p10", "e2e_p90", "kern_p50", "ratio",
              "gap_p50", "span_p50", "e2e-span");
  std::vector<unsigned long long> st(2 * kKernels + 4);
  for (const Way& w : ways) {
    std::vector<double> e2e, kern, span, gap, bus_in_us, bus_out_us;
    CK(cudaMemset(p.d_stamp, 0, st.size() * sizeof(st[0])));
    for (int r = -20; r < reps; ++r) {
      for (size_t i = 0; i < p.in_bytes; i += 64) p.h_in[i] = static_cast<unsigned char>(r + i);  // the next request
      if (w.arm) w.arm();
      const auto t0 = std::chrono::steady_clock::now();
      w.go();
      const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      sync();
      if (w.arm) *h_done = 0;
      if (r < 0) continue;
      CK(cudaMemcpy(st.data(), p.d_stamp, st.size() * sizeof(st[0]), cudaMemcpyDeviceToHost));
      double k = 0;
      for (int i = 0; i < kKernels; ++i) k += (st[2 * i + 1] - st[2 * i]) / 1000.0;
      e2e.push_back(us);
      kern.push_back(k);
      span.push_back((st[2 * kKernels - 1] - st[0]) / 1000.0);
      gap.push_back(us - k);
      bus_in_us.push_back((st[2 * kKernels + 1] - st[2 * kKernels]) / 1000.0);
      bus_out_us.push_back((st[2 * kKernels + 3] - st[2 * kKernels + 2]) / 1000.0);
    }
    auto pct = [](std::vector<double> v, double q) {
      std::sort(v.begin(), v.end());
      return v[static_cast<size_t>(q * (v.size() - 1))];
    };
    const bool ran = !span.empty() && w.name[0] != 'n' && w.name[0] != 'c';  // the chain of 19 ran
    std::printf("%-11s %9.2f %9.2f %9.2f %9.2f %7.3f %9.2f %9.2f %9.2f\n", w.name, pct(e2e, .5), pct(e2e, .1), pct(e2e, .9),
                ran ? pct(kern, .5) : 0, ran ? pct(e2e, .5) / pct(kern, .5) : 0, ran ? pct(gap, .5) : 0,
                ran ? pct(span, .5) : 0, ran ? pct(e2e, .5) - pct(span, .5) : 0);
    if (w.name[0] == 'b') std::printf("%-11s bus copy kernels (block 0): in %.2f us, out %.2f us\n", "", pct(bus_in_us, .5), pct(bus_out_us, .5));
  }
  return 0;
}
