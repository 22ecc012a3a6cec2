// Shared by every libFuzzer harness: a reader may refuse its input only with bs::Error (one clear line);
// any other exception, a crash, a leak or undefined behaviour is a finding.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "weights_tools/error.hpp"
#include "weights_tools/limits.hpp"

namespace bs::fuzz {

// Keeps allocations of a fuzz run small: no tensor above 64 MiB (libFuzzer's malloc limit is 2 GiB).
inline void init_limits() { set_max_tensor_bytes(uint64_t{64} << 20); }

template <class F>
int run(F&& f) {
  try {
    f();
  } catch (const Error&) {
  }
  return 0;
}

inline std::vector<uint8_t> bytes(const uint8_t* data, size_t size) { return std::vector<uint8_t>(data, data + size); }

}  // namespace bs::fuzz
