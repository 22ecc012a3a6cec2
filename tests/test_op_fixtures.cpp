// Hand-computed fixtures (the tiny-dnn habit): each expected value is worked out in the comments, and
// every CPU backend must reproduce it.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/exec/backend.hpp"
#include "test_util.hpp"

using namespace bs;

namespace {

std::vector<float> run_one(const std::string& backend, Shape in, int n, LayerOp op, const std::vector<float>& x) {
  Model m;
  m.name = "fixture";
  m.input = in;
  Layer l;
  l.name = "op";
  l.op = std::move(op);
  m.layers.push_back(std::move(l));
  infer_shapes(m, "fixture");
  auto b = make_backend(backend);
  b->load(m);
  std::vector<float> out(static_cast<size_t>(m.output().size()) * n, std::nanf(""));
  b->forward(x.data(), n, 1, out.data(), nullptr);
  return out;
}

std::vector<float> one_to_16() {
  std::vector<float> x(16);
  for (int i = 0; i < 16; ++i) x[i] = static_cast<float>(i + 1);
  return x;
}

class Fixture : public ::testing::TestWithParam<std::string> {};

// Input 4x4:   1  2  3  4
//              5  6  7  8
//              9 10 11 12
//             13 14 15 16
TEST_P(Fixture, MaxPool4x4) {
  PoolParams p; p.kh = p.kw = 2; p.sh = p.sw = 2;
  EXPECT_EQ(run_one(GetParam(), {1, 4, 4}, 1, p, one_to_16()), (std::vector<float>{6, 8, 14, 16}));
}

TEST_P(Fixture, AvgPool4x4) {
  PoolParams p; p.kind = PoolKind::avg; p.kh = p.kw = 2; p.sh = p.sw = 2;
  // (1+2+5+6)/4, (3+4+7+8)/4, (9+10+13+14)/4, (11+12+15+16)/4
  EXPECT_EQ(run_one(GetParam(), {1, 4, 4}, 1, p, one_to_16()), (std::vector<float>{3.5, 5.5, 11.5, 13.5}));
}

TEST_P(Fixture, OverlappingMaxPool3x3Stride2WithPadding) {
  PoolParams p; p.kh = p.kw = 3; p.sh = p.sw = 2; p.ph = p.pw = 1;
  // out 2x2, windows rows/cols {-1..1} and {1..3}: max(1,2,5,6)=6, max(2..4,6..8)=8, 14, 16
  EXPECT_EQ(run_one(GetParam(), {1, 4, 4}, 1, p, one_to_16()), (std::vector<float>{6, 8, 14, 16}));
  p.kind = PoolKind::avg;
  // Caffe divides by the window clipped to the padded input: 9 everywhere here.
  // top-left: (1+2+5+6)/9; top-right: (2+3+4+6+7+8)/9; bottom-left: (5+6+9+10+13+14)/9; (6+7+8+10+11+12+14+15+16)/9
  std::vector<float> got = run_one(GetParam(), {1, 4, 4}, 1, p, one_to_16());
  std::vector<float> want = {14.0f / 9, 30.0f / 9, 57.0f / 9, 99.0f / 9};
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(got[i], want[i]);
  // count_include_pad false (PyTorch's default): divided by the input values in each window, 4, 6, 6 and 9.
  p.count_include_pad = false;
  got = run_one(GetParam(), {1, 4, 4}, 1, p, one_to_16());
  want = {14.0f / 4, 30.0f / 6, 57.0f / 6, 99.0f / 9};
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(got[i], want[i]);
}

TEST_P(Fixture, DilatedConvolutionTakesEveryOtherValue) {
  ConvParams c; c.filters = 1; c.kh = c.kw = 3; c.dh = c.dw = 2;
  c.weight.assign(9, 1.0f);
  std::vector<float> x(25);
  for (int i = 0; i < 25; ++i) x[i] = static_cast<float>(i + 1);  // 5x5: 1..25
  // One output: the window's taps at rows and columns 0, 2, 4: 1+3+5 + 11+13+15 + 21+23+25 = 117
  EXPECT_EQ(run_one(GetParam(), {1, 5, 5}, 1, c, x), (std::vector<float>{117}));
  c.ph = c.pw = 2;  // padded by 2: 5x5 outputs; the centre one is the same 117, the corner (0, 0) reads rows and columns 0 and 2: 1, 3, 11, 13
  std::vector<float> y = run_one(GetParam(), {1, 5, 5}, 1, c, x);
  ASSERT_EQ(y.size(), 25u);
  EXPECT_EQ(y[12], 117);
  EXPECT_EQ(y[0], 1 + 3 + 11 + 13);
}

TEST_P(Fixture, AsymmetricPaddingPadsEachSideByItsOwnAmount) {
  // 2x2 ones, padding top 0, left 1, bottom 1, right 0 (ONNX pads [0, 1, 1, 0]): 4x4 outputs, window (oy, ox) over rows
  // oy..oy+1 and columns ox-1..ox. (0, 0): 1 + 5; (0, 3): 3 + 4 + 7 + 8; (3, 0): row 3 and the padding row, 13;
  // (3, 3): 15 + 16.
  ConvParams c; c.filters = 1; c.kh = c.kw = 2; c.pw = 1; c.pb = 1; c.pr = 0;
  c.weight.assign(4, 1.0f);
  std::vector<float> y = run_one(GetParam(), {1, 4, 4}, 1, c, one_to_16());
  ASSERT_EQ(y.size(), 16u);
  EXPECT_EQ(y[0], 6);
  EXPECT_EQ(y[3], 22);
  EXPECT_EQ(y[12], 13);
  EXPECT_EQ(y[15], 31);
  // 3x3 pooling at stride 2, padding top 1 and right 1 alone: 2x2 windows over rows {-1..1, 1..3} and columns
  // {0..2, 2..4}. Max: 7, 8, 15, 16. Average counting the padding, every window 9: 24/9, (3+4+7+8)/9, 90/9, 69/9;
  // without it: 24/6, 22/4, 90/9, 69/6.
  PoolParams p; p.kh = p.kw = 3; p.sh = p.sw = 2; p.ph = 1; p.pw = 0; p.pb = 0; p.pr = 1;
  EXPECT_EQ(run_one(GetParam(), {1, 4, 4}, 1, p, one_to_16()), (std::vector<float>{7, 8, 15, 16}));
  p.kind = PoolKind::avg;
  std::vector<float> got = run_one(GetParam(), {1, 4, 4}, 1, p, one_to_16());
  std::vector<float> want = {24.0f / 9, 22.0f / 9, 90.0f / 9, 69.0f / 9};
  ASSERT_EQ(got.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(got[i], want[i]);
  p.count_include_pad = false;
  got = run_one(GetParam(), {1, 4, 4}, 1, p, one_to_16());
  want = {24.0f / 6, 22.0f / 4, 90.0f / 9, 69.0f / 6};
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(got[i], want[i]);
}

TEST_P(Fixture, Conv3x3EdgeFilterWithBiasAndPadding) {
  ConvParams c; c.filters = 1; c.kh = c.kw = 3;
  c.weight = {1, 0, -1, 1, 0, -1, 1, 0, -1};  // left column minus right column
  c.bias = {0.5f};
  // Valid: every window's left column minus right column = -(2+2+2) = -6, plus 0.5.
  EXPECT_EQ(run_one(GetParam(), {1, 4, 4}, 1, c, one_to_16()), (std::vector<float>{-5.5, -5.5, -5.5, -5.5}));
  c.ph = c.pw = 1; c.sh = c.sw = 2;
  // Padded, stride 2 -> 2x2 from windows centred at (0,0), (0,2), (2,0), (2,2):
  // (0,0): left col is padding, right col x=1 rows 0..1: -(2+6) = -8
  // (0,2): left x=1 rows 0..1: 2+6, right x=3: 4+8 -> -4
  // (2,0): right x=1 rows 1..3: -(6+10+14) = -30
  // (2,2): (6+10+14) - (8+12+16) = -6
  EXPECT_EQ(run_one(GetParam(), {1, 4, 4}, 1, c, one_to_16()), (std::vector<float>{-7.5, -3.5, -29.5, -5.5}));
}

TEST_P(Fixture, GroupedConvKeepsGroupsApart) {
  // 2 input channels, 2 filters, 2 groups, 1x1 kernels: filter g sees only channel g.
  ConvParams c; c.filters = 2; c.kh = c.kw = 1; c.groups = 2;
  c.weight = {2.0f, -1.0f};
  std::vector<float> x = {1, 2, 3, 4, 10, 20, 30, 40};  // (1, 2, 2, 2)
  EXPECT_EQ(run_one(GetParam(), {2, 2, 2}, 1, c, x), (std::vector<float>{2, 4, 6, 8, -10, -20, -30, -40}));
}

TEST_P(Fixture, LrnAcrossFiveChannels) {
  // One pixel, channels a = 1..5, size 5, alpha 5 (alpha/size = 1), beta 1, k 1: b_c = a_c / (1 + sum a_j^2)
  // over j in [c-2, c+2] clipped: c0: 1+4+9=14, c1: 30, c2: 55, c3: 54, c4: 50.
  LrnParams l; l.size = 5; l.alpha = 5; l.beta = 1; l.k = 1;
  std::vector<float> got = run_one(GetParam(), {5, 1, 1}, 1, l, {1, 2, 3, 4, 5});
  std::vector<float> want = {1.0f / 15, 2.0f / 31, 3.0f / 56, 4.0f / 55, 5.0f / 51};
  for (int i = 0; i < 5; ++i) EXPECT_FLOAT_EQ(got[i], want[i]) << i;
}

TEST_P(Fixture, FullyConnectedWithBias) {
  FcParams f; f.outputs = 3;
  f.weight = {1, 2, 3, 4, 5, 6};  // (3, 2)
  f.bias = {0.5f, 0, -0.5f};
  // x = (1, -1): 1-2+0.5, 3-4, 5-6-0.5
  EXPECT_EQ(run_one(GetParam(), {2, 1, 1}, 1, f, {1, -1}), (std::vector<float>{-0.5, -1, -1.5}));
}

TEST_P(Fixture, SoftmaxAndActivations) {
  std::vector<float> got = run_one(GetParam(), {3, 1, 1}, 1, SoftmaxParams{}, {0, std::log(2.0f), std::log(3.0f)});
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(got[i], (i + 1) / 6.0, 1e-7);
  EXPECT_EQ(run_one(GetParam(), {4, 1, 1}, 1, ActParams{Act::relu}, {-2, -0.0f, 0.5, 3}), (std::vector<float>{0, 0, 0.5, 3}));
  // leaky ReLU of slope 0.25 below zero (exact in binary): -2 -> -0.5, -8 -> -2, positives kept
  EXPECT_EQ(run_one(GetParam(), {4, 1, 1}, 1, ActParams{Act::leaky_relu, 0.25f}, {-2, -8, 0.5, 3}),
            (std::vector<float>{-0.5, -2, 0.5, 3}));
  std::vector<float> s = run_one(GetParam(), {2, 1, 1}, 1, ActParams{Act::sigmoid}, {0, std::log(3.0f)});
  EXPECT_FLOAT_EQ(s[0], 0.5f);
  EXPECT_FLOAT_EQ(s[1], 0.75f);  // 1 / (1 + 1/3)
  std::vector<float> t = run_one(GetParam(), {1, 1, 1}, 1, ActParams{Act::tanh}, {std::log(2.0f)});
  EXPECT_FLOAT_EQ(t[0], 0.6f);  // (2 - 1/2) / (2 + 1/2)
}

INSTANTIATE_TEST_SUITE_P(CpuBackends, Fixture, ::testing::Values("cpu-ref", "cpu"),
                         [](const auto& info) { return info.param == "cpu-ref" ? std::string("cpu_ref") : info.param; });

}  // namespace
