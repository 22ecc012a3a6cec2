// An n-dimensional array as read from a weight or data file: its element type, shape and bytes
// (native little-endian byte order, C order), with conversion to and from float32.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace bs {

enum class DType { f32, f64, f16, i32, i64, u8 };

const char* dtype_name(DType t);  // "float32", ...
size_t dtype_size(DType t);

struct Array {
  DType dtype = DType::f32;
  std::vector<int64_t> shape;  // C order: the last index varies fastest
  std::vector<uint8_t> bytes;  // size() * dtype_size(dtype) bytes, native byte order

  int64_t size() const;
  std::vector<float> to_float() const;  // every dtype converts (float64/int64 may round)
  static Array from_float(std::vector<int64_t> shape, const std::vector<float>& values);
};

std::string shape_str(const std::vector<int64_t>& shape);  // "(96, 3, 11, 11)"
int64_t shape_size(const std::vector<int64_t>& shape);

// Reorders elements stored in Fortran order (first index fastest) into C order (last index fastest).
std::vector<uint8_t> fortran_to_c_order(const std::vector<uint8_t>& src, const std::vector<int64_t>& shape, size_t elem_size);

// IEEE binary16 <-> binary32, round to nearest even.
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);

}  // namespace bs
