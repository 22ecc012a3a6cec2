// import-mxnet on the shipped ECE 408 checkpoint and on generated symbol graphs; the ECE 408 network end
// to end on both CPU backends against the course's published Correctness.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "app/exec/datasets.hpp"
#include "app/exec/executor.hpp"
#include "kernels/exec/backend.hpp"
#include "test_util.hpp"
#include "weights_tools/error.hpp"
#include "weights_tools/mxnet_import.hpp"

using namespace bs;

namespace {

MxnetImportOptions ece408_opts(const std::string& out) {
  MxnetImportOptions o;
  o.symbol_path = test::data_file("ece408-2019sp/ece408-symbol.json");
  o.params_path = test::data_file("ece408-2019sp/ece408-0002.params");
  o.out_dir = out;
  o.input_shape = {1, 48, 48};
  return o;
}

TEST(ImportMxnet, Ece408GivesTheCourseNetwork) {
  ModelFolder f = convert_mxnet(ece408_opts("unused"));
  const auto& layers = f.model["layers"];
  std::vector<std::string> types;
  for (const auto& l : layers) types.push_back(l["type"].get<std::string>());
  EXPECT_EQ(types, (std::vector<std::string>{"convolution", "tanh", "max_pool", "convolution", "flatten",
                                             "fully_connected", "tanh", "fully_connected", "softmax"}));
  EXPECT_EQ(f.model["name"], "ece408");
  EXPECT_EQ(layers[0]["filters"], 6);
  EXPECT_FALSE(layers[0].contains("bias"));  // the course's conv has no bias
  EXPECT_EQ(layers[2]["stride"], 2);
  EXPECT_TRUE(layers[5].contains("bias"));
  EXPECT_EQ(f.tensors.size(), 6u);
}

TEST(ImportMxnet, WritesAFolderThatLoadsAndMatchesTheShippedOne) {
  test::TempDir d;
  std::string out = d / "ece408";
  write_model_folder(out, convert_mxnet(ece408_opts(out)), [](const std::string& dir) { load_model(dir); });
  Model mine = load_model(out);
  Model shipped = load_model(test::data_file("models/ece408"));
  ASSERT_EQ(mine.layers.size(), shipped.layers.size());
  EXPECT_EQ(std::get<FcParams>(mine.layers[5].op).weight, std::get<FcParams>(shipped.layers[5].op).weight);
  EXPECT_EQ(mine.output(), (Shape{10, 1, 1}));
}

// A generated chain with the options the ECE 408 file does not use.
TEST(ImportMxnet, GeneralChainWithBiasStridePadGroupsAvgPoolAndImplicitFlatten) {
  test::TempDir d;
  nlohmann::json sym = {{"nodes", nlohmann::json::array()}};
  auto& n = sym["nodes"];
  auto null = [&](const std::string& name) { n.push_back({{"op", "null"}, {"name", name}, {"inputs", nlohmann::json::array()}}); return n.size() - 1; };
  size_t data = null("data");
  size_t w = null("c_weight"), b = null("c_bias");
  n.push_back({{"op", "Convolution"}, {"name", "c"},
               {"attrs", {{"kernel", "(3, 3)"}, {"stride", "(2, 2)"}, {"pad", "(1, 1)"}, {"num_filter", "4"}, {"num_group", "2"}}},
               {"inputs", {{data, 0, 0}, {w, 0, 0}, {b, 0, 0}}}});
  size_t conv = n.size() - 1;
  n.push_back({{"op", "Activation"}, {"name", "a"}, {"attrs", {{"act_type", "sigmoid"}}}, {"inputs", {{conv, 0, 0}}}});
  n.push_back({{"op", "Pooling"}, {"name", "p"},
               {"attrs", {{"kernel", "(2, 2)"}, {"stride", "(2, 2)"}, {"pool_type", "avg"}, {"pooling_convention", "full"}}},
               {"inputs", {{n.size() - 1, 0, 0}}}});
  size_t pool = n.size() - 1;
  size_t fw = null("fc_weight");
  n.push_back({{"op", "FullyConnected"}, {"name", "fc"}, {"attrs", {{"num_hidden", "3"}, {"no_bias", "True"}}},
               {"inputs", {{pool, 0, 0}, {fw, 0, 0}}}});
  test::write_text(d / "g-symbol.json", sym.dump());
  // conv: (2, 9, 9) -> (4, 5, 5); pool full: ceil((5-2)/2)+1 = 3 -> (4, 3, 3); fc 36 -> 3
  std::vector<uint8_t> p;
  auto u64 = [&](uint64_t v) { for (int i = 0; i < 8; ++i) p.push_back(static_cast<uint8_t>(v >> (8 * i))); };
  auto u32 = [&](uint32_t v) { for (int i = 0; i < 4; ++i) p.push_back(static_cast<uint8_t>(v >> (8 * i))); };
  auto arr = [&](std::vector<uint32_t> shape) {
    u32(0xF993FAC9); u32(0); u32(static_cast<uint32_t>(shape.size()));
    uint64_t count = 1;
    for (auto s : shape) { u64(s); count *= s; }
    u32(1); u32(0); u32(0);
    for (uint64_t i = 0; i < count; ++i) u32(0x3f800000);  // 1.0f
  };
  u64(0x112); u64(0); u64(3);
  arr({4, 1, 3, 3}); arr({4}); arr({3, 36});
  u64(3);
  for (std::string s : {"arg:c_weight", "arg:c_bias", "arg:fc_weight"}) { u64(s.size()); for (char c : s) p.push_back(c); }
  test::write_bytes(d / "g.params", p);
  MxnetImportOptions o;
  o.symbol_path = d / "g-symbol.json";
  o.params_path = d / "g.params";
  o.input_shape = {2, 9, 9};
  write_model_folder(d / "g", convert_mxnet(o), [](const std::string& dir) { load_model(dir); });
  Model m = load_model(d / "g");
  ASSERT_EQ(m.layers.size(), 5u);  // conv, sigmoid, avg pool, (implicit) flatten, fc
  EXPECT_EQ(m.name, "g");
  EXPECT_EQ(m.layers[0].out, (Shape{4, 5, 5}));
  EXPECT_EQ(std::get<ConvParams>(m.layers[0].op).groups, 2);
  EXPECT_EQ(m.layers[2].out, (Shape{4, 3, 3}));
  EXPECT_EQ(m.layers[3].kind(), LayerKind::flatten);
  EXPECT_TRUE(std::get<FcParams>(m.layers[4].op).bias.empty());

  // An unsupported op names the node and lists what is supported; nothing is written.
  n.push_back({{"op", "BatchNorm"}, {"name", "bn"}, {"inputs", {{n.size() - 1, 0, 0}}}});
  test::write_text(d / "bad-symbol.json", sym.dump());
  o.symbol_path = d / "bad-symbol.json";
  try {
    convert_mxnet(o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("node 'bn' (BatchNorm): op 'BatchNorm' is not supported"), std::string::npos) << e.what();
  }
  // A params file lacking a tensor the graph needs.
  o.symbol_path = d / "g-symbol.json";
  o.params_path = test::data_file("ece408-2019sp/ece408-0002.params");
  EXPECT_THROW(convert_mxnet(o), Error);
}

TEST(ImportMxnet, FailedValidationLeavesNoFolder) {
  test::TempDir d;
  MxnetImportOptions o = ece408_opts(d / "m");
  o.input_shape = {1, 28, 28};  // fc0 expects 5184 inputs; a 28x28 input gives 16*8*8 = 1024
  EXPECT_THROW(write_model_folder(d / "m", convert_mxnet(o), [](const std::string& dir) { load_model(dir); }), Error);
  EXPECT_TRUE(std::filesystem::is_empty(d.str()));
}

// Correctness as the course published it: 0.84 / 0.852 / 0.8397 on the first 100 / 1000 / 10000 images.
double ece408_correctness(const std::string& backend, int images) {
  Model m = load_model(test::data_file("models/ece408"));
  const Executor ex(m, parse_enum<BackendKind>(backend, "--backend"), {});
  auto b = ex.open();
  LabelledImages set = load_labelled(test::data_file("ece408-2019sp/t10k-48-images-idx3-ubyte.gz"),
                                     test::data_file("fashion-mnist/t10k-labels-idx1-ubyte.gz"), images, "--images");
  std::vector<float> logits = ex.run_batches(*b, set.images.data(), {}, set.count, 1000, m.logits_layers(), nullptr);
  int correct = 0;
  for (int i = 0; i < set.count; ++i) {
    const float* r = logits.data() + i * 10;
    correct += std::max_element(r, r + 10) - r == set.labels[i];
  }
  return static_cast<double>(correct) / set.count;
}

TEST(Ece408, CpuRefReproducesPublishedCorrectness) {
  EXPECT_EQ(ece408_correctness("cpu-ref", 100), 0.84);
  EXPECT_EQ(ece408_correctness("cpu-ref", 1000), 0.852);
  EXPECT_EQ(ece408_correctness("cpu-ref", 10000), 0.8397);
}

TEST(Ece408, CpuReproducesPublishedCorrectness) {
  EXPECT_EQ(ece408_correctness("cpu", 100), 0.84);
  EXPECT_EQ(ece408_correctness("cpu", 1000), 0.852);
  EXPECT_EQ(ece408_correctness("cpu", 10000), 0.8397);
}

}  // namespace
