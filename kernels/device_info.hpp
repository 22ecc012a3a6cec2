// Facts about the machine for results' metadata, and GPU start-up outside any timed region.
#pragma once
#include <memory>
#include <nlohmann/json.hpp>

namespace bs {

// {"name", "sm_count", "compute_capability", "memory_bytes", "l2_bytes", "sm_clock_mhz", "memory_clock_mhz",
//  "driver", "runtime", "cudnn", "cublas", "cupti"}; {"gpu": null} in builds or on machines without one.
nlohmann::json gpu_info();
// Creates the CUDA context now, so that no timed run pays for it (no-op without CUDA).
void init_gpu();
bool gpu_available();

// Host memory for inputs and outputs: pageable (new[]) or pinned (cudaMallocHost, page-locked, so copies
// run at full speed and can overlap). Pinned needs a CUDA build.
std::shared_ptr<float> host_buffer(size_t floats, bool pinned);

}  // namespace bs
