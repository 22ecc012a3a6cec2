// The FP16-tensor-core versions' scales (conv_wgmma_3xf16.cu): every operand is multiplied by a power of two into
// FP16's range before it is split (3xFP16, v51-v53) or rounded (the scaled FP16 product, v54-v56), and the epilogue
// divides it out. The op-case table and GpuEngine hold them to their precision on ordinary values; here, values far
// outside FP16's range. Without a GPU each test skips.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "gpu_util.hpp"
#include "test_util.hpp"
#include "kernels/cuda/ops/conv.hpp"
#include "kernels/plan/registry.hpp"

using namespace bs;
using bs::test::gpu_missing;

namespace {

// One 3x3 convolution of 70 filters over (24, 11, 13), bias, weights uniform in +-sqrt(3 / fan_in).
Model scales_model(std::mt19937& rng) {
  Model m;
  m.name = "scales";
  m.input = {24, 11, 13};
  ConvParams c = test::conv_params(70, 3, 1, 1, 1, true);
  const size_t fan = static_cast<size_t>(24) * 3 * 3;
  c.weight = test::random_vector(static_cast<size_t>(c.filters) * fan, rng);
  for (float& w : c.weight) w *= static_cast<float>(std::sqrt(3.0 / static_cast<double>(fan)));
  c.bias = test::random_vector(static_cast<size_t>(c.filters), rng);
  m.layers = {{"l", c, {}, {}}};
  infer_shapes(m, m.name);
  return m;
}

// (A name of its own: the unity build puts this file in one translation unit with test_gpu_engine.cpp's run.)
std::vector<float> forward_of(Backend& b, const Model& m, const std::vector<float>& in, int n) {
  return test::guarded_forward(b, m, in, n).out;
}

}  // namespace

// 3xFP16 (v51-v53) scales each operand by a power of two into FP16's range: the input per image, found on the device
// at every launch, the weights per filter. Inputs and weights far outside FP16's range (1e6 overflows it, 1e-7 is
// below its smallest normal), filters of very different sizes, and a batch whose images differ by 1e8 in size keep
// FP32 accuracy against the cpu backend, each image against its own size; an input with an infinity gives non-finite
// outputs where it reaches, as FP32 does, and leaves the other images finite.
TEST(GpuF16Scales, ThreeFp16ScalesKeepFp32AccuracyAtAnyMagnitude) {
  SKIP_WITHOUT_GPU();
  uint32_t seed;
  std::mt19937 rng = test::fresh_rng(&seed);
  Model m = scales_model(rng);
  if (const Support s = registry().find(LayerKind::conv, BackendKind::cuda, 51)->check(m.layers[0]); !s.ok) GTEST_SKIP() << s.reason;
  ConvParams& c = std::get<ConvParams>(m.layers[0].op);
  const size_t fan = static_cast<size_t>(24) * 3 * 3;
  for (int f = 0; f < c.filters; ++f)  // filter f scaled by 10^(f % 7 - 3): 1e-3 to 1e3 apart within one layer
    for (size_t i = 0; i < fan; ++i) c.weight[f * fan + i] *= static_cast<float>(std::pow(10.0, f % 7 - 3));
  const int n = 3;
  const std::vector<float> base = test::random_vector(static_cast<size_t>(m.input.size()) * n, rng);
  auto cpu = make_backend("cpu");
  for (double in_scale : {1e6, 1e-7, 1.0}) {
    for (double w_scale : {1e4, 1e-6}) {
      Model mw = m;
      for (float& w : std::get<ConvParams>(mw.layers[0].op).weight) w *= static_cast<float>(w_scale);
      for (float& b : std::get<ConvParams>(mw.layers[0].op).bias) b *= static_cast<float>(w_scale * in_scale);
      std::vector<float> in = base;
      for (size_t i = 0; i < in.size(); ++i)  // image 1 1e8 times smaller than the others
        in[i] *= static_cast<float>(in_scale * (i / m.input.size() == 1 ? 1e-8 : 1.0));
      cpu->load(mw);
      const std::vector<float> want = forward_of(*cpu, mw, in, n);
      const size_t per = want.size() / n;
      for (int v : {51, 52, 53, 62, 63}) {
        BackendOptions o;
        o.conv_variant = v;
        auto gpu = make_backend("cuda", o);
        gpu->load(mw);
        const std::vector<float> got = forward_of(*gpu, mw, in, n);
        const std::vector<float> got0(got.begin(), got.begin() + static_cast<long>(per)), want0(want.begin(), want.begin() + static_cast<long>(per));
        const std::string what = "v" + std::to_string(v) + " input x" + std::to_string(in_scale) + " weights x" + std::to_string(w_scale);
        EXPECT_LE(test::rel_l2(got0, want0), 2e-6) << what << " seed " << seed;
        // The small image: its outputs are mostly the bias (scaled with the others'), 1e8 times its convolution, so here
        // it is held to 1e-6 of the batch's largest output; FusedAndTwoPassInputPassesKeepEachImagesAccuracy holds
        // images without a bias to their own size.
        const std::vector<float> got1(got.begin() + static_cast<long>(per), got.begin() + static_cast<long>(2 * per)),
            want1(want.begin() + static_cast<long>(per), want.begin() + static_cast<long>(2 * per));
        double big = 0;
        for (float x : want0) big = std::max(big, static_cast<double>(std::fabs(x)));
        double worst = 0;
        for (size_t i = 0; i < per; ++i) worst = std::max(worst, std::fabs(static_cast<double>(got1[i]) - want1[i]));
        EXPECT_LE(worst, 1e-6 * big) << what << " (the image 1e8 times smaller) seed " << seed;
      }
    }
  }
  // An infinity in the input: FP32 gives inf or NaN where it reaches, and so must this (no scale hides it).
  std::vector<float> in = base;
  in[5] = std::numeric_limits<float>::infinity();
  BackendOptions o;
  o.conv_variant = 51;
  auto gpu = make_backend("cuda", o);
  gpu->load(m);
  const std::vector<float> got = forward_of(*gpu, m, in, n);
  const size_t per = got.size() / n;
  EXPECT_TRUE(std::any_of(got.begin(), got.begin() + static_cast<long>(per), [](float x) { return !std::isfinite(x); })) << "seed " << seed;
  EXPECT_TRUE(std::all_of(got.begin() + static_cast<long>(per), got.end(), [](float x) { return std::isfinite(x); }))
      << "an infinity in image 0 reached image 1 or 2; seed " << seed;
}

