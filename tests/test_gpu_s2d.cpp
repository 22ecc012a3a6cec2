// Conv v38 s2d-half (conv_s2d_half.cu): a convolution over fewer than 8 channels run as a stride-1 convolution over a
// space-to-depth copy of its input, padded to whole 8-channel runs. The op-case table runs it as a first layer (reading
// the FP32 input itself); here: after another layer (reading the 16-bit NHWC tensor), with padding and strides 1 to 4,
// against cpu-ref; auto taking it where v20's tiles fill the GPU (at batch 1 v21 stays: the rewrite's pass cost more
// than it saved); and --input-precision's 16-bit input (test_gpu_transfers.cpp). Without a GPU each test skips.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpu_util.hpp"
#include "test_util.hpp"

using namespace bs;
using bs::test::gpu_missing;

namespace {

Layer conv(const std::string& name, int filters, int k, int s, int p, std::mt19937& rng, int in_c) {
  ConvParams c = test::conv_params(filters, k, s, p, 1, true);
  c.weight = test::random_vector(static_cast<size_t>(filters) * in_c * k * k, rng);
  const float scale = std::sqrt(3.0f / static_cast<float>(in_c * k * k));
  for (float& w : c.weight) w *= scale;
  c.bias = test::random_vector(static_cast<size_t>(filters), rng);
  return {name, c, {}, {}};
}
Layer relu(const std::string& name) { return {name, ActParams{Act::relu}, {}, {}}; }

Model model(const std::string& name, Shape in, std::vector<Layer> layers) {
  Model m;
  m.name = name;
  m.input = in;
  m.layers = std::move(layers);
  infer_shapes(m, name);
  return m;
}

}  // namespace

TEST(GpuS2d, FirstAndLaterLayersMatchCpuRefAndAutoTakesItAtLargeBatches) {
  SKIP_WITHOUT_GPU();
  uint32_t seed;
  std::mt19937 rng = test::fresh_rng(&seed);
  struct Case { Model m; size_t s2d_layer; const char* conv; std::vector<int> batches; };
  const std::vector<Case> cases = {
      // AlexNet's conv1 shape, smaller: 11x11 stride 4 over 3 channels (48 after the rewrite, no pad channel), padded
      {model("first", {3, 45, 43}, {conv("c1", 24, 11, 4, 2, rng, 3), relu("r1")}), 0, "38", {1, 5}},
      // after a stride-1 layer of 6 channels: stride 2 over 6 (24 after the rewrite), a 5x5 kernel (3x3 taps of 2x2);
      // auto, at a batch where v20's tiles fill the GPU twice (110 pixels an image: 320 images are 275 blocks of 128)
      {model("later", {3, 23, 21}, {conv("c1", 6, 3, 1, 1, rng, 3), relu("r1"), conv("c2", 16, 5, 2, 1, rng, 6), relu("r2")}), 2, "auto",
       {320}},
      // a wide row: 72 block columns of 24 words (1,728) are more than one round of the repack's 256 threads x 6 words,
      // so a thread's second round is partial
      {model("wide", {3, 9, 283}, {conv("c1", 8, 11, 4, 2, rng, 3), relu("r1")}), 0, "38", {1, 3}},
      // 2 channels at stride 4 (32 after the rewrite), a kernel not a multiple of the stride, no activation after it
      {model("two", {2, 30, 30}, {conv("c1", 8, 6, 4, 0, rng, 2)}), 0, "38", {1, 5}},
      // 3 channels at stride 2: 12 is not a multiple of 8, so the rewrite keeps the pad channel (16)
      {model("pad", {3, 20, 21}, {conv("c1", 10, 4, 2, 1, rng, 3), relu("r1")}), 0, "38", {1, 5}},
      // VGG's conv1_1, smaller: 3x3 stride 1 over 3 channels, padded; the rewrite is the padding, to 8 channels (K = 72)
      {model("vgg", {3, 18, 20}, {conv("c1", 64, 3, 1, 1, rng, 3), relu("r1")}), 0, "38", {1, 5}},
      // 1 channel, 5x5 stride 1 (ECE 408's conv1 shape, smaller): 8 channels, 7 of them zero
      {model("one", {1, 17, 15}, {conv("c1", 8, 5, 1, 2, rng, 1)}), 0, "38", {1, 5}},
      // stride 3 over 3 channels: neither 27 nor 36 is a multiple of 8, so 8 channels per pixel of the block (72)
      {model("s3", {3, 25, 22}, {conv("c1", 12, 7, 3, 2, rng, 3), relu("r1")}), 0, "38", {1, 5}},
      // stride 1 after a layer of 6 channels (the stored tensor has no pad channel: 6 of 8 read, 2 zero); auto, at a
      // batch where v20's tiles fill the GPU twice (483 pixels an image: 80 images are 302 blocks of 128)
      {model("later1", {3, 23, 21}, {conv("c1", 6, 3, 1, 1, rng, 3), relu("r1"), conv("c2", 64, 3, 1, 1, rng, 6), relu("r2")}), 2,
       "auto", {80}},
  };
  for (const Case& c : cases)
    for (int n : c.batches)
      for (const char* p : {"fp16", "bf16"}) {
        std::vector<float> in = test::random_vector(static_cast<size_t>(c.m.input.size()) * n, rng);
        auto gpu = test::open_backend(c.m, "cuda", test::guarded_options(c.conv, "", p));
        const double err = test::rel_l2(test::guarded_forward(*gpu, c.m, in, n).out, test::cpu_ref_output(c.m, in, n));
        // after the run: the plan describes the batch it last ran
        EXPECT_NE(gpu->describe(c.s2d_layer).find("v38 s2d-half"), std::string::npos) << c.m.name << ": " << gpu->describe(c.s2d_layer);
        EXPECT_LE(err, precision_tolerance(parse_enum<Precision>(p, "--precision"))) << c.m.name << " " << p << " batch " << n << " seed " << seed;
        EXPECT_GT(err, 1e-5) << c.m.name << " " << p << ": a 16-bit run that agrees to FP32 rounding did not round";
      }
}

