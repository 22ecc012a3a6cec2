#include "app/input_precision.hpp"

#include <cmath>
#include <cstring>

#include "kernels/menus.hpp"
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

void convert_input(const float* src, size_t count, const std::string& precision, uint16_t* dst) {
  if (precision == "bf16") {
    for (size_t i = 0; i < count; ++i) dst[i] = bf16_bits(src[i]);
    return;
  }
  if (precision != "fp16") fail("--input-precision", "expected fp16 or bf16 for a 16-bit input, found '" + precision + "'");
  for (size_t i = 0; i < count; ++i) {
    if (std::fabs(src[i]) > 65504.0f)
      fail("--input-precision", "fp16: input value " + std::to_string(src[i]) + " (value " + std::to_string(i) +
                                    " of the batch) exceeds 65504, FP16's largest; use --input-precision fp32 or --precision bf16");
    dst[i] = fp16_bits(src[i]);
  }
}

std::vector<uint16_t> convert_input(const float* src, size_t count, const std::string& precision) {
  std::vector<uint16_t> out(count);
  convert_input(src, count, precision, out.data());
  return out;
}

std::vector<uint16_t> to_input_precision(const float* src, size_t count, const std::string& input_precision) {
  if (!is_half_precision(input_precision)) return {};
  return convert_input(src, count, input_precision);
}

std::string transfers_label(const std::string& transfers, bool cuda_graph, const std::string& input_precision) {
  return transfers + (cuda_graph ? "+graph" : "") + (is_half_precision(input_precision) ? "+in-" + input_precision : "");
}

}  // namespace bs