// The input pass runs fused (one cluster per image, the input read once) where an image's bands fit shared memory, and
// as a max pass and a copy pass where they do not: both ways, with images 1e4 apart in size and no bias, in 3xFP16
// (v51) and the scaled FP16 product (v54), every image keeps its precision's accuracy against the cpu backend on its
// own size. (With one scale for the batch, as before, the smallest image's values would sit 2^26 under the largest:
// hi at FP16's smallest normals, lo subnormal with a bit or none, an error of order 1e-4 by that count.)
TEST(GpuF16Scales, FusedAndTwoPassInputPassesKeepEachImagesAccuracy) {
  SKIP_WITHOUT_GPU();
  uint32_t seed;
  std::mt19937 rng = test::fresh_rng(&seed);
  struct Shape3 {
    int c, h, w;
    bool fused;
  };
  // 24 x 11 x 13: one band of 11 rows, fused; 64 x 120 x 120: even 16 bands of 8 rows take 253 KB each, two passes
  for (const Shape3 sh : {Shape3{24, 11, 13, true}, Shape3{64, 120, 120, false}}) {
    Model m;
    m.name = "passes";
    m.input = {sh.c, sh.h, sh.w};
    ConvParams c = test::conv_params(16, 3, 1, 1, 1, false);
    const size_t fan = static_cast<size_t>(sh.c) * 9;
    c.weight = test::random_vector(static_cast<size_t>(c.filters) * fan, rng);
    for (float& w : c.weight) w *= static_cast<float>(std::sqrt(3.0 / static_cast<double>(fan)));
    m.layers = {{"l", c, {}, {}}};
    infer_shapes(m, m.name);
    if (const Support s = registry().find(LayerKind::conv, BackendKind::cuda, 51)->check(m.layers[0]); !s.ok) GTEST_SKIP() << s.reason;
    const int n = 3;
    std::vector<float> in = test::random_vector(static_cast<size_t>(m.input.size()) * n, rng);
    for (size_t i = 0; i < in.size(); ++i) in[i] *= static_cast<float>(std::pow(10.0, 4.0 * static_cast<double>(i / m.input.size()) - 4.0));
    auto cpu = make_backend("cpu");
    cpu->load(m);
    const std::vector<float> want = forward_of(*cpu, m, in, n);
    const size_t per = want.size() / n;
    for (const auto& [v, budget] : {std::pair{51, 2e-6}, std::pair{54, 2e-3}}) {
      const std::string what = "v" + std::to_string(v) + " on " + std::to_string(sh.c) + " x " + std::to_string(sh.h) + " x " + std::to_string(sh.w);
      EXPECT_EQ(cuda::f16_split_fused(v, m.layers[0]), sh.fused) << what;
      BackendOptions o;
      o.conv_variant = v;
      o.precision = v == 54 ? Precision::tf32 : Precision::fp32;
      auto gpu = make_backend("cuda", o);
      gpu->load(m);
      const std::vector<float> got = forward_of(*gpu, m, in, n);
      for (int i = 0; i < n; ++i) {
        const std::vector<float> g(got.begin() + static_cast<long>(i * per), got.begin() + static_cast<long>((i + 1) * per)),
            w(want.begin() + static_cast<long>(i * per), want.begin() + static_cast<long>((i + 1) * per));
        EXPECT_LE(test::rel_l2(g, w), budget) << what << ", image " << i << " (x 1e" << 4 * i - 4 << "), seed " << seed;
      }
    }
  }
}

