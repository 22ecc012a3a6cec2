// FastDiv (kernels/cuda/engine/fast_div.hpp), the wgmma convolutions' division of a pixel index by the pixels of an image
// and by the output's width: its host form (the same arithmetic as the device's __umulhi) against the division, over
// every divisor up to 2^16, a spread of larger ones up to 2^31 (its range), and for each the edges of its range: 0, around each of the first
// multiples, around the last multiples below 2^31, and 2^31 - 1.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "kernels/cuda/engine/fast_div.hpp"

using bs::cuda::FastDiv;

namespace {

std::vector<uint32_t> edges(uint32_t d) {
  constexpr uint32_t top = 0x7fffffffu;  // the largest n the divider takes
  std::vector<uint32_t> n = {0u, 1u, top, top - 1u};
  for (uint32_t k = 1; k <= 3; ++k) {
    const uint64_t a = uint64_t{k} * d, b = (uint64_t{top} / d + 1 - k) * d;  // the first multiples, the last ones
    for (uint64_t v : {a - 1, a, a + 1, b - 1, b, b + 1})
      if (v <= top) n.push_back(static_cast<uint32_t>(v));
  }
  return n;
}

TEST(FastDiv, MatchesTheDivisionOverEveryDivisorUpTo65536) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> any(0u, 0x7fffffffu);
  long long checked = 0;
  for (uint32_t d = 1; d <= 65536u; ++d) {
    const FastDiv f(d);
    std::vector<uint32_t> n = edges(d);
    for (int i = 0; i < 4; ++i) n.push_back(any(rng));
    for (uint32_t v : n) {
      ASSERT_EQ(f.div(v), v / d) << v << " / " << d;
      ++checked;
    }
  }
  EXPECT_GT(checked, 65536LL * 10);
}

TEST(FastDiv, MatchesTheDivisionForLargeDivisorsAndTheLayersGeometry) {
  // AlexNet's and VGG-16's pixels an image and widths (3025 = 55 x 55, 729, 169, 50176 = 224 x 224), powers of two and
  // their neighbours, and divisors up to 2^31
  std::vector<uint32_t> ds = {3025u, 55u, 729u, 27u, 169u, 13u, 50176u, 224u, 3249u, 57u};
  for (int b = 17; b <= 31; ++b) {
    const uint32_t p = 1u << b;
    ds.insert(ds.end(), {p - 1, p});
    if (b < 31) ds.push_back(p + 1);  // the divider takes d up to 2^31
  }
  std::mt19937 rng(11);
  std::uniform_int_distribution<uint32_t> big(65537u, 0x80000000u);
  for (int i = 0; i < 2000; ++i) ds.push_back(big(rng));
  std::uniform_int_distribution<uint32_t> any(0u, 0x7fffffffu);
  for (uint32_t d : ds) {
    const FastDiv f(d);
    std::vector<uint32_t> n = edges(d);
    for (int i = 0; i < 64; ++i) n.push_back(any(rng));
    for (uint32_t v : n) ASSERT_EQ(f.div(v), v / d) << v << " / " << d;
  }
}

TEST(FastDiv, DefaultIsDivisionByOne) {
  const FastDiv f;
  for (uint32_t v : {0u, 1u, 12345u, 0x7fffffffu}) EXPECT_EQ(f.div(v), v);
}

}  // namespace
