// NumPy .npz archives (a zip of .npy members), stored or deflated, through libzip.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "weights_tools/array.hpp"

namespace bs {

struct NamedArray {
  std::string name;  // member name without the ".npy" suffix
  Array array;
};

std::vector<NamedArray> read_npz(const std::string& path);
// The same from bytes in memory; `path` names them in errors.
std::vector<NamedArray> parse_npz(const uint8_t* data, size_t size, const std::string& path);
// Writes atomically; `compress` selects deflate (np.savez_compressed) over store (np.savez).
void write_npz(const std::string& path, const std::vector<NamedArray>& arrays, bool compress);

}  // namespace bs