// The fused input pass has two launch shapes (f16_split.cuh's band_for): where its grid would leave multiprocessors idle
// (small batches) each image is cut into as many bands as a cluster holds (at most 16, and a row each at least); else
// into bands of about 48 KB. Either way its words (hi and lo) and per-image maxima must be the two passes' to the
// bit, and the maxima the host's: AlexNet's five input passes (conv1 through the space-to-depth rewrite, conv2 and conv4
// in two groups), a rewrite with padding and a band partly outside the image, and odd sizes; 1, 3, 16 and 40 images,
// each image of its own size (2^-6 to 2^8); v51 (hi and lo) and v54 (hi alone).
TEST(GpuF16Scales, FusedPassGivesTheTwoPassesWordsAndScalesToTheBit) {
  SKIP_WITHOUT_GPU();
  uint32_t seed;
  std::mt19937 rng = test::fresh_rng(&seed);
  struct Case {
    const char* name;
    Shape in;
    ConvParams c;
    int most_bands;  // ceil(rows / ceil(rows / 16)) of the copy's rows
  };
  const std::vector<Case> cases = {
      {"conv1", {3, 227, 227}, test::conv_params(96, 11, 4, 0, 1, false), 15},  // 57 rows of the rewrite: 15 bands of 4
      {"conv2", {96, 27, 27}, test::conv_params(256, 5, 1, 2, 2, false), 14},
      {"conv3", {256, 13, 13}, test::conv_params(384, 3, 1, 1, 1, false), 13},
      {"conv4", {384, 13, 13}, test::conv_params(384, 3, 1, 1, 2, false), 13},
      {"s2d-pad", {3, 64, 61}, test::conv_params(16, 5, 2, 2, 1, false), 12},  // 34 rows: 12 bands of 3, the last of 1
      {"odd", {40, 9, 7}, test::conv_params(24, 3, 1, 1, 1, false), 9},
      {"chpad", {5, 30, 30}, test::conv_params(8, 3, 1, 1, 1, false), 15},  // 5 channels padded to 8
  };
  for (const Case& k : cases) {
    Model m;
    m.name = k.name;
    m.input = k.in;
    ConvParams c = k.c;
    c.weight.assign(static_cast<size_t>(c.filters) * (k.in.c / c.groups) * c.kh * c.kw, 0.0f);
    m.layers = {{"l", c, {}, {}}};
    infer_shapes(m, m.name);
    const size_t per = static_cast<size_t>(k.in.size());
    for (const int n : {1, 3, 16, 40}) {
      std::vector<float> x = test::random_vector(per * n, rng);
      std::vector<unsigned> want(static_cast<size_t>(n));  // each image's max |x|, on the host
      for (int i = 0; i < n; ++i) {
        float mx = 0.0f;
        for (size_t j = 0; j < per; ++j) {
          float& v = x[i * per + j];
          v = std::ldexp(v, i % 15 - 6);
          mx = std::max(mx, std::fabs(v));
        }
        std::memcpy(&want[i], &mx, sizeof mx);
      }
      for (const int v : {51, 54}) {
        const std::string what = std::string(k.name) + " v" + std::to_string(v) + ", " + std::to_string(n) + " images, seed " + std::to_string(seed);
        ASSERT_TRUE(cuda::f16_split_fused(v, m.layers[0])) << what;
        const cuda::F16SplitWords two = cuda::f16_split_words(v, m.layers[0], x, n, true);
        const cuda::F16SplitWords fused = cuda::f16_split_words(v, m.layers[0], x, n, false);
        EXPECT_EQ(two.amax, want) << what << ": the two passes' maxima";
        EXPECT_EQ(fused.amax, two.amax) << what << ": the fused pass's maxima";
        ASSERT_EQ(fused.words.size(), two.words.size()) << what;
        size_t differ = 0, first = 0;
        for (size_t i = 0; i < two.words.size(); ++i)
          if (fused.words[i] != two.words[i] && differ++ == 0) first = i;
        EXPECT_EQ(differ, 0u) << what << ": fused in " << fused.blocks << " bands an image; first at word " << first << " of "
                              << two.words.size();
        if (n == 1) {
          EXPECT_EQ(fused.blocks, k.most_bands) << what << ": one image leaves the GPU idle in bands of 48 KB";
        }
      }
    }
  }
}
