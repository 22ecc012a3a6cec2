#include "app/exec/input_precision.hpp"

#include <cmath>
#include <cstring>

#include "weights_tools/error.hpp"

namespace bs {

uint16_t fp16_bits(float v) {
  uint32_t x;
  std::memcpy(&x, &v, sizeof x);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return sign | 0x7e00u;  // NaN
  if (ax >= 0x477ff000u) return sign | 0x7c00u;  // 65520 and beyond round to inf (65504 is odd: the tie goes up)
  if (ax < 0x38800000u) {                         // below 2^-14: a subnormal, in steps of 2^-24
    float a;
    std::memcpy(&a, &ax, sizeof a);
    return sign | static_cast<uint16_t>(std::nearbyint(a * 16777216.0f));  // exact scaling; nearbyint rounds to even
  }
  const uint32_t rounded = ax + 0xfffu + ((ax >> 13) & 1u);  // to nearest even at bit 13; a carry moves the exponent
  return sign | static_cast<uint16_t>((rounded - 0x38000000u) >> 13);  // exponent bias 127 -> 15
}

uint16_t bf16_bits(float v) {
  uint32_t x;
  std::memcpy(&x, &v, sizeof x);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // NaN stays NaN
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

void convert_input(const float* src, size_t count, InputPrecision input, uint16_t* dst) {
  if (input == InputPrecision::bf16) {
    for (size_t i = 0; i < count; ++i) dst[i] = bf16_bits(src[i]);
    return;
  }
  if (input != InputPrecision::fp16) fail("--input-precision", "expected fp16 or bf16 for a 16-bit input, found '" + name_of(input) + "'");
  for (size_t i = 0; i < count; ++i) {
    if (std::fabs(src[i]) > 65504.0f)
      fail("--input-precision", "fp16: input value " + std::to_string(src[i]) + " (value " + std::to_string(i) +
                                    " of the batch) exceeds 65504, FP16's largest; use --input-precision fp32 or --precision bf16");
    dst[i] = fp16_bits(src[i]);
  }
}

std::vector<uint16_t> convert_input(const float* src, size_t count, InputPrecision input) {
  std::vector<uint16_t> out(count);
  convert_input(src, count, input, out.data());
  return out;
}

size_t input_buffer_floats(size_t values, InputPrecision input) {
  return (values * input_value_bytes(input) + sizeof(float) - 1) / sizeof(float);
}

void convert_input_bytes(const float* src, size_t count, InputPrecision input, void* dst) {
  if (input != InputPrecision::u8) {
    convert_input(src, count, input, static_cast<uint16_t*>(dst));
    return;
  }
  auto* d = static_cast<uint8_t*>(dst);
  for (size_t i = 0; i < count; ++i) {
    const float v = src[i];
    if (!(v >= 0.0f && v <= 255.0f) || v != std::floor(v))  // NaN fails the first test
      fail("--input-precision", "u8: input value " + std::to_string(v) + " (value " + std::to_string(i) +
                                    " of the batch) is not a whole number in 0..255 (u8 carries raw 8-bit pixels); use "
                                    "--input-precision fp32");
    d[i] = static_cast<uint8_t>(v);
  }
}

std::vector<uint8_t> to_input_precision(const float* src, size_t count, InputPrecision input) {
  if (input == InputPrecision::fp32) return {};
  std::vector<uint8_t> out(count * input_value_bytes(input));
  convert_input_bytes(src, count, input, out.data());
  return out;
}

std::string transfers_label(Transfers transfers, bool cuda_graph, InputPrecision input, Copies copies) {
  return name_of(transfers) + (cuda_graph ? "+graph" : "") + (copies == Copies::kernel ? "+kernel-copies" : "") +
         (input != InputPrecision::fp32 ? "+in-" + name_of(input) : "");
}

}  // namespace bs
