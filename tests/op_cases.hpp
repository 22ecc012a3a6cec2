// The table of single-layer test cases that every backend is checked on against cpu-ref (the ggml
// test-backend-ops habit): nested loops over kernel size, stride, padding, groups and batch, plus the
// ECE 408 and AlexNet layer shapes. Inputs and weights are drawn fresh for every run.
#pragma once
#include <array>
#include <random>
#include <string>
#include <vector>

#include "kernels/exec/backend.hpp"
#include "kernels/model/model.hpp"
#include "test_util.hpp"

namespace bs::test {

struct OpCase {
  std::string label;
  Shape input;
  int batch = 1;
  LayerOp op;
};

// gtest prints parameters; show the label rather than raw bytes.
inline void PrintTo(const OpCase& c, std::ostream* os) { *os << c.label; }

inline std::string conv_label(Shape s, int n, const ConvParams& c) {
  return "conv in" + to_string(s) + " n" + std::to_string(n) + " m" + std::to_string(c.filters) + " k" +
         std::to_string(c.kh) + "x" + std::to_string(c.kw) + " s" + std::to_string(c.sh) + " p" + std::to_string(c.ph) +
         (c.asymmetric() ? "," + std::to_string(c.pw) + "," + std::to_string(c.pad_bottom()) + "," + std::to_string(c.pad_right()) : "") +
         " g" + std::to_string(c.groups) + (c.bias.empty() ? "" : " bias") +
         (c.dilated() ? " d" + std::to_string(c.dh) + "x" + std::to_string(c.dw) : "");
}

inline ConvParams conv_params(int m, int k, int s, int p, int g, bool bias) {
  ConvParams c;
  c.filters = m; c.kh = c.kw = k; c.sh = c.sw = s; c.ph = c.pw = p; c.groups = g;
  if (bias) c.bias.resize(static_cast<size_t>(m));  // filled with random values per run
  return c;
}

// `big` adds the full-size ECE 408 and AlexNet layers (slow on cpu-ref; meant for GPU backends).
inline std::vector<OpCase> op_cases(bool big) {
  std::vector<OpCase> cases;
  for (int k : {1, 3, 5, 11})
    for (int s : {1, 2, 4})
      for (int p : {0, 1, 2})
        for (int g : {1, 2})
          for (int n : {1, 3}) {
            if (p >= k) continue;
            Shape in{4, 13 + (k == 11 ? 4 : 0), 15};  // odd sizes that divide no tile
            ConvParams c = conv_params(6, k, s, p, g, (k + s + n) % 2 == 0);
            cases.push_back({conv_label(in, n, c), in, n, c});
          }
  for (int n : {1, 2}) {  // rectangular kernels, stride and padding per axis
    ConvParams c = conv_params(5, 3, 1, 0, 1, true);
    c.kw = 5; c.sw = 2; c.pw = 2;
    cases.push_back({"conv rect 3x5 s1x2 p0x2 n" + std::to_string(n), {3, 9, 11}, n, c});
  }
  for (int n : {1, 3}) {  // the filter counts the cpu backend's direct path is compiled for (6, 16)
    ConvParams c = conv_params(16, 5, 1, 0, 1, n == 3);
    cases.push_back({conv_label({6, 13, 21}, n, c), {6, 13, 21}, n, c});
  }
  for (PoolKind kind : {PoolKind::max, PoolKind::avg})
    for (int k : {2, 3})
      for (int s : {1, 2})
        for (int p : {0, 1})
          for (bool ceil : {false, true}) {
            if (p >= k) continue;
            PoolParams pp;
            pp.kind = kind; pp.kh = pp.kw = k; pp.sh = pp.sw = s; pp.ph = pp.pw = p; pp.ceil_mode = ceil;
            cases.push_back({std::string(kind == PoolKind::max ? "maxpool" : "avgpool") + " k" + std::to_string(k) +
                                 " s" + std::to_string(s) + " p" + std::to_string(p) + (ceil ? " ceil" : ""),
                             {3, 11, 12}, 2, pp});
          }
  for (auto [dh, dw, s, p, g] : {std::array{2, 2, 1, 2, 1}, std::array{1, 3, 2, 1, 2}, std::array{3, 2, 1, 0, 1}}) {  // dilation
    ConvParams c = conv_params(6, 3, s, p, g, true);
    c.dh = dh; c.dw = dw;
    cases.push_back({conv_label({4, 13, 15}, 2, c), {4, 13, 15}, 2, c});
  }
  // Asymmetric padding (ONNX pads [top, left, bottom, right]; TensorFlow's SAME): the end padding only one side, the
  // other, or larger than the start; dilated and strided, with groups.
  for (auto [t, l, b, r] : {std::array{0, 0, 1, 1}, std::array{1, 2, 0, 0}, std::array{2, 0, 1, 3}})
    for (int s : {1, 2})
      for (int g : {1, 2}) {
        ConvParams c = conv_params(6, 3, s, t, g, s == 1);
        c.pw = l; c.pb = b; c.pr = r;
        if (g == 2 && s == 2) c.dh = 2;
        cases.push_back({conv_label({4, 13, 15}, 2, c), {4, 13, 15}, 2, c});
      }
  // Odd channel counts per group (16-bit: v37's, which the GEMM engine cannot pair): depthwise 3x3 and 1x1 (the
  // per-channel scale and shift import-onnx writes for a BatchNormalization alone), and 3 channels per group.
  for (auto [c, m, k, g, d] : {std::array{4, 4, 3, 4, 1}, std::array{5, 5, 1, 5, 1}, std::array{6, 4, 3, 2, 2}}) {
    ConvParams cp = conv_params(m, k, 1, k / 2, g, true);
    cp.dh = cp.dw = d;
    cp.pb = k / 2 * d; cp.pr = 0;
    const Shape in{c, 11, 12};
    cases.push_back({conv_label(in, 2, cp), in, 2, cp});
  }
  for (PoolKind kind : {PoolKind::max, PoolKind::avg})
    for (auto [t, l, b, r] : {std::array{1, 0, 0, 1}, std::array{0, 1, 2, 0}})
      for (bool ceil : {false, true})
        for (bool count_pad : {true, false}) {
          if (kind == PoolKind::max && !count_pad) continue;
          PoolParams pp;
          pp.kind = kind; pp.kh = pp.kw = 3; pp.sh = pp.sw = 2; pp.ph = t; pp.pw = l; pp.pb = b; pp.pr = r;
          pp.ceil_mode = ceil; pp.count_include_pad = count_pad;
          cases.push_back({std::string(kind == PoolKind::max ? "maxpool" : "avgpool") + " k3 s2 pads " + std::to_string(t) + "," +
                               std::to_string(l) + "," + std::to_string(b) + "," + std::to_string(r) + (ceil ? " ceil" : "") +
                               (count_pad ? "" : " excluding padding"),
                           {4, 11, 12}, 2, pp});
        }
  for (PoolKind kind : {PoolKind::max, PoolKind::avg}) {  // ceil mode on an even channel count (the cudnn backend's own kernel)
    PoolParams pp;
    pp.kind = kind; pp.kh = pp.kw = 3; pp.sh = pp.sw = 2; pp.ceil_mode = true;
    cases.push_back({std::string(kind == PoolKind::max ? "maxpool" : "avgpool") + " k3 s2 ceil, 4 channels", {4, 12, 10}, 3, pp});
  }
  for (PoolKind kind : {PoolKind::max, PoolKind::avg})  // 16 channels: the 16-bit path's 16-byte runs, windows clipped
    for (bool count_pad : {true, false}) {
      PoolParams pp;
      pp.kind = kind; pp.kh = pp.kw = 3; pp.sh = pp.sw = 2; pp.ph = 1; pp.pb = 0; pp.pr = 1; pp.ceil_mode = true;
      pp.count_include_pad = count_pad;
      cases.push_back({std::string(kind == PoolKind::max ? "maxpool" : "avgpool") + " k3 s2 pads 1,0,0,1 ceil, 16 channels" +
                           (count_pad ? "" : " excluding padding"),
                       {16, 11, 12}, 3, pp});
    }
  {
    PoolParams pp;  // VGG's 2x2 stride-2 max pool over 64 channels
    pp.kind = PoolKind::max; pp.kh = pp.kw = 2; pp.sh = pp.sw = 2;
    cases.push_back({"maxpool k2 s2, 64 channels (VGG)", {64, 14, 13}, 2, pp});
  }
  for (int k : {2, 3})  // average with the padding left out of the count (PyTorch's default)
    for (bool ceil : {false, true}) {
      PoolParams pp;
      pp.kind = PoolKind::avg; pp.kh = pp.kw = k; pp.sh = pp.sw = 2; pp.ph = pp.pw = 1; pp.ceil_mode = ceil;
      pp.count_include_pad = false;
      cases.push_back({"avgpool k" + std::to_string(k) + " s2 p1 excluding padding" + (ceil ? " ceil" : ""), {3, 11, 12}, 2, pp});
    }
  for (int size : {1, 3, 5}) {
    LrnParams l; l.size = size; l.alpha = 1e-2f; l.beta = 0.75f; l.k = 2.0f;
    cases.push_back({"lrn size " + std::to_string(size), {7, 5, 6}, 2, l});
  }
  for (Act a : {Act::relu, Act::tanh, Act::sigmoid})
    cases.push_back({"act " + std::to_string(static_cast<int>(a)), {3, 7, 9}, 2, ActParams{a}});
  for (Shape s : {Shape{3, 7, 9}, Shape{4, 7, 9}})  // leaky ReLU, odd and even channels (the cudnn backend's kernel: even)
    cases.push_back({"leaky_relu 0.1 " + to_string(s), s, 2, ActParams{Act::leaky_relu, 0.1f}});
  for (bool bias : {false, true})
    for (int n : {1, 5, 11}) {  // 11: fc v14 in two passes
      FcParams f; f.outputs = 37;
      if (bias) f.bias.resize(37);
      cases.push_back({"fc 123->37 n" + std::to_string(n) + (bias ? " bias" : ""), {123, 1, 1}, n, f});
    }
  cases.push_back({"softmax 10", {10, 1, 1}, 4, SoftmaxParams{}});
  cases.push_back({"softmax 1000", {1000, 1, 1}, 2, SoftmaxParams{}});
  cases.push_back({"flatten", {3, 4, 5}, 2, FlattenParams{}});
  if (big) {
    // ECE 408 layers at the course's batch shape (smaller batch), every AlexNet (BVLC) layer, then for the GEMM
    // engine (conv v12-v14, fc v5-v8): partial M tiles (160 = 128 + 32), K tails (300 -> 320), groups of 50
    // filters, split-K at batch 1 (K = 2304), a 1x1 kernel, an odd conv1-like shape; fc batches past one 128-row
    // tile, inputs that are not a multiple of 4 (the streaming path's scalar loop), more images than one streaming
    // pass takes.
    struct Conv {
      const char* label;
      Shape in;
      int n, m, k, s, p, g;
      bool bias;
    };
    for (const Conv& c : {Conv{"ece408 conv1", {1, 48, 48}, 64, 6, 5, 1, 0, 1, false},
                          Conv{"ece408 conv2", {6, 22, 22}, 64, 16, 5, 1, 0, 1, false},
                          Conv{"ece408 conv2 n7 bias", {6, 22, 22}, 7, 16, 5, 1, 0, 1, true},
                          Conv{"alexnet conv1", {3, 227, 227}, 2, 96, 11, 4, 0, 1, true},
                          Conv{"alexnet conv2", {96, 27, 27}, 2, 256, 5, 1, 2, 2, true},
                          Conv{"alexnet conv3", {256, 13, 13}, 2, 384, 3, 1, 1, 1, true},
                          Conv{"alexnet conv4", {384, 13, 13}, 2, 384, 3, 1, 1, 2, true},
                          Conv{"alexnet conv5", {384, 13, 13}, 2, 256, 3, 1, 1, 2, true},
                          Conv{"engine conv m160 k3 p1", {64, 30, 29}, 5, 160, 3, 1, 1, 1, true},
                          Conv{"engine conv m200 k5 s2 p2 g4", {48, 20, 21}, 3, 200, 5, 2, 2, 4, true},
                          Conv{"engine conv m96 k11 s4 odd", {3, 67, 61}, 2, 96, 11, 4, 0, 1, false},
                          Conv{"engine conv m384 k3 p1 n1 splitk", {256, 13, 13}, 1, 384, 3, 1, 1, 1, true},
                          Conv{"engine conv m40 k1", {32, 9, 9}, 3, 40, 1, 1, 0, 1, true},
                          // the 16-bit wgmma versions (8 channels per 16-byte copy): an odd input count (its pad
                          // channel read as a k of weight zero) and an odd filter count (the output's pad channel),
                          // strided; and 16 channels per group
                          Conv{"engine conv m75 k3 s2 p1 c15", {15, 19, 17}, 3, 75, 3, 2, 1, 1, true},
                          Conv{"engine conv m48 k3 p1 g2 c32", {32, 11, 12}, 2, 48, 3, 1, 1, 2, false}})
      cases.push_back({c.label, c.in, c.n, conv_params(c.m, c.k, c.s, c.p, c.g, c.bias)});
    {  // dilated and asymmetrically padded over 16 channels (the wgmma versions' k table)
      ConvParams c = conv_params(24, 3, 1, 2, 1, true);
      c.dh = 2; c.dw = 3; c.pw = 1; c.pb = 3; c.pr = 4;
      cases.push_back({conv_label({16, 13, 15}, 2, c), {16, 13, 15}, 2, c});
    }
    auto pool = [](int k, int s) {
      PoolParams p;
      p.kh = p.kw = k; p.sh = p.sw = s;
      return p;
    };
    cases.push_back({"ece408 pool", {6, 44, 44}, 64, pool(2, 2)});
    cases.push_back({"alexnet pool1", {96, 55, 55}, 2, pool(3, 2)});
    cases.push_back({"alexnet pool5", {256, 13, 13}, 2, pool(3, 2)});
    LrnParams l; l.size = 5; l.alpha = 1e-4f; l.beta = 0.75f; l.k = 1.0f;
    cases.push_back({"alexnet norm1", {96, 55, 55}, 2, l});
    auto fc = [](int outputs, bool bias) {
      FcParams f;
      f.outputs = outputs;
      if (bias) f.bias.resize(static_cast<size_t>(outputs));
      return f;
    };
    cases.push_back({"ece408 fc1", {5184, 1, 1}, 64, fc(140, true)});
    cases.push_back({"alexnet fc6", {9216, 1, 1}, 3, fc(4096, true)});
    cases.push_back({"alexnet fc8", {4096, 1, 1}, 3, fc(1000, true)});  // fc v17 / v20: 125 tiles, split in clusters
    // fc v17 / v20 split in clusters (fewer tiles of 8 outputs than multiprocessors, K long enough): v17 on rows that
    // are not 16-byte aligned (K = 2,051: 2 blocks; 4,100: 4) with a partial tile of outputs, v20 in 8 blocks (4,100)
    cases.push_back({"stream fc 2051->37 n16", {2051, 1, 1}, 16, fc(37, true)});
    cases.push_back({"stream fc 4100->37 n5", {4100, 1, 1}, 5, fc(37, false)});
    // v17 split 2 ways with more than 4 chunks a warp (65 chunks of 64 values over the cluster's 16 warps): the two-stage
    // loop; AlexNet's fc8 above (64 chunks) and the two cases before load all of a warp's chunks first
    cases.push_back({"stream fc 4160->1000 n2", {4160, 1, 1}, 2, fc(1000, true)});
    cases.push_back({"stream fc 304->2113 n3", {304, 1, 1}, 3, fc(2113, true)});  // fc v15: 4 rows a turn, a last turn of 1
    // one image, where v14 and v15 may load a batch of a thread's chunks before their products (fc6: v14's loop, v15 4
    // rows a batch with the image's chunks preloaded; 4,096 -> 2,113: v14 one batch of 4, v15 batches of 2 chunks of 4
    // rows and a last turn of 1; 2,051: rows not 16-byte aligned, the value-by-value input path)
    cases.push_back({"alexnet fc6 n1", {9216, 1, 1}, 1, fc(4096, true)});
    cases.push_back({"stream fc 4096->2113 n1", {4096, 1, 1}, 1, fc(2113, true)});
    cases.push_back({"stream fc 2051->37 n1", {2051, 1, 1}, 1, fc(37, false)});
    cases.push_back({"engine fc 2304->1000 n40", {2304, 1, 1}, 40, fc(1000, true)});
    cases.push_back({"engine fc 123->37 n130", {123, 1, 1}, 130, fc(37, false)});
    cases.push_back({"engine fc 1001->19 n17", {1001, 1, 1}, 17, fc(19, true)});
    // fc v16 (a 1x1 convolution on wgmma over the input as stored): a spatial input (the NHWC flattening against the
    // model's NCHW one), a partial row tile, an odd output count (the output's pad channel), a K of 2,040 (not a
    // multiple of 64); and a batch past 256 with split-K's short grid
    cases.push_back({"engine fc 40x3x3->301 n150", {40, 3, 3}, 150, fc(301, true)});
    cases.push_back({"engine fc 2040->96 n300", {2040, 1, 1}, 300, fc(96, false)});
    // ... on the TMA versions (a multiple of 64 inputs, from 128 images): v70 (the cluster twin, 200 outputs at 192
    // images: 2 x 2 tiles) and v66 (1,024 outputs at 2,200 images: 18 x 8 tiles of 128 x 128)
    cases.push_back({"engine fc 1024->200 n192", {1024, 1, 1}, 192, fc(200, true)});
    cases.push_back({"engine fc 512->1024 n2200", {512, 1, 1}, 2200, fc(1024, false)});
  }
  return cases;
}

// Builds a one-layer model with fresh random weights for a case.
inline Model single_layer_model(const OpCase& c, std::mt19937& rng) {
  Model m;
  m.name = c.label;
  m.input = c.input;
  Layer l;
  l.name = "layer";
  l.op = c.op;
  m.layers.push_back(l);
  infer_shapes(m, c.label);
  Layer& L = m.layers[0];
  if (auto* cp = std::get_if<ConvParams>(&L.op)) {
    cp->weight = random_vector(static_cast<size_t>(cp->filters) * (L.in.c / cp->groups) * cp->kh * cp->kw, rng);
    if (!cp->bias.empty()) cp->bias = random_vector(cp->bias.size(), rng);
  } else if (auto* f = std::get_if<FcParams>(&L.op)) {
    f->weight = random_vector(static_cast<size_t>(f->outputs) * L.in.size(), rng);
    if (!f->bias.empty()) f->bias = random_vector(f->bias.size(), rng);
  }
  return m;
}

// Runs the model's layers on `backend`, with the output buffer poisoned with NaN and a guard zone after
// it; reports unwritten elements (NaN left) and writes past the end.
struct GuardedRun {
  std::vector<float> out;
  bool guard_intact = true;
};
inline GuardedRun guarded_forward(Backend& b, const Model& m, const std::vector<float>& in, int n) {
  const int64_t out_size = m.output().size() * n;
  const size_t guard = 1024;
  std::vector<float> buf(static_cast<size_t>(out_size) + guard, std::nanf(""));
  for (size_t i = 0; i < guard; ++i) buf[out_size + i] = 12345.0f + static_cast<float>(i);
  b.forward(in.data(), n, m.layers.size(), buf.data(), nullptr);
  GuardedRun r;
  for (size_t i = 0; i < guard; ++i) r.guard_intact &= buf[out_size + i] == 12345.0f + static_cast<float>(i);
  r.out.assign(buf.begin(), buf.begin() + out_size);
  return r;
}

}  // namespace bs::test
