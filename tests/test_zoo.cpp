// synthesize's zoo: every network in its published shapes, against numbers from outside this project (parameter
// counts as torchvision and Caffe report them, the feature-map sizes of the ZFNet paper) and the shipped models.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "kernels/model/model.hpp"
#include "test_util.hpp"
#include "weights_tools/error.hpp"
#include "weights_tools/zoo/zoo.hpp"

using namespace bs;

namespace {

nlohmann::json shipped(const std::string& name) {
  std::ifstream f(test::data_file("models/" + name + "/model.json"));
  return nlohmann::json::parse(f);
}

// The structure of a model.json: each layer's name, type and shape attributes (no weight files).
std::vector<std::string> structure(const nlohmann::json& m) {
  std::vector<std::string> out;
  for (const auto& l : m["layers"]) {
    nlohmann::json s = l;
    s.erase("weight"), s.erase("bias");
    if (s.contains("padding") && s["padding"] == 0) s.erase("padding");  // the default, written or not
    if (s.value("type", "") == "lrn") s["alpha"] = std::round(s["alpha"].get<double>() * 1e6);  // 1e-4 written two ways
    out.push_back(s.dump());
  }
  return out;
}

}  // namespace

TEST(Zoo, ParameterCountsArePublished) {
  // sum(p.numel() for p in torchvision.models.X().parameters()); Caffe's bvlc_alexnet (60,965,224); ZFNet by hand
  // from the paper's figure 3: conv 14,208 + 614,656 + 885,120 + 1,327,488 + 884,992, fc 37,752,832 + 16,781,312
  // + 4,097,000.
  EXPECT_EQ(synthesize_zoo("alexnet", 1, false).parameters, 60965224);
  EXPECT_EQ(synthesize_zoo("alexnet-torchvision", 1, false).parameters, 61100840);
  EXPECT_EQ(synthesize_zoo("vgg11", 1, false).parameters, 132863336);
  EXPECT_EQ(synthesize_zoo("vgg16", 1, false).parameters, 138357544);
  EXPECT_EQ(synthesize_zoo("vgg19", 1, false).parameters, 143667240);
  EXPECT_EQ(synthesize_zoo("zfnet", 1, false).parameters, 62357608);
  int64_t ece408 = 0;  // the real weights shipped in data/models/ece408
  for (const Layer& l : load_model(test::data_file("models/ece408")).layers) ece408 += l.weight_count();
  EXPECT_EQ(synthesize_zoo("ece408", 1, false).parameters, ece408);
}

TEST(Zoo, AlexnetAndEce408AreTheShippedStructures) {
  for (const char* name : {"alexnet", "ece408"}) {
    const nlohmann::json z = nlohmann::json::parse(synthesize_zoo(name, 1, false).folder.model.dump());
    EXPECT_EQ(structure(z), structure(shipped(name))) << name;
    EXPECT_EQ(z["input"], shipped(name)["input"]) << name;
  }
}

TEST(Zoo, ZfnetHasThePapersFeatureMapsAndHeWeights) {
  test::TempDir d;
  const ZooModel z = synthesize_zoo("zfnet", 7, true);
  write_model_folder(d / "zfnet", z.folder, [](const std::string& dir) { load_model(dir); });
  const Model m = load_model(d / "zfnet");
  EXPECT_EQ(m.name, "zfnet");
  EXPECT_EQ(m.weights_note.rfind("synthetic", 0), 0u);
  std::map<std::string, Shape> want = {{"conv1", {96, 110, 110}}, {"pool1", {96, 55, 55}}, {"conv2", {256, 26, 26}},
                                       {"pool2", {256, 13, 13}},  {"conv5", {256, 13, 13}}, {"pool5", {256, 6, 6}},
                                       {"fc8", {1000, 1, 1}}};
  for (const Layer& l : m.layers) {
    if (want.count(l.name)) {
      EXPECT_EQ(l.out, want[l.name]) << l.name;
    }
    if (l.name == "conv2") {  // He-normal: standard deviation sqrt(2 / (96 * 5 * 5))
      const auto& w = std::get<ConvParams>(l.op).weight;
      double s2 = 0;
      for (float v : w) s2 += double{v} * v;
      EXPECT_NEAR(std::sqrt(s2 / w.size()), std::sqrt(2.0 / 2400), 0.01 * std::sqrt(2.0 / 2400));
    }
  }
  // The same seed draws the same weights; another seed others.
  EXPECT_EQ(synthesize_zoo("ece408", 7, true).folder.tensors[0].array.to_float(),
            synthesize_zoo("ece408", 7, true).folder.tensors[0].array.to_float());
  EXPECT_NE(synthesize_zoo("ece408", 7, true).folder.tensors[0].array.to_float(),
            synthesize_zoo("ece408", 8, true).folder.tensors[0].array.to_float());
}

TEST(Zoo, UnknownNameListsTheZoo) {
  try {
    synthesize_zoo("resnet50", 1, false);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--model"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("vgg16"), std::string::npos) << e.what();
  }
}