// v38 refuses what it cannot rewrite, each with its reason: groups, a stride past 4, 8 or more channels, unequal
// strides, a kernel smaller than its stride.
TEST(GpuS2d, RefusesWhatItCannotRewrite) {
  SKIP_WITHOUT_GPU();
  const Impl& v38 = registry().version(LayerKind::conv, 38, "--conv-variant");
  std::mt19937 rng(1);
  const Model grouped = model("g", {4, 20, 20}, {{"c", test::conv_params(8, 5, 2, 0, 2, false), {}, {}}});
  const Model stride5 = model("s5", {3, 20, 20}, {conv("c", 8, 5, 5, 0, rng, 3)});
  const Model small = model("k", {3, 20, 20}, {conv("c", 8, 2, 3, 0, rng, 3)});
  const Model wide = model("w", {8, 20, 20}, {conv("c", 8, 5, 2, 0, rng, 8)});
  ConvParams uneven = test::conv_params(8, 5, 2, 0, 1, false);
  uneven.sw = 3;
  const Model unequal = model("u", {3, 20, 20}, {{"c", uneven, {}, {}}});
  for (const Model* m : {&grouped, &stride5, &wide, &unequal, &small}) {
    const Support s = v38.check(m->layers[0]);
    EXPECT_FALSE(s.ok) << m->name;
    EXPECT_NE(s.reason.find("v38"), std::string::npos) << s.reason;
  }
}

// The repack of the model's FP32 NCHW input (v38 as the first layer: s2d_warp_kernel at strides 4, 2 and 1 over 3
// channels) gives the words of the repack of a 16-bit NHWC tensor (s2d_kernel after another layer) to the bit: the same
// layer on inputs exact in 16 bits (multiples of 1/64 in [-4, 4]), run first and after a 1x1 convolution by the identity
// (x x 1 plus zeros in FP32: x exactly), the outputs equal. Stride-4 shapes: AlexNet's conv1 smaller (padded), a kernel a
// multiple of the stride with odd padding, one that is not with none, and a row of 72 block columns (1,728 words: past
// one round of s2d_kernel's 256 threads x 6 words), at 1, 3 and 40 images. An fp16 input beyond 65504 is reported at the
// first layer. It guards every form of the first layer's repack (experiments/results/h200-b16/ measured four).
TEST(GpuS2d, FirstLayerRepackGivesTheLaterLayersWordsToTheBit) {
  SKIP_WITHOUT_GPU();
  uint32_t seed;
  std::mt19937 rng = test::fresh_rng(&seed);
  struct Case { Shape in; int filters, k, s, p; };
  // stride 4: padded, a kernel a multiple of the stride, one that is not, a 72-column row; stride 2 (2 x 2 x 4 channels
  // in T: the pad channel) and 1 (1 x 1 x 8) over 3 channels
  const Case cases[] = {{{3, 45, 43}, 24, 11, 4, 2}, {{3, 30, 33}, 16, 8, 4, 3}, {{3, 17, 19}, 8, 5, 4, 0}, {{3, 9, 283}, 8, 11, 4, 2},
                        {{3, 20, 21}, 10, 4, 2, 1}, {{3, 18, 20}, 16, 3, 1, 1}};
  for (const Case& c : cases) {
    const Layer layer = conv("c", c.filters, c.k, c.s, c.p, rng, 3);
    ConvParams id = test::conv_params(3, 1, 1, 0, 1, true);
    id.weight = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    id.bias = {0, 0, 0};
    const Model first = model("first", c.in, {layer, relu("r")});
    const Model later = model("later", c.in, {{"id", id, {}, {}}, layer, relu("r")});
    // the 72-column row also at 40 images: 1,440 segments, blocks of 8 warps (at 1 and 3 images they take blocks of 2)
    std::vector<int> batches = {1, 3};
    if (c.in.w == 283) batches.push_back(40);
    for (const char* p : {"fp16", "bf16"})
      for (int n : batches) {
        std::vector<float> in(static_cast<size_t>(c.in.size()) * n);
        std::uniform_int_distribution<int> q(-256, 256);
        for (float& v : in) v = static_cast<float>(q(rng)) / 64.0f;
        auto a = test::open_backend(first, "cuda", test::guarded_options("38", "", p));
        auto b = test::open_backend(later, "cuda", test::guarded_options("38", "", p));
        const std::vector<float> got = test::guarded_forward(*a, first, in, n).out, want = test::guarded_forward(*b, later, in, n).out;
        EXPECT_NE(b->describe(1).find("v38 s2d-half"), std::string::npos) << b->describe(1);
        EXPECT_EQ(got, want) << p << " " << c.in.w << "x" << c.in.h << " stride " << c.s << " batch " << n << " seed " << seed;
        if (std::string(p) == "fp16" && n == 3) {  // an input value beyond fp16's range (the last image's first): reported at the layer
          std::vector<float> huge = in;
          huge[static_cast<size_t>(c.in.size()) * (n - 1)] = 1e5f;
          auto f = test::open_backend(first, "cuda", test::guarded_options("38", "", p));
          test::expect_error_at([&] { test::guarded_forward(*f, first, huge, n); }, "layer 'c'", "exceeds 65504");
        }
      }
  }
}
