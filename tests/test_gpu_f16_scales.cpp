// The FP16-tensor-core versions' scales (conv_wgmma_3xf16.cu): every operand is multiplied by a power of two into
// FP16's range before it is split (3xFP16, v51-v53) or rounded (the scaled FP16 product, v54-v56), and the epilogue
// divides it out. The op-case table and GpuEngine hold them to their precision on ordinary values; here, values far
// outside FP16's range. Without a GPU each test skips.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gpu_util.hpp"
#include "test_util.hpp"
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

// 3xFP16 (v51-v53) scales each operand by a power of two into FP16's range: the input per tensor, found on the device
// at every launch, the weights per filter. Inputs and weights far outside FP16's range (1e6 overflows it, 1e-7 is
// below its smallest normal), filters of very different sizes, and a batch whose images differ by 1e8 in size keep
// FP32 accuracy against the cpu backend; an input with an infinity gives non-finite outputs, as FP32 does.
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
      for (int v : {51, 52, 53}) {
        BackendOptions o;
        o.conv_variant = v;
        auto gpu = make_backend("cuda", o);
        gpu->load(mw);
        const std::vector<float> got = forward_of(*gpu, mw, in, n);
        const std::vector<float> got0(got.begin(), got.begin() + static_cast<long>(per)), want0(want.begin(), want.begin() + static_cast<long>(per));
        const std::string what = "v" + std::to_string(v) + " input x" + std::to_string(in_scale) + " weights x" + std::to_string(w_scale);
        EXPECT_LE(test::rel_l2(got0, want0), 2e-6) << what << " seed " << seed;
        // The small image: its values sit 2^27 under the tensor's largest, where lo is subnormal or zero and hi keeps
        // FP16's 11 bits (or fewer, below 2^-14): an error against its own size that FP32 would not make, and bounded by
        // 2^-24 of the batch's largest value. Checked against that bound.
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
  EXPECT_TRUE(std::any_of(got.begin(), got.end(), [](float x) { return !std::isfinite(x); })) << "seed " << seed;
}
