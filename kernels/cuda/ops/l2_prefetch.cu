// --prefetch-weights (plan.hpp, PlanStep::prefetch): weights a later layer streams, asked into the L2 cache early.
// One thread per 64 KiB piece issues cp.async.bulk.prefetch.L2 (the TMA unit's prefetch: no destination, no
// completion to wait for) and the kernel ends; the memory system goes on reading while the next kernels compute.
#include <algorithm>
#include <cstdint>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/ops/ops.hpp"
#include "weights_tools/error.hpp"

namespace bs::cuda {
namespace {

__host__ __device__ constexpr size_t piece_bytes() { return 64 << 10; }

__global__ void l2_prefetch_kernel(const char* __restrict__ p, size_t bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const size_t pieces = (bytes + piece_bytes() - 1) / piece_bytes();
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < pieces; i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const size_t off = i * piece_bytes();
    const uint32_t n = static_cast<uint32_t>(std::min(piece_bytes(), bytes - off));  // a multiple of 16: bytes is
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;\n" ::"l"(p + off), "r"(n) : "memory");
  }
#else
  (void)p, (void)bytes;  // the planner asks for it on compute capability 9.0 only
#endif
}

}  // namespace

void l2_prefetch(const void* p, size_t bytes, cudaStream_t s) {
  if (bytes == 0) return;
  if (reinterpret_cast<uintptr_t>(p) % 16 != 0 || bytes % 16 != 0)
    fail("--prefetch-weights", "the bulk prefetch needs a 16-byte aligned start and a multiple of 16 bytes (internal)");
  const size_t pieces = (bytes + piece_bytes() - 1) / piece_bytes();
  const unsigned blocks = static_cast<unsigned>(std::min<size_t>((pieces + 31) / 32, 1024));
  l2_prefetch_kernel<<<blocks, 32, 0, s>>>(static_cast<const char*>(p), bytes);
  CUDA_CHECK_LAUNCH();
}

}  // namespace bs::cuda
