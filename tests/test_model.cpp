// model.json parsing, shape inference, weight layouts, and the errors for bad model files.
#include <gtest/gtest.h>

#include "kernels/model/model.hpp"
#include "kernels/model/quantize.hpp"
#include "test_util.hpp"
#include "weights_tools/error.hpp"
#include "weights_tools/layout.hpp"
#include "weights_tools/npy.hpp"

using namespace bs;

namespace {

// conv 2->4 k3 p1 on (2, 6, 6) -> (4, 6, 6); max pool 2 -> (4, 3, 3); flatten 36; fc 36->5
std::string model_json(const std::string& conv_extra = "", const std::string& fc_layout = "OI") {
  return R"({"name": "tiny", "input": [2, 6, 6], "layers": [
    {"name": "c1", "type": "convolution", "filters": 4, "kernel": 3, "padding": 1,
     "weight": {"file": "c1.npy"}, "bias": {"file": "c1b.npy"})" + conv_extra + R"(},
    {"name": "r1", "type": "relu"},
    {"name": "p1", "type": "max_pool", "kernel": 2},
    {"name": "f", "type": "flatten"},
    {"name": "fc", "type": "fully_connected", "outputs": 5, "weight": {"file": "fc.npy", "layout": ")" + fc_layout + R"("}},
    {"name": "sm", "type": "softmax"}]})";
}

void write_weights(const test::TempDir& d, bool fc_io = false) {
  std::vector<float> w(4 * 2 * 3 * 3), fc(5 * 36);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i);
  for (size_t i = 0; i < fc.size(); ++i) fc[i] = static_cast<float>(i) * 0.5f;
  write_npy(d / "c1.npy", Array::from_float({4, 2, 3, 3}, w));
  write_npy(d / "c1b.npy", Array::from_float({4}, {1, 2, 3, 4}));
  if (fc_io) write_npy(d / "fc.npy", Array::from_float({36, 5}, transpose2d(fc, 5, 36)));
  else write_npy(d / "fc.npy", Array::from_float({5, 36}, fc));
}

TEST(Model, ParsesAndInfersShapes) {
  test::TempDir d;
  write_weights(d);
  Model m = parse_model(model_json(), d.str(), "model.json");
  ASSERT_EQ(m.layers.size(), 6u);
  EXPECT_EQ(m.layers[0].out, (Shape{4, 6, 6}));
  EXPECT_EQ(m.layers[2].out, (Shape{4, 3, 3}));
  EXPECT_EQ(m.layers[3].out, (Shape{36, 1, 1}));
  EXPECT_EQ(m.output(), (Shape{5, 1, 1}));
  EXPECT_EQ(m.logits_layers(), 5u);
  EXPECT_EQ(m.layers[0].type_name(), "convolution");
  EXPECT_EQ(std::get<ConvParams>(m.layers[0].op).bias, (std::vector<float>{1, 2, 3, 4}));
  // conv FLOPs: 2 * 4*6*6 outputs * 2*3*3 = 5184
  EXPECT_EQ(m.layers[0].flops_per_image(), 5184.0);
}

TEST(Model, IoLayoutIsTransposedAtLoad) {
  test::TempDir a, b;
  write_weights(a, false);
  write_weights(b, true);
  Model oi = parse_model(model_json(), a.str(), "a");
  Model io = parse_model(model_json("", "IO"), b.str(), "b");
  EXPECT_EQ(std::get<FcParams>(oi.layers[4].op).weight, std::get<FcParams>(io.layers[4].op).weight);
}

TEST(Model, HwioConvLayoutIsRearrangedAtLoad) {
  test::TempDir a;
  write_weights(a);
  std::vector<float> oihw = std::get<ConvParams>(parse_model(model_json(), a.str(), "a").layers[0].op).weight;
  write_npy(a / "c1.npy", Array::from_float({3, 3, 2, 4}, oihw_to_hwio(oihw, 4, 2, 3, 3)));
  std::string j = model_json();
  j.replace(j.find(R"("file": "c1.npy"})"), 17, R"("file": "c1.npy", "layout": "HWIO"})");
  EXPECT_EQ(std::get<ConvParams>(parse_model(j, a.str(), "a").layers[0].op).weight, oihw);
}

