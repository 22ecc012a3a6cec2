// Facts about the machine for results' metadata, and GPU start-up outside any timed region.
#pragma once
#include <memory>
#include <string>
#include <nlohmann/json.hpp>

namespace bs {

// {"name", "sm_count", "compute_capability", "memory_bytes", "l2_bytes", "sm_clock_mhz", "memory_clock_mhz",
//  "driver", "runtime", "cudnn", "cublas", "cupti"}; {"gpu": null} in builds or on machines without one.
nlohmann::json gpu_info();
// Creates the CUDA context now, so that no timed run pays for it (no-op without CUDA).
void init_gpu();
bool gpu_available();
// Why no GPU can be used here, in words ("this machine has no usable NVIDIA driver (...)"), or "" when one can.
std::string gpu_absence();
int gpu_count();  // 0 without CUDA or a GPU
// Makes GPU `index` the calling thread's device and the one every later use_selected_gpu() takes (a
// rank of an MPI job picks its node-local GPU this way). Fails, naming both numbers, past the last GPU.
void select_gpu(int index);
int selected_gpu();
// Worker threads start on GPU 0 (the CUDA device is per thread): they call this first. No-op without CUDA.
void use_selected_gpu();

// Host memory for inputs and outputs: pageable (new[]) or pinned (cudaMallocHost, page-locked, so copies
// run at full speed and can overlap). Pinned needs a CUDA build.
std::shared_ptr<float> host_buffer(size_t floats, bool pinned);

}  // namespace bs
