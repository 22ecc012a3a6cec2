// NumPy .npy files: format versions 1.0, 2.0 and 3.0; dtypes float32, float64, float16, int32, int64,
// uint8 in either byte order; C or Fortran order. Reading always yields native-order, C-order bytes.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "weights_tools/array.hpp"

namespace bs {

// The header of a .npy image: its dtype string as written ("<f4", "|O"), order and shape, and where the data
// starts. Object arrays ("|O", e.g. np.save of a dict) are reported, not refused, so that a caller that can
// read their pickle may.
struct NpyHeader {
  std::string descr;
  bool fortran = false;
  std::vector<int64_t> shape;
  size_t data_offset = 0;
};
NpyHeader parse_npy_header(const uint8_t* data, size_t size, const std::string& where);
// Where the header of a .npy image ends (its data starts), read off its first 12 bytes; 0 when they are not
// a .npy prefix. Lets a reader check a declared shape before it reads the rest.
size_t npy_header_end(const uint8_t* data, size_t size);
// The element size of a supported dtype string ("<f4": 4); an Error naming `where` for any other.
size_t npy_descr_size(const std::string& descr, const std::string& where);

// Parses a whole .npy image; `where` names the file (or zip member) in error messages.
Array parse_npy(const uint8_t* data, size_t size, const std::string& where);
Array read_npy(const std::string& path);

// Encodes as little-endian C-order .npy. version 0 picks 1.0, or 2.0 when the header needs it.
std::vector<uint8_t> encode_npy(const Array& a, int version = 0);
void write_npy(const std::string& path, const Array& a);  // atomic

// Reads a .npy holding any supported dtype and returns float32 values, checking the shape when
// `expected` is non-empty: "<path>: shape (a, b) expected, file has (c, d)".
std::vector<float> read_npy_float(const std::string& path, const std::vector<int64_t>& expected = {});

}  // namespace bs
