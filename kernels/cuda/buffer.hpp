// Device memory owned by one object (no globals holding device state).
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "kernels/cuda/check.hpp"

namespace bs {

// Counts device allocations made through DeviceBuffer: a captured CUDA graph holds device pointers, and is stale once
// any buffer it might read moved (gpu_pipeline.cpp drops its graphs when this changed since their capture).
inline std::atomic<uint64_t>& device_alloc_epoch() {
  static std::atomic<uint64_t> epoch{0};
  return epoch;
}

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t n) { resize(n); }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) { release(); p_ = std::exchange(o.p_, nullptr); n_ = std::exchange(o.n_, 0); }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // Reallocates (contents lost) only when growing.
  void resize(size_t n) {
    if (n <= n_) return;
    release();
    if (n) CUDA_CHECK(cudaMalloc(&p_, n * sizeof(T)));
    n_ = n;
    ++device_alloc_epoch();
  }
  void upload(const T* host, size_t n, cudaStream_t s = nullptr) {
    resize(n);
    CUDA_CHECK(cudaMemcpyAsync(p_, host, n * sizeof(T), cudaMemcpyHostToDevice, s));
  }
  T* get() const { return p_; }
  size_t size() const { return n_; }

 private:
  void release() {
    if (p_) cudaFree(p_);  // never throws from a destructor
    p_ = nullptr;
    n_ = 0;
  }
  T* p_ = nullptr;
  size_t n_ = 0;
};

}  // namespace bs
