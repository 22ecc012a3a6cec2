#include "kernels/exec/device_info.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <cupti.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>

#include "kernels/cuda/check.hpp"
#include "kernels/plan/plan.hpp"
#include "weights_tools/error.hpp"

namespace bs {

bool gpu_available() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

std::string gpu_absence() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e == cudaSuccess && count > 0) return "";
  if (e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice || (e == cudaSuccess && count == 0))
    return "this machine has no NVIDIA GPU with a usable driver (none installed, or one older than this build's CUDA runtime)";
  return std::string("no CUDA GPU can be used here (") + cudaGetErrorString(e) + ")";
}

int gpu_count() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

namespace {
std::atomic<int> g_selected{0};
}

void select_gpu(int index) {
  const int count = gpu_count();
  if (index < 0 || index >= count)
    fail("GPU", "GPU " + std::to_string(index) + " requested, but this machine has " + std::to_string(count));
  CUDA_CHECK(cudaSetDevice(index));
  g_selected = index;
}

int selected_gpu() { return g_selected; }

void use_selected_gpu() {
  if (gpu_count() > 0) CUDA_CHECK(cudaSetDevice(g_selected));
}

std::shared_ptr<float> host_buffer(size_t floats, bool pinned) {
  if (!pinned) return std::shared_ptr<float>(new float[floats], std::default_delete<float[]>());
  float* p = nullptr;
  CUDA_CHECK(cudaMallocHost(&p, std::max<size_t>(floats, 1) * sizeof(float)));
  return std::shared_ptr<float>(p, [](float* q) { cudaFreeHost(q); });
}

void init_gpu() {
  if (!gpu_available()) return;
  // BATCHSCOPE_SCHEDULE=spin|yield|blocking: how the host thread waits for the device (cudaSetDeviceFlags), a knob
  // for the profiler-overhead experiments (experiments/profiler-overhead.md); unset, CUDA chooses (spin here).
  if (const char* s = std::getenv("BATCHSCOPE_SCHEDULE"); s && *s) {
    const std::string v = s;
    const unsigned flag = v == "spin" ? cudaDeviceScheduleSpin : v == "yield" ? cudaDeviceScheduleYield
                        : v == "blocking" ? cudaDeviceScheduleBlockingSync : ~0u;
    if (flag == ~0u) fail("BATCHSCOPE_SCHEDULE", "expected spin, yield or blocking, found '" + v + "'");
    CUDA_CHECK(cudaSetDeviceFlags(flag));
  }
  CUDA_CHECK(cudaFree(nullptr));
}

nlohmann::json gpu_info() {
  if (!gpu_available()) return nlohmann::json{{"gpu", nullptr}};
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp p{};
  CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
  auto attr = [&](cudaDeviceAttr a) {
    int v = 0;
    return cudaDeviceGetAttribute(&v, a, dev) == cudaSuccess ? v : -1;
  };
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  int cublas = 0;
  cublasHandle_t h;
  if (cublasCreate(&h) == CUBLAS_STATUS_SUCCESS) {
    cublasGetVersion(h, &cublas);
    cublasDestroy(h);
  }
  uint32_t cupti = 0;
  cuptiGetVersion(&cupti);
  char pci[32] = "";
  if (cudaDeviceGetPCIBusId(pci, sizeof pci, dev) != cudaSuccess) pci[0] = 0;
  return {{"name", p.name},
          {"index", dev},
          {"pci_bus_id", pci},
          {"sm_count", p.multiProcessorCount},
          {"compute_capability", std::to_string(p.major) + "." + std::to_string(p.minor)},
          {"memory_bytes", p.totalGlobalMem},
          {"l2_bytes", p.l2CacheSize},
          {"sm_clock_mhz", attr(cudaDevAttrClockRate) / 1000},
          {"memory_clock_mhz", attr(cudaDevAttrMemoryClockRate) / 1000},
          {"memory_bus_bits", attr(cudaDevAttrGlobalMemoryBusWidth)},
          {"driver", driver},
          {"runtime", runtime},
          {"cudnn", cudnnGetVersion()},
          {"cublas", cublas},
          {"cupti", cupti}};
}

DeviceSpec current_device() {
  DeviceSpec d;
  if (!gpu_available()) return d;
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp p{};
  CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
  d.name = p.name;
  d.sm_count = p.multiProcessorCount;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  CUDA_CHECK(cudaMemGetInfo(&d.memory_free, &d.memory_total));
  return d;
}

}  // namespace bs
