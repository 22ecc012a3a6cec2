#include "weights_tools/zoo/zoo.hpp"

#include <cmath>
#include <functional>
#include <random>

#include "kernels/model/model.hpp"
#include "weights_tools/array.hpp"
#include "weights_tools/error.hpp"

namespace bs {
namespace {

using ojson = nlohmann::ordered_json;

// Appends layers to a model.json, following the feature map's shape so that each weight has its exact shape.
class Builder {
 public:
  Builder(std::string name, Shape input, uint64_t seed, bool weights) : cur_(input), seed_(seed), weights_(weights) {
    j_["format"] = "batchscope-model";
    j_["version"] = 1;
    j_["name"] = std::move(name);
    j_["weights"] = "synthetic: He-initialised by batchscope-weights synthesize, seed " + std::to_string(seed);
    j_["provenance"] = {{"tool", "batchscope-weights synthesize"}};  // before input and layers, as the importers write it
    j_["input"] = {input.c, input.h, input.w};
    j_["layers"] = ojson::array();
  }

  void conv(const std::string& name, int filters, int k, int s, int p, int groups = 1, bool bias = true) {
    ojson l = {{"name", name}, {"type", "convolution"}, {"filters", filters}, {"kernel", k}, {"stride", s}, {"padding", p},
               {"groups", groups}};
    params(l, name, {filters, cur_.c / groups, k, k}, "OIHW", bias);
    cur_ = {filters, output_size(cur_.h, k, s, p, false), output_size(cur_.w, k, s, p, false)};
  }
  void relu(const std::string& name) { add({{"name", name}, {"type", "relu"}}); }
  void tanh(const std::string& name) { add({{"name", name}, {"type", "tanh"}}); }
  void lrn(const std::string& name) {
    add({{"name", name}, {"type", "lrn"}, {"size", 5}, {"alpha", 1e-4}, {"beta", 0.75}, {"k", 1.0}});
  }
  void max_pool(const std::string& name, int k, int s, int p = 0, bool ceil = false) {
    ojson l = {{"name", name}, {"type", "max_pool"}, {"kernel", k}, {"stride", s}, {"padding", p}};
    if (ceil) l["ceil_mode"] = true;
    add(std::move(l));
    cur_ = {cur_.c, output_size(cur_.h, k, s, p, ceil), output_size(cur_.w, k, s, p, ceil)};
  }
  void flatten(const std::string& name) {
    add({{"name", name}, {"type", "flatten"}});
    cur_ = {static_cast<int>(cur_.size()), 1, 1};
  }
  void fc(const std::string& name, int outputs) {
    ojson l = {{"name", name}, {"type", "fully_connected"}, {"outputs", outputs}};
    params(l, name, {outputs, cur_.c}, "OI");
    cur_ = {outputs, 1, 1};
  }
  void softmax(const std::string& name) { add({{"name", name}, {"type", "softmax"}}); }
  void note(const std::string& source) { j_["provenance"]["shapes"] = source; }

  ZooModel done() { return {{std::move(j_), std::move(tensors_)}, params_}; }

 private:
  ojson j_;
  Shape cur_;
  uint64_t seed_;
  bool weights_;
  std::vector<NamedArray> tensors_;
  int64_t params_ = 0;
  int tensor_index_ = 0;

  void add(ojson l) { j_["layers"].push_back(std::move(l)); }

  // He-normal weights (standard deviation sqrt(2 / fan-in)) and small biases; each tensor from its own stream, so a
  // layer's values do not depend on the layers before it. Box-Muller on the raw engine (no library distribution).
  std::vector<float> draw(int64_t n, double stddev) {
    std::mt19937_64 rng(seed_ * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(++tensor_index_));
    auto uniform = [&] { return (static_cast<double>(rng() >> 11) + 0.5) * (1.0 / 9007199254740992.0); };
    std::vector<float> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; i += 2) {
      const double r = std::sqrt(-2.0 * std::log(uniform())) * stddev, t = 6.283185307179586 * uniform();
      v[static_cast<size_t>(i)] = static_cast<float>(r * std::cos(t));
      if (i + 1 < n) v[static_cast<size_t>(i) + 1] = static_cast<float>(r * std::sin(t));
    }
    return v;
  }

