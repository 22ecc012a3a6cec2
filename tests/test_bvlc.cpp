// The strict unpickler on fixtures written by NumPy (tests/fixtures/make_pickle_fixtures.py), its refusals,
// the bvlc writer read back, synthesis, and the AlexNet importer's rearrangements.
#include <gtest/gtest.h>

#include "kernels/model/model.hpp"
#include "test_util.hpp"
#include "weights_tools/bvlc.hpp"
#include "weights_tools/error.hpp"
#include "weights_tools/io.hpp"
#include "weights_tools/layout.hpp"
#include "weights_tools/npy.hpp"
#include "weights_tools/rearrange.hpp"

using namespace bs;
using test::fixture;

namespace {

const std::vector<Array>& entry(const BvlcFile& f, const std::string& k) {
  for (const auto& [key, v] : f.layers)
    if (key == k) return v;
  throw std::runtime_error("no entry " + k);
}

class PickleProtocols : public ::testing::TestWithParam<std::string> {};

TEST_P(PickleProtocols, ReadsTheDictNumPyWrote) {
  BvlcFile f = read_bvlc(fixture(GetParam()));
  ASSERT_EQ(f.layers.size(), 3u);
  EXPECT_EQ(f.layers[0].first, "conv1");
  const auto& conv = entry(f, "conv1");
  ASSERT_EQ(conv.size(), 2u);
  EXPECT_EQ(conv[0].shape, (std::vector<int64_t>{2, 2, 1, 3}));
  std::vector<float> w = conv[0].to_float();
  for (int i = 0; i < 12; ++i) EXPECT_EQ(w[i], i);
  EXPECT_EQ(conv[1].to_float(), (std::vector<float>{0.5f, -1.0f, 2.0f}));
  const auto& fc = entry(f, "fc6");
  EXPECT_EQ(fc[0].dtype, DType::f64);
  EXPECT_EQ(fc[0].shape, (std::vector<int64_t>{4, 2}));
  std::vector<float> fv = fc[0].to_float();  // Fortran order in the pickle, C order here
  for (int i = 0; i < 8; ++i) EXPECT_EQ(fv[i], i * 0.25f);
  EXPECT_EQ(fc[1].to_float(), (std::vector<float>{1.0f, -2.0f}));  // big-endian in the pickle
  const auto& sc = entry(f, "scalars");
  EXPECT_TRUE(sc[0].shape.empty());
  EXPECT_EQ(sc[0].to_float(), std::vector<float>{2.5f});
  EXPECT_EQ(sc[1].dtype, DType::i64);
  EXPECT_EQ(sc[1].to_float(), std::vector<float>{7.0f});
  EXPECT_TRUE(f.synthetic_note.empty());
}

INSTANTIATE_TEST_SUITE_P(Fixtures, PickleProtocols,
                         ::testing::Values("dict_p2.npy", "dict_p3.npy", "dict_p4.npy", "dict_p5.npy", "dict_npsave.npy"),
                         [](const auto& info) { return info.param.substr(5, info.param.size() - 9); });

void expect_refusal(const std::string& file, const std::string& needle) {
  test::expect_error_at([&] { read_bvlc(fixture(file)); }, fixture(file), needle);
}

TEST(Unpickler, RefusesTruncatedMalformedAndForeignGlobals) {
  expect_refusal("dict_truncated.npy", "truncated pickle");
  expect_refusal("dict_bad_opcode.npy", "unsupported pickle opcode 0xff");
  expect_refusal("dict_evil.npy", "pickle references posix.system, which a weights file may not use");
  expect_refusal("dict_other_global.npy", "pickle references __main__.Other, which a weights file may not use");
  expect_refusal("f4_le.npy", "holds a plain <f4 array");
}

TEST(Bvlc, WriterOutputReadsBackAndIsMarkedSynthetic) {
  test::TempDir d;
  BvlcFile f;
  f.layers.push_back({"conv1", {Array::from_float({1, 1, 2, 2}, {1, 2, 3, 4}), Array::from_float({2}, {5, 6})}});
  f.synthetic_note = "synthetic: He-initialised by batchscope-weights synthesize, seed 9";
  write_bvlc(d / "w.npy", f);
  BvlcFile back = read_bvlc(d / "w.npy");
  ASSERT_EQ(back.layers.size(), 1u);
  EXPECT_EQ(back.layers[0].second[0].to_float(), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(back.synthetic_note, f.synthetic_note);
}

TEST(Bvlc, SynthesisIsDeterministicAndHeScaled) {
  BvlcFile a = synthesize_alexnet(7), b = synthesize_alexnet(7), c = synthesize_alexnet(8);
  const auto& wa = entry(a, "conv2")[0];
  EXPECT_EQ(wa.shape, (std::vector<int64_t>{5, 5, 48, 256}));
  EXPECT_EQ(wa.bytes, entry(b, "conv2")[0].bytes);
  EXPECT_NE(wa.bytes, entry(c, "conv2")[0].bytes);
  std::vector<float> v = wa.to_float();
  double sq = 0;
  for (float x : v) sq += double(x) * x;
  const double stddev = std::sqrt(sq / v.size()), he = std::sqrt(2.0 / (5 * 5 * 48));
  EXPECT_NEAR(stddev, he, 0.02 * he);
  EXPECT_EQ(entry(a, "fc6")[0].shape, (std::vector<int64_t>{9216, 4096}));
}

// A reduced AlexNet (same structure, fewer channels) whose weights have hand-checkable positions.
BvlcFile mini_alexnet() {
  BvlcFile f;
  const std::vector<std::pair<std::string, std::vector<int64_t>>> shapes = {
      {"conv1", {11, 11, 3, 8}}, {"conv2", {5, 5, 4, 16}}, {"conv3", {3, 3, 16, 12}}, {"conv4", {3, 3, 6, 12}},
      {"conv5", {3, 3, 6, 8}},   {"fc6", {8 * 6 * 6, 10}}, {"fc7", {10, 10}},         {"fc8", {10, 5}}};
  f.layers.clear();
  std::mt19937 rng(11);
  for (const auto& [name, shape] : shapes) {
    std::vector<float> w = test::random_vector(static_cast<size_t>(shape_size(shape)), rng);
    std::vector<float> b = test::random_vector(static_cast<size_t>(shape.back()), rng);
    f.layers.push_back({name, {Array::from_float(shape, w), Array::from_float({shape.back()}, b)}});
  }
  return f;
}

TEST(ImportBvlc, RearrangesLayoutsInfersGroupsAndLoads) {
  test::TempDir d;
  BvlcFile f = mini_alexnet();
  write_bvlc(d / "mini.npy", f);
  BvlcImportOptions o;
  o.path = d / "mini.npy";
  write_model_folder(d / "m", convert_bvlc(o), [](const std::string& dir) { load_model(dir); });
  Model m = load_model(d / "m");
  EXPECT_EQ(m.input, (Shape{3, 227, 227}));
  EXPECT_EQ(m.layers.size(), 22u);  // 5 conv, 7 relu, 2 lrn, 3 pool, flatten, 3 fc, softmax
  const auto& c1 = std::get<ConvParams>(m.layers[0].op);
  EXPECT_EQ(m.layers[0].out, (Shape{8, 55, 55}));  // Caffe: no padding on conv1
  EXPECT_EQ(c1.sh, 4);
  const Layer* conv2 = nullptr;
  for (const Layer& l : m.layers)
    if (l.name == "conv2") conv2 = &l;
  ASSERT_NE(conv2, nullptr);
  EXPECT_EQ(std::get<ConvParams>(conv2->op).groups, 2);  // 8 channels in, 4 per group
  // conv1 OIHW element (o=5, i=2, y=7, x=3) is HWIO element (7, 3, 2, 5).
  const std::vector<float> hwio = entry(f, "conv1")[0].to_float();
  EXPECT_EQ(c1.weight[((5 * 3 + 2) * 11 + 7) * 11 + 3], hwio[((7 * 11 + 3) * 3 + 2) * 8 + 5]);
  // fc6: (in, out) -> (out, in), inputs from (H, W, C) to (C, H, W) order over the (8, 6, 6) pool5 map.
  const std::vector<float> fc6_io = entry(f, "fc6")[0].to_float();  // (288, 10)
  const Layer* fc6 = nullptr;
  for (const Layer& l : m.layers)
    if (l.name == "fc6") fc6 = &l;
  const auto& fw = std::get<FcParams>(fc6->op).weight;  // (10, 288), CHW inputs
  const int o_ = 4, ch = 5, y = 2, x = 3;
  EXPECT_EQ(fw[o_ * 288 + (ch * 6 + y) * 6 + x], fc6_io[((y * 6 + x) * 8 + ch) * 10 + o_]);
  const Layer& norm = m.layers[2];
  EXPECT_EQ(norm.type_name(), "lrn");
  EXPECT_FLOAT_EQ(std::get<LrnParams>(norm.op).alpha, 1e-4f);
  EXPECT_TRUE(m.preprocess.present);
  EXPECT_EQ(m.weights_note, "real");
}

TEST(ImportBvlc, ConventionsAreOptions) {
  test::TempDir d;
  write_bvlc(d / "mini.npy", mini_alexnet());
  BvlcImportOptions o;
  o.path = d / "mini.npy";
  o.conv1_same = true;
  o.lrn_caffe = false;
  o.lrn_alpha = 2e-5;
  o.fc6_hwc = false;
  write_model_folder(d / "m", convert_bvlc(o), [](const std::string& dir) { load_model(dir); });
  Model m = load_model(d / "m");
  EXPECT_EQ(m.layers[0].out, (Shape{8, 57, 57}));  // TensorFlow SAME: ceil(227 / 4)
  EXPECT_FLOAT_EQ(std::get<LrnParams>(m.layers[2].op).alpha, 1e-4f);  // 2e-5 x local_size 5
  o.fc6_hwc = true;
  o.path = fixture("dict_p4.npy");  // no conv2..: a clear error
  try {
    convert_bvlc(o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("has no entry 'conv2'"), std::string::npos) << e.what();
  }
}

TEST(Rearrange, EachPairAndItsInverseRoundTrip) {
  test::TempDir d;
  std::mt19937 rng(5);
  std::vector<float> hwio = test::random_vector(3 * 3 * 4 * 6, rng);
  write_npy(d / "hwio.npy", Array::from_float({3, 3, 4, 6}, hwio));
  rearrange_file({d / "hwio.npy", d / "oihw.npy", "HWIO", "OIHW", 2, {}});
  EXPECT_EQ(read_npy(d / "oihw.npy").shape, (std::vector<int64_t>{6, 4, 3, 3}));
  rearrange_file({d / "oihw.npy", d / "back.npy", "OIHW", "HWIO", 2, {}});
  EXPECT_EQ(read_npy(d / "back.npy").to_float(), hwio);
  std::vector<float> io = test::random_vector(12 * 5, rng);
  write_npy(d / "io.npy", Array::from_float({12, 5}, io));
  rearrange_file({d / "io.npy", d / "oi.npy", "IO", "OI", 1, {}});
  rearrange_file({d / "oi.npy", d / "hwc_chw.npy", "fc-hwc", "fc-chw", 1, {3, 2, 2}});
  rearrange_file({d / "hwc_chw.npy", d / "chw_hwc.npy", "fc-chw", "fc-hwc", 1, {3, 2, 2}});
  rearrange_file({d / "chw_hwc.npy", d / "io2.npy", "OI", "IO", 1, {}});
  EXPECT_EQ(read_npy(d / "io2.npy").to_float(), io);
  EXPECT_THROW(rearrange_file({d / "io.npy", d / "x.npy", "IO", "OIHW", 1, {}}), Error);
  EXPECT_THROW(rearrange_file({d / "hwio.npy", d / "x.npy", "HWIO", "OIHW", 4, {}}), Error);  // 4 does not divide 6
  EXPECT_THROW(rearrange_file({d / "oi.npy", d / "x.npy", "fc-hwc", "fc-chw", 1, {3, 2, 3}}), Error);
  EXPECT_FALSE(std::filesystem::exists(d / "x.npy"));
}

}  // namespace
