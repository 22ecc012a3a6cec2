// Which layer's weights a __constant__ bank holds on each device, so that a kernel reading its weights
// from the bank copies them in only when they are not already there. (ECE 408 conv1's 600 bytes were
// copied on every forward pass: a DtoD copy and an API call each time, ~2 us of a 60 us pass at batch 1,
// and two more operations for the profiler to trace.)
//
// Weights are named by an id the GPU pipeline gives each layer's device weights when it uploads them
// (resident transfers); 0 means "not known to stay put" (per-layer transfers allocate them anew for every
// layer run), and such weights are copied every time.
#pragma once
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>

namespace bs::cuda {

// Process-unique, never 0.
inline uint64_t next_weights_id() {
  static std::atomic<uint64_t> next{0};
  return ++next;
}

class BankContents {
 public:
  bool holds(int device, uint64_t weights_id) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = held_.find(device);
    return weights_id != 0 && it != held_.end() && it->second == weights_id;
  }
  // After the copy of `weights_id` into the bank was enqueued (0: the bank now holds unnamed weights).
  void set(int device, uint64_t weights_id) {
    std::lock_guard<std::mutex> lock(mu_);
    held_[device] = weights_id;
  }

 private:
  std::mutex mu_;
  std::map<int, uint64_t> held_;
};

}  // namespace bs::cuda
