// Which layer's weights a __constant__ bank holds, so that a kernel reading its weights
// from the bank copies them in only when they are not already there. (ECE 408 conv1's 600 bytes were
// copied on every forward pass: an API call and a DtoD copy, 0.7 us of GPU time in a 60 us pass at batch 1,
// and two more operations for the profiler to trace.)
//
// Weights are named by an id the GPU pipeline gives each layer's device weights when it uploads them
// (resident transfers); 0 means "not known to stay put" (per-layer transfers allocate them anew for every
// layer run), and such weights are copied every time.
#pragma once
#include <atomic>
#include <cstdint>

namespace bs::cuda {

// Process-unique, never 0.
inline uint64_t next_weights_id() {
  static std::atomic<uint64_t> next{0};
  return ++next;
}

// One bank (one __constant__ symbol) on every device: remembers the id of the weights last copied into it,
// on whichever device. Ids are process-unique and a layer's weights live on one device, so when the last copy
// was of these weights, the bank of their device still holds them (any copy since, of other weights to any
// device, has replaced the id), and no device query is needed on the hot path.
class BankContents {
 public:
  bool holds(uint64_t weights_id) const { return weights_id != 0 && held_.load() == weights_id; }
  // After the copy of `weights_id` into the bank was enqueued (0: the bank now holds unnamed weights).
  void set(uint64_t weights_id) { held_.store(weights_id); }

 private:
  std::atomic<uint64_t> held_{0};
};

}  // namespace bs::cuda