  void params(ojson& l, const std::string& name, std::vector<int64_t> shape, const char* layout, bool bias = true) {
    const int64_t n = shape_size(shape), outputs = shape[0], fan_in = n / outputs;
    params_ += n + (bias ? outputs : 0);
    l["weight"] = {{"file", name + "_weight.npy"}, {"layout", layout}};
    if (bias) l["bias"] = {{"file", name + "_bias.npy"}};
    if (weights_) {
      tensors_.push_back({name + "_weight", Array::from_float(shape, draw(n, std::sqrt(2.0 / static_cast<double>(fan_in))))});
      if (bias) tensors_.push_back({name + "_bias", Array::from_float({outputs}, draw(outputs, 0.01))});
    }
    add(std::move(l));
  }
};

void alexnet_bvlc(Builder& b) {
  b.note("BVLC AlexNet (Caffe's bvlc_reference deploy.prototxt; Krizhevsky et al. 2012, two groups)");
  b.conv("conv1", 96, 11, 4, 0), b.relu("relu1"), b.lrn("norm1"), b.max_pool("pool1", 3, 2);
  b.conv("conv2", 256, 5, 1, 2, 2), b.relu("relu2"), b.lrn("norm2"), b.max_pool("pool2", 3, 2);
  b.conv("conv3", 384, 3, 1, 1), b.relu("relu3"), b.conv("conv4", 384, 3, 1, 1, 2), b.relu("relu4");
  b.conv("conv5", 256, 3, 1, 1, 2), b.relu("relu5"), b.max_pool("pool5", 3, 2), b.flatten("flatten");
  b.fc("fc6", 4096), b.relu("relu6"), b.fc("fc7", 4096), b.relu("relu7"), b.fc("fc8", 1000), b.softmax("prob");
}

// torchvision.models.alexnet (Krizhevsky's "one weird trick" variant): 64-192-384-256-256 filters, no LRN, no groups.
// Its AdaptiveAvgPool2d(6) is the identity at 224 x 224 and is left out.
void alexnet_torchvision(Builder& b) {
  b.note("torchvision.models.alexnet (features.0-12, classifier.1-6); AdaptiveAvgPool2d(6) is the identity at 224x224");
  b.conv("features.0", 64, 11, 4, 2), b.relu("features.1"), b.max_pool("features.2", 3, 2);
  b.conv("features.3", 192, 5, 1, 2), b.relu("features.4"), b.max_pool("features.5", 3, 2);
  b.conv("features.6", 384, 3, 1, 1), b.relu("features.7"), b.conv("features.8", 256, 3, 1, 1), b.relu("features.9");
  b.conv("features.10", 256, 3, 1, 1), b.relu("features.11"), b.max_pool("features.12", 3, 2), b.flatten("flatten");
  b.fc("classifier.1", 4096), b.relu("classifier.2"), b.fc("classifier.4", 4096), b.relu("classifier.5");
  b.fc("classifier.6", 1000), b.softmax("softmax");
}

// Zeiler & Fergus 2013, figure 3: 7x7 stride-2 conv1, 5x5 stride-2 conv2, 110-55-26-13-13-13-6 feature maps (Caffe's
// rounding-up pools; conv1 padded by 1).
void zfnet(Builder& b) {
  b.note("ZFNet (Zeiler & Fergus, Visualizing and Understanding Convolutional Networks, 2013, figure 3)");
  b.conv("conv1", 96, 7, 2, 1), b.relu("relu1"), b.max_pool("pool1", 3, 2, 0, true), b.lrn("norm1");
  b.conv("conv2", 256, 5, 2, 0), b.relu("relu2"), b.max_pool("pool2", 3, 2, 0, true), b.lrn("norm2");
  b.conv("conv3", 384, 3, 1, 1), b.relu("relu3"), b.conv("conv4", 384, 3, 1, 1), b.relu("relu4");
  b.conv("conv5", 256, 3, 1, 1), b.relu("relu5"), b.max_pool("pool5", 3, 2, 0, true), b.flatten("flatten");
  b.fc("fc6", 4096), b.relu("relu6"), b.fc("fc7", 4096), b.relu("relu7"), b.fc("fc8", 1000), b.softmax("prob");
}

// Simonyan & Zisserman 2014 (torchvision's vgg11 / vgg16 / vgg19 without batch norm): blocks of 3x3 convolutions, 2x2 pools;
// AdaptiveAvgPool2d(7) is the identity at 224 x 224.
void vgg(Builder& b, const std::vector<std::vector<int>>& blocks, const char* config) {
  b.note(std::string("VGG configuration ") + config + " (Simonyan & Zisserman 2014; torchvision.models layout); "
         "AdaptiveAvgPool2d(7) is the identity at 224x224");
  for (size_t i = 0; i < blocks.size(); ++i) {
    const std::string blk = std::to_string(i + 1);
    for (size_t j = 0; j < blocks[i].size(); ++j) {
      const std::string id = blk + "_" + std::to_string(j + 1);
      b.conv("conv" + id, blocks[i][j], 3, 1, 1), b.relu("relu" + id);
    }
    b.max_pool("pool" + blk, 2, 2);
  }
  b.flatten("flatten");
  b.fc("fc6", 4096), b.relu("relu6"), b.fc("fc7", 4096), b.relu("relu7"), b.fc("fc8", 1000), b.softmax("prob");
}

// The ECE 408 (spring 2019) network as data/models/ece408 holds it, with its layer names.
void ece408(Builder& b) {
  b.note("the ECE 408 spring 2019 network (data/models/ece408: MXNet symbol ece408-symbol.json)");
  b.conv("new0", 6, 5, 1, 0, 1, false), b.tanh("activation0"), b.max_pool("pooling0", 2, 2);
  b.conv("new1", 16, 5, 1, 0, 1, false), b.flatten("flatten0"), b.fc("fullyconnected0", 140), b.tanh("activation1");
  b.fc("fullyconnected1", 10), b.softmax("softmax");
}

struct Net {
  ZooEntry entry;
  Shape input;
  std::function<void(Builder&)> build;
};

const std::vector<Net>& nets() {
  static const std::vector<Net> n = {
      {{"alexnet", "BVLC AlexNet, 3x227x227, two groups, LRN"}, {3, 227, 227}, alexnet_bvlc},
      {{"alexnet-torchvision", "torchvision's AlexNet, 3x224x224"}, {3, 224, 224}, alexnet_torchvision},
      {{"zfnet", "ZFNet (Zeiler & Fergus 2013), 3x224x224"}, {3, 224, 224}, zfnet},
      {{"vgg11", "VGG-11 (configuration A), 3x224x224"}, {3, 224, 224},
       [](Builder& b) { vgg(b, {{64}, {128}, {256, 256}, {512, 512}, {512, 512}}, "A (VGG-11)"); }},
      {{"vgg16", "VGG-16 (configuration D), 3x224x224"}, {3, 224, 224},
       [](Builder& b) { vgg(b, {{64, 64}, {128, 128}, {256, 256, 256}, {512, 512, 512}, {512, 512, 512}}, "D (VGG-16)"); }},
      {{"vgg19", "VGG-19 (configuration E), 3x224x224"}, {3, 224, 224},
       [](Builder& b) {
         vgg(b, {{64, 64}, {128, 128}, {256, 256, 256, 256}, {512, 512, 512, 512}, {512, 512, 512, 512}}, "E (VGG-19)");
       }},
      {{"ece408", "the ECE 408 network, 1x48x48"}, {1, 48, 48}, ece408},
  };
  return n;
}

}  // namespace

const std::vector<ZooEntry>& zoo() {
  static const std::vector<ZooEntry> z = [] {
    std::vector<ZooEntry> v;
    for (const Net& n : nets()) v.push_back(n.entry);
    return v;
  }();
  return z;
}

std::string zoo_names() {
  std::string s;
  for (const ZooEntry& e : zoo()) s += (s.empty() ? "" : ", ") + std::string(e.name);
  return s;
}

ZooModel synthesize_zoo(const std::string& name, uint64_t seed, bool weights) {
  for (const Net& n : nets())
    if (name == n.entry.name) {
      Builder b(name, n.input, seed, weights);
      n.build(b);
      return b.done();
    }
  usage_fail("--model", "'" + name.substr(0, 60) + "' is not in the zoo (" + zoo_names() + ")");
}

}  // namespace bs
