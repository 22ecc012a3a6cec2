// IDX files (the MNIST format), gzipped or not: a big-endian header (two zero bytes, a type code, the
// number of dimensions, then each dimension as uint32) followed by the values.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace bs {

struct IdxFile {
  uint8_t type = 0x08;          // 0x08 ubyte (the only type MNIST uses); others are converted to float
  std::vector<int64_t> dims;    // e.g. (10000, 28, 28) for images, (10000,) for labels
  std::vector<float> values;    // all values as float, C order
};

// Reads `path` (gzip is detected by its magic). `max_items` > 0 stops after that many items of the first
// dimension; the file must still hold them all or it is reported as truncated.
IdxFile read_idx(const std::string& path, int64_t max_items = 0);
// The same from bytes in memory; `path` names them in errors.
IdxFile parse_idx(const uint8_t* data, size_t size, const std::string& path, int64_t max_items = 0);

}  // namespace bs
