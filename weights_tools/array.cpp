#include "weights_tools/array.hpp"

#include <bit>
#include <cstring>
#include <stdexcept>

#include "weights_tools/error.hpp"
#include "weights_tools/limits.hpp"

namespace bs {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "float32";
    case DType::f64: return "float64";
    case DType::f16: return "float16";
    case DType::i32: return "int32";
    case DType::i64: return "int64";
    case DType::u8: return "uint8";
  }
  return "?";
}

size_t dtype_size(DType t) {
  switch (t) {
    case DType::f32: case DType::i32: return 4;
    case DType::f64: case DType::i64: return 8;
    case DType::f16: return 2;
    case DType::u8: return 1;
  }
  return 0;
}

int64_t shape_size(const std::vector<int64_t>& shape) {
  const uint64_t n = checked_elements(shape, "shape " + shape_str(shape));
  if (n > static_cast<uint64_t>(INT64_MAX)) fail("shape " + shape_str(shape), "element count overflows 63 bits");
  return static_cast<int64_t>(n);
}

int64_t Array::size() const { return shape_size(shape); }

std::string shape_str(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

std::vector<uint8_t> fortran_to_c_order(const std::vector<uint8_t>& src, const std::vector<int64_t>& shape, size_t es) {
  const size_t nd = shape.size();
  if (nd < 2 || src.empty()) return src;  // nothing to reorder
  std::vector<uint8_t> dst(src.size());
  std::vector<int64_t> idx(nd, 0), fstride(nd, 1);
  for (size_t k = 1; k < nd; ++k) fstride[k] = fstride[k - 1] * shape[k - 1];
  const int64_t n = shape_size(shape);
  for (int64_t c = 0; c < n; ++c) {
    int64_t f = 0;
    for (size_t k = 0; k < nd; ++k) f += idx[k] * fstride[k];
    std::memcpy(dst.data() + c * es, src.data() + f * es, es);
    for (size_t k = nd; k-- > 0;) {  // advance the C-order multi-index
      if (++idx[k] < shape[k]) break;
      idx[k] = 0;
    }
  }
  return dst;
}

float half_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: renormalise
      int e = -1;
      do { ++e; mant <<= 1; } while ((mant & 0x400u) == 0);
      bits = sign | static_cast<uint32_t>(127 - 15 - e) << 23 | (mant & 0x3ffu) << 13;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | mant << 13;
  } else {
    bits = sign | (exp + 127 - 15) << 23 | mant << 13;
  }
  return std::bit_cast<float>(bits);
}

uint16_t float_to_half(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) return sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0);  // inf / nan
  if (absx >= 0x477ff000u) return sign | 0x7c00u;                                     // overflow
  if (absx < 0x38800000u) {  // subnormal or zero in half
    if (absx < 0x33000000u) return sign;
    uint32_t mant = (absx & 0x7fffffu) | 0x800000u;
    int shift = 126 - static_cast<int>(absx >> 23);  // 14..24
    uint32_t half_mant = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half_mant & 1u))) ++half_mant;
    return sign | static_cast<uint16_t>(half_mant);
  }
  uint32_t exp = (absx >> 23) - 127 + 15;
  uint32_t mant = absx & 0x7fffffu;
  uint32_t h = exp << 10 | mant >> 13;
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // may carry into the exponent: still right
  return sign | static_cast<uint16_t>(h);
}

std::vector<float> Array::to_float() const {
  const int64_t n = size();
  if (bytes.size() != static_cast<uint64_t>(n) * dtype_size(dtype))  // a reader's bug, never a file's
    throw std::logic_error("array " + shape_str(shape) + " holds " + std::to_string(bytes.size()) + " bytes, its shape needs " +
                           std::to_string(static_cast<uint64_t>(n) * dtype_size(dtype)));
  std::vector<float> out(static_cast<size_t>(n));
  const uint8_t* p = bytes.data();
  for (int64_t i = 0; i < n; ++i) {
    switch (dtype) {
      case DType::f32: { float v; std::memcpy(&v, p + 4 * i, 4); out[i] = v; break; }
      case DType::f64: { double v; std::memcpy(&v, p + 8 * i, 8); out[i] = static_cast<float>(v); break; }
      case DType::f16: { uint16_t v; std::memcpy(&v, p + 2 * i, 2); out[i] = half_to_float(v); break; }
      case DType::i32: { int32_t v; std::memcpy(&v, p + 4 * i, 4); out[i] = static_cast<float>(v); break; }
      case DType::i64: { int64_t v; std::memcpy(&v, p + 8 * i, 8); out[i] = static_cast<float>(v); break; }
      case DType::u8: out[i] = static_cast<float>(p[i]); break;
    }
  }
  return out;
}

Array Array::from_float(std::vector<int64_t> shape, const std::vector<float>& values) {
  Array a;
  a.dtype = DType::f32;
  a.shape = std::move(shape);
  if (static_cast<int64_t>(values.size()) != a.size())
    fail("Array::from_float", "shape " + shape_str(a.shape) + " holds " + std::to_string(a.size()) +
                                  " values, got " + std::to_string(values.size()));
  a.bytes.resize(values.size() * 4);
  if (!values.empty()) std::memcpy(a.bytes.data(), values.data(), a.bytes.size());
  return a;
}

}  // namespace bs