TEST(Model, CeilModePoolingFollowsCaffe) {
  test::TempDir d;
  Model m = parse_model(R"({"name": "p", "input": [1, 55, 55], "layers": [
      {"type": "max_pool", "kernel": 3, "stride": 2},
      {"type": "max_pool", "kernel": 3, "stride": 2, "ceil_mode": true},
      {"type": "avg_pool", "kernel": 2, "stride": 2, "ceil_mode": true}]})", d.str(), "m");
  EXPECT_EQ(m.layers[0].out, (Shape{1, 27, 27}));
  EXPECT_EQ(m.layers[1].out, (Shape{1, 13, 13}));
  EXPECT_EQ(m.layers[2].out, (Shape{1, 7, 7}));  // ceil(13/2)
}

TEST(Model, AsymmetricPaddingIsTopLeftBottomRight) {
  test::TempDir d;
  write_weights(d);
  // conv k3 on (2, 6, 6) with padding [top 0, left 1, bottom 2, right 0]: 6 + 0 + 2 - 3 + 1 = 6 rows, 6 + 1 + 0 - 3 + 1 = 5
  // columns; max pool k2 s2 with [1, 0, 0, 1] on (4, 6, 5): (6 + 1 - 2) / 2 + 1 = 3 rows, (5 + 1 - 2) / 2 + 1 = 3 columns,
  // 36 features as before.
  std::string j = model_json();
  j.replace(j.find(R"("padding": 1)"), 12, R"("padding": [0, 1, 2, 0])");
  j.replace(j.find(R"("kernel": 2})"), 12, R"("kernel": 2, "padding": [1, 0, 0, 1]})");
  Model m = parse_model(j, d.str(), "m.json");
  EXPECT_EQ(m.layers[0].out, (Shape{4, 6, 5}));
  EXPECT_EQ(m.layers[2].out, (Shape{4, 3, 3}));
  const ConvParams& c = std::get<ConvParams>(m.layers[0].op);
  EXPECT_EQ(std::vector<int>({c.ph, c.pw, c.pad_bottom(), c.pad_right()}), std::vector<int>({0, 1, 2, 0}));
  EXPECT_TRUE(c.asymmetric());
  const PoolParams& p = std::get<PoolParams>(m.layers[2].op);
  EXPECT_EQ(std::vector<int>({p.ph, p.pw, p.pad_bottom(), p.pad_right()}), std::vector<int>({1, 0, 0, 1}));
  // Two values stay symmetric.
  EXPECT_FALSE(std::get<ConvParams>(parse_model(model_json(), d.str(), "m.json").layers[0].op).asymmetric());
  auto error_of = [&](const std::string& text) -> std::string {
    try {
      parse_model(text, d.str(), "m.json");
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  std::string three = model_json();
  three.replace(three.find(R"("padding": 1)"), 12, R"("padding": [0, 1, 2])");
  EXPECT_NE(error_of(three).find("field 'padding' must be an integer >= 0, [h, w] or [top, left, bottom, right], found [0,1,2]"),
            std::string::npos) << error_of(three);
  std::string negative = model_json();
  negative.replace(negative.find(R"("padding": 1)"), 12, R"("padding": [0, 1, -2, 0])");
  EXPECT_NE(error_of(negative).find("field 'padding' must be an integer >= 0"), std::string::npos) << error_of(negative);
  // A pool's padding on any side stays below its window.
  std::string wide = model_json();
  wide.replace(wide.find(R"("kernel": 2})"), 12, R"("kernel": 2, "padding": [0, 0, 0, 2]})");
  EXPECT_NE(error_of(wide).find("layer 'p1': window 2x2 with padding [0, 0, 0, 2] does not fit input (4, 6, 6)"), std::string::npos)
      << error_of(wide);
}

void expect_model_error(const std::string& json, const test::TempDir& d, const std::string& needle) {
  try {
    parse_model(json, d.str(), "m.json");
    FAIL() << "no error, expected: " << needle;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(ModelErrors, EachNamesTheLayerOrFieldAndTheProblem) {
  test::TempDir d;
  write_weights(d);
  std::string j = model_json();
  expect_model_error(R"({"name": "x", "input": [1, 4, 4], "layers": [{"type": "dropout"}]})", d,
                     "m.json: layer 'dropout0': unknown layer type 'dropout'");
  expect_model_error(R"({"name": "x", "input": [1, 4, 4], "layers": [{"type": "convolution", "kernel": 3, "weight": {"file": "c1.npy"}}]})",
                     d, "missing field 'filters'");
  expect_model_error(R"({"name": "x", "input": [1, 4, 4], "layers": [{"type": "relu", "strid": 2}]})", d,
                     "unknown field 'strid'");
  expect_model_error(R"({"input": [1, 4, 4], "layers": [{"type": "relu"}]})", d, "missing field 'name'");
  expect_model_error(R"({"name": "x", "input": [1, 4], "layers": [{"type": "relu"}]})", d, "field 'input' must be");
  expect_model_error(R"({"name": "x", "input": [1, 4, 4], "layers": [{"type": "max_pool", "kernel": "3"}]})", d,
                     "field 'kernel' must be an integer");
  expect_model_error(R"({"name": "x", "input": [1, 4, 4], "layers": [{"type": "max_pool", "kernel": 5}]})", d,
                     "layer 'max_pool0': window 5x5 with padding 0 does not fit input (1, 4, 4)");
  expect_model_error("{not json", d, "m.json: invalid JSON");
  // A weight whose shape the model does not expect names the file, both shapes and the layer.
  write_npy(d / "fc.npy", Array::from_float({5, 35}, std::vector<float>(175)));
  expect_model_error(j, d, "fc.npy: shape (5, 36) expected, file has (5, 35) (layer 'fc', layout OI)");
  std::filesystem::remove(d / "fc.npy");
  expect_model_error(j, d, "fc.npy: cannot open");
  write_weights(d);
  std::string grouped = model_json(R"(, "groups": 3)");
  expect_model_error(grouped, d, "layer 'c1': groups 3 must divide input channels 2 and filters 4");
  std::string badlayout = j;
  badlayout.replace(badlayout.find(R"("layout": "OI")"), 14, R"("layout": "XY")");
  expect_model_error(badlayout, d, "unknown layout 'XY'");
}

TEST(ModelErrors, MissingFolder) {
  try {
    load_model("/nonexistent/model");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/model/model.json: cannot open"), std::string::npos) << e.what();
  }
}

TEST(Layout, HandCheckedIndices) {
  // HWIO (1, 2, 2, 3): value = 100*x + 10*i + o ... at (h=0, w=x, i, o)
  std::vector<float> hwio(12);
  for (int x = 0; x < 2; ++x)
    for (int i = 0; i < 2; ++i)
      for (int o = 0; o < 3; ++o) hwio[(x * 2 + i) * 3 + o] = static_cast<float>(100 * x + 10 * i + o);
  std::vector<float> oihw = hwio_to_oihw(hwio, 1, 2, 2, 3);
  // OIHW (3, 2, 1, 2): element (o=2, i=1, h=0, w=1) at ((2*2+1)*1+0)*2+1 = 11 holds 100+10+2
  EXPECT_EQ(oihw[11], 112.0f);
  EXPECT_EQ(oihw[0], 0.0f);
  EXPECT_EQ(oihw[1], 100.0f);  // (o0, i0, w1)
  EXPECT_EQ(oihw[2], 10.0f);   // (o0, i1, w0)
  EXPECT_EQ(oihw_to_hwio(oihw, 3, 2, 1, 2), hwio);
  std::vector<float> m = {1, 2, 3, 4, 5, 6};  // (2, 3)
  EXPECT_EQ(transpose2d(m, 2, 3), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  // FC inputs flattened (H, W, C) = (1, 2, 3): input index (w, c) at w*3+c; CHW index c*2+w.
  std::vector<float> fc = {0, 1, 2, 3, 4, 5};  // one output; value = hwc index
  std::vector<float> chw = fc_inputs_hwc_to_chw(fc, 1, 3, 1, 2);
  EXPECT_EQ(chw, (std::vector<float>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(fc_inputs_chw_to_hwc(chw, 1, 3, 1, 2), fc);
}

}  // namespace

TEST(Model, LeakyReluAndAveragePoolConventionsParse) {
  const std::string j = R"({"name": "k", "input": [2, 5, 5], "layers": [
    {"name": "a", "type": "leaky_relu", "alpha": 0.2},
    {"name": "b", "type": "leaky_relu"},
    {"name": "p", "type": "avg_pool", "kernel": 3, "stride": 2, "padding": 1, "count_include_pad": false},
    {"name": "q", "type": "avg_pool", "kernel": 3}]})";
  Model m = parse_model(j, ".", "model.json");
  EXPECT_EQ(m.layers[0].type_name(), "leaky_relu");
  EXPECT_FLOAT_EQ(std::get<ActParams>(m.layers[0].op).alpha, 0.2f);
  EXPECT_FLOAT_EQ(std::get<ActParams>(m.layers[1].op).alpha, 0.01f);  // ONNX's and PyTorch's default
  EXPECT_FALSE(std::get<PoolParams>(m.layers[2].op).count_include_pad);
  EXPECT_TRUE(std::get<PoolParams>(m.layers[3].op).count_include_pad);  // Caffe's convention stays the default
  EXPECT_EQ(m.layers[2].out, (Shape{2, 3, 3}));
  try {
    parse_model(R"({"name": "k", "input": [2, 5, 5], "layers": [{"name": "a", "type": "leaky_relu", "alpha": "x"}]})", ".", "m.json");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("alpha"), std::string::npos) << e.what();
  }
}

// --weights int8 (kernels/model/quantize.hpp): per row, scale = largest magnitude / 127, q = round(w / scale).
TEST(Quantize, RowsByHand) {
  // Row 0: scale 1.27 / 127 = 0.01: 1.27 -> 127, -0.5 -> -50, 0 -> 0, 0.634 -> 63.4 -> 63. Row 1: all zero, scale 0.
  // Row 2: scale 0.02: -2.54 -> -127, 0.011 -> 0.55 -> 1, 1.0 -> 50, 0.029 -> 1.45 -> 1.
  const QuantizedRows r = quantize_rows({1.27f, -0.5f, 0.0f, 0.634f, 0, 0, 0, 0, -2.54f, 0.011f, 1.0f, 0.029f}, 3);
  EXPECT_EQ(r.q, (std::vector<int8_t>{127, -50, 0, 63, 0, 0, 0, 0, -127, 1, 50, 1}));
  ASSERT_EQ(r.scale.size(), 3u);
  EXPECT_FLOAT_EQ(r.scale[0], 0.01f);
  EXPECT_EQ(r.scale[1], 0.0f);
  EXPECT_FLOAT_EQ(r.scale[2], 0.02f);
  test::expect_error_at([] { quantize_rows(std::vector<float>(10), 3); }, "quantize_rows", "10 weights do not split into 3 equal rows");
}

TEST(Quantize, ModelWeightsPerOutputChannelBiasesAndShapesKept) {
  test::TempDir d;
  write_weights(d);
  const Model m = parse_model(model_json(), d.str(), "model.json");
  const Model q = quantize_weights(m);
  ASSERT_EQ(q.layers.size(), m.layers.size());
  const auto& cw = std::get<ConvParams>(q.layers[0].op).weight;  // filter f holds 18f .. 18f + 17
  EXPECT_FLOAT_EQ(cw[1], 7 * 17.0f / 127);    // 1 x 127 / 17 = 7.47 -> 7
  EXPECT_FLOAT_EQ(cw[9], 67 * 17.0f / 127);   // 9 x 127 / 17 = 67.24 -> 67
  EXPECT_FLOAT_EQ(cw[17], 17.0f);             // the largest: 127 x scale
  EXPECT_FLOAT_EQ(cw[54], 97 * 71.0f / 127);  // filter 3: 54 x 127 / 71 = 96.59 -> 97
  const auto& fw = std::get<FcParams>(q.layers[4].op).weight;  // row o holds 0.5 x (36 o .. 36 o + 35)
  EXPECT_FLOAT_EQ(fw[1], 4 * 17.5f / 127);                       // 0.5 x 127 / 17.5 = 3.63 -> 4
  EXPECT_EQ(std::get<ConvParams>(q.layers[0].op).bias, std::get<ConvParams>(m.layers[0].op).bias);
  for (size_t i = 0; i < m.layers.size(); ++i) EXPECT_EQ(q.layers[i].out, m.layers[i].out);
  // Every weight within half a step of its channel's scale.
  const auto& mw = std::get<FcParams>(m.layers[4].op).weight;
  for (size_t i = 0; i < mw.size(); ++i) {
    const float scale = (static_cast<float>(i / 36 * 36 + 35) * 0.5f) / 127;
    EXPECT_LE(std::fabs(fw[i] - mw[i]), 0.5f * scale * 1.0001f) << i;
  }
  const QuantizationSummary s = quantization_summary(m, q);
  EXPECT_GT(s.rel_l2, 0.0);
  EXPECT_LT(s.rel_l2, 1.0 / 127);
  EXPECT_EQ(quantization_summary(m, m).rel_l2, 0.0);
}
