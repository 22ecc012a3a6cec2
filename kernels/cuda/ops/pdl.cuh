// Programmatic dependent launch (compute capability 9.0; no-ops below it, where launches stay ordinary): a kernel
// launched with cudaLaunchAttributeProgrammaticStreamSerialization may start while the kernel before it in the stream
// is still running, once that one has let it (dependents_may_launch, or its end). Before dependency_wait() it must read
// nothing the kernel before writes; after it, every write of that kernel is visible. prefetch_l2 is safe before the
// wait: L2, where every write lands, is the GPU's point of coherence.
#pragma once
#include <cuda_runtime.h>

namespace bs::cuda {

__device__ __forceinline__ void dependency_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ void dependents_may_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

__device__ __forceinline__ void prefetch_l2(const void* p) { asm volatile("prefetch.global.L2 [%0];" ::"l"(p)); }

}  // namespace bs::cuda
