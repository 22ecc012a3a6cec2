// The 16-bit wgmma convolutions (conv_wgmma_half.cu, conv_wgmma_tma.cu, conv_wgmma_halo.cu): the whole-tile epilogue of
// v39-v47, v60, v61, v65, the TMA versions v66-v71 and the halo versions v72 / v73 against the CPU; the TMA versions' sums
// against their cp.async twins' to the bit, and the halo versions' against v65's;
// and auto's choice among them at small batches (the cluster versions v60 / v61); auto's FP32 choice at small batches
// among the 3xFP16 wgmma versions (conv_wgmma_3xf16.cu, the cluster versions v62 / v63) and v49. Without a GPU each
// test skips.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpu_models.hpp"
#include "gpu_util.hpp"
#include "test_util.hpp"
#include "kernels/plan/plan.hpp"
#include "kernels/plan/registry.hpp"

using namespace bs;
using bs::test::gpu_missing;
using namespace bs::test::models;

namespace {

// The 16-bit wgmma versions' whole-tile epilogue (conv_wgmma_half.cu: fp16's range check folded into one flag a
// thread) on a layer whose first filters fill whole tiles: 128 filters over 16 x 16
// pixels, 2 images (512 pixels, 4 tiles of 128 rows; the 96-wide versions' second column tile takes the per-pair path).
// Each version with no activation, ReLU, tanh and the sigmoid agrees with the CPU within fp16's tolerance; with weights
// of 300 over inputs of 10 (sums of 144 products, 1.9e5-4.3e5) the overflow is reported by name, except after the
// saturating activations.
TEST(GpuEngine, WgmmaHalfWholeTileEpilogueMatchesCpuAndChecksRange) {
  SKIP_WITHOUT_GPU();
  uint32_t seed;
  std::mt19937 rng = test::fresh_rng(&seed);
  for (int act = -1; act < 3; ++act) {
    std::vector<Layer> layers{conv_layer("conv", 128, 3, 1, 1, 1)};
    const Act a = act == 0 ? Act::relu : act == 1 ? Act::tanh : Act::sigmoid;
    if (act >= 0) layers.push_back(act_layer("act", a));
    Model m = build("wide", {16, 16, 16}, layers, rng);
    std::vector<float> in = test::random_vector(static_cast<size_t>(m.input.size()) * 2, rng);
    auto ref = make_backend("cpu");
    ref->load(m);
    const std::vector<float> want = run(*ref, m, in, 2);
    for (int v : {39, 41, 44, 45, 60, 61, 65, 66, 67, 68, 69, 70, 71, 72, 73}) {
      const std::string what = "v" + std::to_string(v) + " act " + std::to_string(act) + " seed " + std::to_string(seed);
      auto gpu = make_backend("cuda", test::gpu_options(std::to_string(v), "", "fastest", "fp16"));
      if (Support sup = gpu->supports(m.layers[0]); !sup.ok) GTEST_SKIP() << sup.reason;
      Model big = m;
      gpu->load(m);
      EXPECT_LE(test::rel_l2(run(*gpu, m, in, 2), want), precision_tolerance(Precision::fp16)) << what;
      auto& conv = std::get<ConvParams>(big.layers[0].op);
      for (float& w : conv.weight) w = 300.0f;
      for (float& b : conv.bias) b = 0.0f;
      const std::vector<float> tens(in.size(), 10.0f);
      auto gpu_big = make_backend("cuda", test::gpu_options(std::to_string(v), "", "fastest", "fp16"));
      gpu_big->load(big);
      if (act >= 1) EXPECT_NO_THROW(run(*gpu_big, big, tens, 2)) << what;
      else test::expect_error_at([&] { run(*gpu_big, big, tens, 2); }, "layer 'conv'", "exceeds 65504, FP16's largest value");
    }
  }
}

// A bit test's layer: m filters, k x k, stride s, padding p (pb / pr at the bottom and right where pb >= 0), g groups,
// dilation dh x dw.
template <class Case>
Layer case_conv(const Case& c) {
  Layer conv = conv_layer("conv", c.m, c.k, c.s, c.p, c.g);
  auto& cp = std::get<ConvParams>(conv.op);
  cp.dh = c.dh;
  cp.dw = c.dw;
  if (c.pb >= 0) {
    cp.pb = c.pb;
    cp.pr = c.pr;
  }
  return conv;
}

// The TMA versions (conv_wgmma_tma.cu) take the same 16 values of each row at each k step as their cp.async twins, in
// the same order, with the same epilogue: the same output to the bit wherever both split K alike. The layers: 32 images
// (256 or more row tiles, so that neither splits), padded, strided, dilated with uneven padding, grouped with 16
// channels a group, a 1x1 kernel, 48 channels (a k step's tap changing inside a stage, as conv1 after v38 and conv2
// have), and multiples of 64 channels a group (one 64-channel box a stage in the 128-byte swizzle, as conv3-conv5 have). Then each version against the CPU on the same input, within fp16's tolerance.
TEST(GpuEngine, WgmmaTmaVersionsGiveTheirCpAsyncTwinsSumsToTheBit) {
  SKIP_WITHOUT_GPU();
  uint32_t seed;
  std::mt19937 rng = test::fresh_rng(&seed);
  struct Case {
    const char* what;
    Shape in;
    int m, k, s, p, g, dh, dw, pb, pr;
  };
  const Case cases[] = {{"k3 p1", {64, 16, 16}, 128, 3, 1, 1, 1, 1, 1, -1, -1},
                        {"k5 p2 c48 g2", {96, 13, 13}, 256, 5, 1, 2, 2, 1, 1, -1, -1},
                        {"k3 s2 p1", {32, 31, 29}, 96, 3, 2, 1, 1, 1, 1, -1, -1},
                        {"k3 dilated 2x3, padding 1 / 3 / 1 / 4", {16, 17, 19}, 24, 3, 1, 1, 1, 2, 3, 3, 4},
                        {"k1", {48, 12, 12}, 192, 1, 1, 0, 1, 1, 1, -1, -1},
                        {"k3 p1 c48 m96", {48, 15, 15}, 96, 3, 1, 1, 1, 1, 1, -1, -1},
                        {"k3 p1 g2 c128 (wide boxes)", {256, 13, 13}, 192, 3, 1, 1, 2, 1, 1, -1, -1},
                        {"k3 s2 p1 c64 (wide boxes)", {64, 23, 21}, 128, 3, 2, 1, 1, 1, 1, -1, -1}};
  const int n = 32;
  for (const Case& c : cases) {
    const Layer conv = case_conv(c);
    Model m = build("tma", c.in, {conv}, rng);
    std::vector<float> in = test::random_vector(static_cast<size_t>(m.input.size()) * n, rng);
    auto ref = make_backend("cpu");
    ref->load(m);
    const std::vector<float> want = run(*ref, m, in, n);
    for (int v : {66, 67, 68, 69, 70, 71}) {
      const int twin = v == 66 ? 45 : v == 67 ? 65 : v == 68 ? 42 : v == 69 ? 61 : v == 70 ? 60 : 41;
      const std::string what = std::string(c.what) + " v" + std::to_string(v) + " seed " + std::to_string(seed);
      auto tma = make_backend("cuda", test::gpu_options(std::to_string(v), "", "fastest", "fp16"));
      if (Support sup = tma->supports(m.layers[0]); !sup.ok) GTEST_SKIP() << sup.reason;
      auto cpa = make_backend("cuda", test::gpu_options(std::to_string(twin), "", "fastest", "fp16"));
      tma->load(m);
      cpa->load(m);
      const std::vector<float> got = run(*tma, m, in, n);
      EXPECT_EQ(got, run(*cpa, m, in, n)) << what;
      EXPECT_LE(test::rel_l2(got, want), precision_tolerance(Precision::fp16)) << what;
    }
  }
}

// AlexNet's convolutions as the heuristic sees them (shapes only, no weights).
Layer shape_conv(Shape in, int m, int k, int stride, int pad, int groups) {
  Layer l;
  ConvParams p;
  p.filters = m;
  p.kh = p.kw = k;
  p.sh = p.sw = stride;
  p.ph = p.pw = pad;
  p.groups = groups;
  l.op = p;
  l.in = in;
  l.out = {m, (in.h + 2 * pad - k) / stride + 1, (in.w + 2 * pad - k) / stride + 1};
  return l;
}
const Layer c1 = shape_conv({3, 227, 227}, 96, 11, 4, 0, 1), c2 = shape_conv({96, 27, 27}, 256, 5, 1, 2, 2),
            c3 = shape_conv({256, 13, 13}, 384, 3, 1, 1, 1), c4 = shape_conv({384, 13, 13}, 384, 3, 1, 1, 2),
            c5 = shape_conv({384, 13, 13}, 256, 3, 1, 1, 2);
// conv1 after v38 (3 x 3 taps over 48 channels), which the halo versions take.
const Layer c1_inner = shape_conv({48, 57, 57}, 96, 3, 1, 0, 1);

// The halo versions (conv_wgmma_halo.cu) take v39's k steps in v39's order, 16 values of each row a step, and stop at K
// where v65 runs on over its padding (zero weights: products that add nothing): the same output to the bit, at 32
// images, where v65 does not split K (under 8 K tiles, or its tiles fill two blocks a multiprocessor). The layers: conv1 after v38 (3 x 3 over 48
// channels, 96 filters: each k step's tap changes inside a 64-value block); strided and padded with 64 filters (the
// weights' rows past them zeros; v72's 256-pixel tiles of 15-pixel rows would need 251 KB, refused by name); dilated
// with uneven padding over 16 channels; images of 35 pixels (a 256-pixel tile spans 8 of them, its halo their rows); 160
// filters (a second, partial column of tiles); a 1x1 kernel; grouped, 5 x 5 over 32 channels a group, K = 800, whose
// weights and halos v73 holds in 209 KB and v72 would need 246 (at 104 images: 14 K tiles, which v65 splits at 32);
// and conv1's shape in bf16. Then each against the CPU on the same input, within the precision's tolerance.
TEST(GpuEngine, WgmmaHaloVersionsGiveV65sSumsToTheBit) {
  SKIP_WITHOUT_GPU();
  uint32_t seed;
  std::mt19937 rng = test::fresh_rng(&seed);
  struct Case {
    const char* what;
    Shape in;
    int m, k, s, p, g, dh, dw, pb, pr;
    const char* precision;
    const char* v72_refuses;  // where v72 needs more shared memory than a block has: its reason's figure
    int n = 32;
  };
  const Case cases[] = {{"conv1 after v38: k3 c48 m96", {48, 57, 57}, 96, 3, 1, 0, 1, 1, 1, -1, -1, "fp16", nullptr},
                        {"k3 s2 p1 c32 m64", {32, 31, 29}, 64, 3, 2, 1, 1, 1, 1, -1, -1, "fp16", "needs 251 KB of 227"},
                        {"k3 dilated 2x3, padding 1 / 3 / 1 / 4, c16 m24", {16, 17, 19}, 24, 3, 1, 1, 1, 2, 3, 3, 4, "fp16", nullptr},
                        {"k3 p1 c16 on 5 x 7 images", {16, 5, 7}, 96, 3, 1, 1, 1, 1, 1, -1, -1, "fp16", nullptr},
                        {"k3 p1 c48 m160", {48, 15, 15}, 160, 3, 1, 1, 1, 1, 1, -1, -1, "fp16", nullptr},
                        {"k1 c64 m96", {64, 12, 12}, 96, 1, 1, 0, 1, 1, 1, -1, -1, "fp16", nullptr},
                        {"k5 p2 g2 c32 m192", {64, 13, 13}, 192, 5, 1, 2, 2, 1, 1, -1, -1, "fp16", "needs 246 KB of 227", 104},
                        {"conv1 after v38, bf16", {48, 57, 57}, 96, 3, 1, 0, 1, 1, 1, -1, -1, "bf16", nullptr}};
  for (const Case& c : cases) {
    const int n = c.n;
    const Layer conv = case_conv(c);
    Model m = build("halo", c.in, {conv}, rng);
    std::vector<float> in = test::random_vector(static_cast<size_t>(m.input.size()) * n, rng);
    auto ref = make_backend("cpu");
    ref->load(m);
    const std::vector<float> want = run(*ref, m, in, n);
    auto twin = make_backend("cuda", test::gpu_options("65", "", "fastest", c.precision));
    if (Support sup = twin->supports(m.layers[0]); !sup.ok) GTEST_SKIP() << sup.reason;
    twin->load(m);
    const std::vector<float> base = run(*twin, m, in, n);
    for (int v : {72, 73}) {
      const std::string what = std::string(c.what) + " v" + std::to_string(v) + " seed " + std::to_string(seed);
      auto halo = make_backend("cuda", test::gpu_options(std::to_string(v), "", "fastest", c.precision));
      const Support sup = halo->supports(m.layers[0]);
      if (v == 72 && c.v72_refuses) {
        EXPECT_FALSE(sup.ok) << what;
        EXPECT_NE(sup.reason.find(c.v72_refuses), std::string::npos) << what << ": " << sup.reason;
        continue;
      }
      ASSERT_TRUE(sup.ok) << what << ": " << sup.reason;
      halo->load(m);
      const std::vector<float> got = run(*halo, m, in, n);
      EXPECT_EQ(got, base) << what;
      EXPECT_LE(test::rel_l2(got, want), precision_tolerance(std::string(c.precision) == "bf16" ? Precision::bf16 : Precision::fp16)) << what;
    }
  }
}

// Where the halo versions cannot run: channels per group not a multiple of 16 (conv2's 48 are; VGG's conv1_1 after v38,
// 8, is not), and weights too large for shared memory (AlexNet's conv2: K = 1,200 a group).
TEST(GpuEngine, WgmmaHaloVersionsRefuseByName) {
  SKIP_WITHOUT_GPU();
  const auto reason = [](int v, const Layer& l) { return registry().find(LayerKind::conv, BackendKind::cuda, v)->check(l).reason; };
  if (!registry().find(LayerKind::conv, BackendKind::cuda, 72)->check(c1_inner).ok) GTEST_SKIP() << reason(72, c1_inner);
  const Layer c8 = shape_conv({8, 226, 226}, 64, 3, 1, 0, 1);
  for (int v : {72, 73}) {
    EXPECT_NE(reason(v, c8).find("multiple of 16 channels as stored (this layer has 8)"), std::string::npos) << reason(v, c8);
    EXPECT_NE(reason(v, c2).find("KB of 227"), std::string::npos) << reason(v, c2);
  }
}

// The 16-bit rule for K up to 512 over 96 filters (conv1 after v38: 3 x 3 x 48, 55 x 55 outputs), worked by hand: v72
// where its 256-pixel tiles are at least 2.5 waves of 132 multiprocessors (330): 16 images 190 tiles, 24 images 284: v65;
// 32 images 379, 1,024 images 12,100: v72. 64 filters (VGG-16's conv1_1 shape over 48 channels): v46, as before.
TEST(GpuHeuristic, ShortKTakesTheHaloVersionFromTwoAndAHalfWaves) {
  SKIP_WITHOUT_GPU();
  const Layer& inner = c1_inner;
  if (!registry().find(LayerKind::conv, BackendKind::cuda, 72)->check(inner).ok) GTEST_SKIP() << "no wgmma here (compute capability 9.0)";
  for (Precision pr : {Precision::fp16, Precision::bf16}) {
    for (const auto& [n, want] : {std::pair{16, 65}, {24, 65}, {32, 72}, {1024, 72}})
      EXPECT_EQ(heuristic_version(inner, n, pr, 132)->number, want) << "n" << n << " " << name_of(pr);
    Layer narrow = inner;
    std::get<ConvParams>(narrow.op).filters = 64;
    narrow.out.c = 64;
    EXPECT_EQ(heuristic_version(narrow, 1024, pr, 132)->number, 46) << name_of(pr);
  }
}

// The 16-bit heuristic on Hopper (132 multiprocessors) for AlexNet's conv2-conv5, worked out by hand from the rule's
// tile counts (rows = 128-pixel tiles; t96 / t128 = rows x ceil(Mg / 96 or 128) x groups): v48 up to 2 images; from 3,
// the cluster versions where the grid is under one wave: v60 for a multiple of 96 filters whose 96-wide tiles fit one
// wave (conv3 at 4 images: t96 = 6 x 4 = 24), v61 for a multiple of 128 otherwise (conv5 at 4 images: 6 x 2 x 2 = 24
// 64-wide tiles, under a quarter of the GPU; conv3 at 32: t96 = 43 x 4 = 172 over one wave, t128 = 129 under it);
// v41 where its own tiles fill half the multiprocessors to all of them with no empty columns (conv3 and conv4 at 16:
// t96 = 88); v45 and v42 where 128 x 128 tiles fill the GPU (conv2 at 16: t128 = 92 x 2 = 184; conv4 at 32). Each of
// v41, v42, v45, v60 and v61 is then taken as its TMA twin (v71, v68, v66, v70, v69) where a group has a multiple of 64
// channels: conv3-conv5 (256, 192, 192); conv2's 48 take v45's twin with 16-channel boxes where v45's blocks are under two
// waves of two a multiprocessor (528): 184 at 16 images, 366 at 32, not 730 at 64.
TEST(GpuHeuristic, HalfSmallGridsTakeTheClusterWgmmaVersions) {
  SKIP_WITHOUT_GPU();
  if (!registry().find(LayerKind::conv, BackendKind::cuda, 60)->check(c3).ok) GTEST_SKIP() << "no wgmma here (compute capability 9.0)";
  struct Want { int n, c2, c3, c4, c5; };
  for (const Want& w : {Want{1, 48, 48, 48, 48}, Want{2, 48, 48, 48, 48}, Want{4, 61, 70, 70, 69}, Want{8, 61, 70, 70, 69},
                        Want{16, 66, 71, 71, 69}, Want{32, 66, 69, 68, 69}})
    for (Precision p : {Precision::fp16, Precision::bf16}) {
      EXPECT_EQ(heuristic_version(c2, w.n, p, 132)->number, w.c2) << "conv2 n" << w.n << " " << name_of(p);
      EXPECT_EQ(heuristic_version(c3, w.n, p, 132)->number, w.c3) << "conv3 n" << w.n << " " << name_of(p);
      EXPECT_EQ(heuristic_version(c4, w.n, p, 132)->number, w.c4) << "conv4 n" << w.n << " " << name_of(p);
      EXPECT_EQ(heuristic_version(c5, w.n, p, 132)->number, w.c5) << "conv5 n" << w.n << " " << name_of(p);
    }
  for (Precision p : {Precision::fp16, Precision::bf16}) EXPECT_EQ(heuristic_version(c2, 64, p, 132)->number, 45) << name_of(p);
}

// The FP32 heuristic on Hopper (132 multiprocessors) for AlexNet's convolutions, worked out by hand from the rule's
// block counts (v13 = ceil(pixels / 64) x ceil(Mg / 128) x groups; v51 = ceil(pixels / 192) x ceil(Mg / 96) x groups;
// v52 = ceil(pixels / 128) x Mg / 128 x groups):
// - conv1 (space-to-depth): v49 while 4 v51 < 132 (16 blocks at 1 image, 32 at 2), v53 while 2 v51 < 132 (64 at 4),
//   else v51 (127 at 8);
// - the others: v49 while 4 v13 < 132 (conv3 at 2 images: 18; conv4 at 2: 24; conv5 at 4: 22), then conv2 and conv5
//   (128 a group) v53, conv2 v52 from two waves of it (32 images: 183 x 2 = 366); conv3 and conv4 v62 while 4 v51 <
//   132 (conv3 at 4: 4 x 4 = 16, at 8: 8 x 4 = 32; conv4 at 8: 8 x 2 x 2 = 32), then v51 (conv3 at 16: 15 x 4 = 60).
TEST(GpuHeuristic, Fp32SmallGridsTakeTheClusterAndNarrowWgmmaVersions) {
  SKIP_WITHOUT_GPU();
  if (!registry().find(LayerKind::conv, BackendKind::cuda, 62)->check(c3).ok) GTEST_SKIP() << "no wgmma here (compute capability 9.0)";
  struct Want { int n, c1, c2, c3, c4, c5; };
  for (const Want& w : {Want{1, 49, 49, 49, 49, 49}, Want{2, 49, 53, 49, 49, 49}, Want{4, 53, 53, 62, 62, 49}, Want{8, 51, 53, 62, 62, 53},
                        Want{16, 51, 53, 51, 51, 53}, Want{32, 51, 52, 51, 51, 53}}) {
    EXPECT_EQ(heuristic_version(c1, w.n, Precision::fp32, 132)->number, w.c1) << "conv1 n" << w.n;
    EXPECT_EQ(heuristic_version(c2, w.n, Precision::fp32, 132)->number, w.c2) << "conv2 n" << w.n;
    EXPECT_EQ(heuristic_version(c3, w.n, Precision::fp32, 132)->number, w.c3) << "conv3 n" << w.n;
    EXPECT_EQ(heuristic_version(c4, w.n, Precision::fp32, 132)->number, w.c4) << "conv4 n" << w.n;
    EXPECT_EQ(heuristic_version(c5, w.n, Precision::fp32, 132)->number, w.c5) << "conv5 n" << w.n;
  }
}

}  // namespace
