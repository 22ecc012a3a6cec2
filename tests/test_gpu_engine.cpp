// The GEMM engine's variants (conv v12-v14, fc v5-v8), the fused LRN + pooling kernel and auto's plan, against
// cpu-ref (or, for whole AlexNet-sized models, the cpu backend, itself tested equal to cpu-ref): chains with
// what the variants fuse, per-layer transfers (weights prepared in the layer's workspace), an AlexNet-shaped
// model end to end, and the tuning table from `batchscope tune` to auto's choice. Without a GPU each test skips.
#include <cstdio>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <iostream>

#include "app/cli/run_flags.hpp"
#include "app/exec/executor.hpp"
#include "app/commands/tune.hpp"
#include "cli_util.hpp"
#include "gpu_models.hpp"
#include "gpu_util.hpp"
#include "test_util.hpp"
#include "kernels/cuda/ops/ops.hpp"
#include "kernels/plan/registry.hpp"
#include "kernels/plan/tuning.hpp"
#include "weights_tools/npy.hpp"

using namespace bs;
using bs::test::cpu_ref_output;
using bs::test::gpu_missing;
using namespace bs::test::models;

namespace {

// conv -> activation for v12-v14: the activation runs in the engine's epilogue, a pool after it on its own.
TEST(GpuEngine, ConvWithFusedActivationMatchesCpuRef) {
  SKIP_WITHOUT_GPU();
  struct Case { Shape in; Layer conv; Act act; bool pool; int batch; };
  const std::vector<Case> cases = {
      {{6, 22, 22}, conv_layer("conv", 16, 5, 1, 0, 1), Act::tanh, true, 7},
      {{3, 35, 33}, conv_layer("conv", 96, 11, 4, 0, 1), Act::relu, false, 3},
      {{40, 13, 13}, conv_layer("conv", 130, 3, 1, 1, 2), Act::sigmoid, false, 2},
      {{16, 17, 19}, conv_layer("conv", 64, 5, 1, 2, 2), Act::relu, true, 9},
      {{7, 9, 11}, conv_layer("conv", 5, 3, 2, 1, 1), Act::tanh, true, 4},  // odd channels in and out: NHWC pad channels
      // Strided over fewer than 8 channels: v51-v53's space-to-depth rewrite at stride 2 with padding (Ct = 4) and at
      // stride 3 (Ct = 8), and above at stride 4 (conv1's shape, Ct = 3).
      {{3, 30, 29}, conv_layer("conv", 64, 7, 2, 3, 1), Act::relu, false, 3},
      {{5, 20, 19}, conv_layer("conv", 24, 5, 3, 2, 1), Act::relu, false, 2},
  };
  for (const Case& c : cases) {
    uint32_t seed;
    std::mt19937 rng = test::fresh_rng(&seed);
    std::vector<Layer> layers = {c.conv, act_layer("act", c.act)};
    if (c.pool) layers.push_back(pool_layer("pool", PoolKind::max, 2, 2));
    const Model m = build("engine-chain", c.in, layers, rng);
    const std::vector<float> in = test::random_vector(static_cast<size_t>(m.input.size()) * c.batch, rng);
    const std::vector<float> want = cpu_ref_output(m, in, c.batch);
    for (const char* v : {"12", "13", "14", "15", "34", "35", "36", "51", "52", "53", "62", "63"}) {
      auto gpu = make_backend("cuda", test::guarded_options(v));
      if (Support sup = gpu->supports(m.layers[0]); !sup.ok) {  // v34-v36, v51-v53, v62-v63: wgmma (compute capability 9.0)
        std::printf("v%s skipped: %s\n", v, sup.reason.c_str());
        continue;
      }
      gpu->load(m);
      const std::vector<float> got = run(*gpu, m, in, c.batch);
      EXPECT_EQ(gpu->describe(1), "fused into conv") << v;
      if (c.pool) {
        EXPECT_EQ(gpu->describe(2), "pool kernel") << v;
      }
      EXPECT_LE(test::rel_l2(got, want), 1e-5) << "v" << v << " in " << to_string(c.in) << " seed " << seed;
    }
    // --precision tf32's wgmma versions (TF32 on v33, the scaled FP16 product on v54-v56) through the same epilogue: each
    // activation where the tile's rows are inside the layer and where they run past it, within tf32's 5e-3.
    for (const char* v : {"33", "54", "55", "56"}) {
      auto gpu = make_backend("cuda", test::guarded_options(v, "", "tf32"));
      if (Support sup = gpu->supports(m.layers[0]); !sup.ok) {
        std::printf("tf32 v%s skipped: %s\n", v, sup.reason.c_str());
        continue;
      }
      gpu->load(m);
      const std::vector<float> got = run(*gpu, m, in, c.batch);
      EXPECT_EQ(gpu->describe(1), "fused into conv") << v;
      const double err = test::rel_l2(got, want);
      EXPECT_LE(err, 5e-3) << "tf32 v" << v << " in " << to_string(c.in) << " seed " << seed;
      EXPECT_GT(err, 1e-6) << "tf32 v" << v;  // TF32's rounding shows
    }
    // The 16-bit versions (130 filters in 2 groups: 65 per group, so the second group's channel pairs straddle words).
    for (const char* p : {"fp16", "bf16"})
      for (const char* v : {"19", "20", "21"}) {
        auto gpu = make_backend("cuda", test::guarded_options(v, "", p));
        gpu->load(m);
        const std::vector<float> got = run(*gpu, m, in, c.batch);
        EXPECT_EQ(gpu->describe(1), "fused into conv") << v;
        const double err = test::rel_l2(got, want);
        EXPECT_LE(err, std::string(p) == "fp16" ? 2e-3 : 1.6e-2) << p << " v" << v << " in " << to_string(c.in) << " seed " << seed;
        EXPECT_GT(err, 1e-6) << p << " v" << v;
      }
  }
}

// fc -> relu -> fc -> tanh -> fc, every new fc version at batch sizes on both sides of the streaming path's
// passes of 8 images and of the engine's 128-row tiles.
TEST(GpuEngine, FcChainsWithFusedActivationsMatchCpuRef) {
  SKIP_WITHOUT_GPU();
  uint32_t seed;
  std::mt19937 rng = test::fresh_rng(&seed);
  const Model m = build("fc-chain", {5, 6, 7}, {{"flat", FlattenParams{}, {}, {}}, fc_layer("fc1", 300), act_layer("r1", Act::relu),
                                                fc_layer("fc2", 129), act_layer("t2", Act::tanh), fc_layer("fc3", 10)},
                        rng);
  for (int n : {1, 3, 8, 9, 40, 130}) {
    const std::vector<float> in = test::random_vector(static_cast<size_t>(m.input.size()) * n, rng);
    const std::vector<float> want = cpu_ref_output(m, in, n);
    for (const char* v : {"5", "6", "7", "8", "9"}) {
      auto gpu = make_backend("cuda", test::guarded_options("", v));
      gpu->load(m);
      EXPECT_LE(test::rel_l2(run(*gpu, m, in, n), want), 1e-5) << "fc v" << v << " batch " << n << " seed " << seed;
      EXPECT_EQ(gpu->describe(2), "fused into fc1");
      EXPECT_EQ(gpu->describe(4), "fused into fc2");
      EXPECT_EQ(gpu->describe(1).rfind(std::string("fc v") + v, 0), 0u) << gpu->describe(1);
    }
    // 16 bits: three layers of rounding (129 outputs: an odd count, the pad output of fc2 read as zero by fc3).
    for (const char* p : {"fp16", "bf16"})
      for (const char* v : {"12", "13"}) {
        auto gpu = make_backend("cuda", test::guarded_options("", v, p));
        gpu->load(m);
        EXPECT_LE(test::rel_l2(run(*gpu, m, in, n), want), std::string(p) == "fp16" ? 4e-3 : 3e-2) << p << " fc v" << v << " batch " << n << " seed " << seed;
        EXPECT_EQ(gpu->describe(2), "fused into fc1");
      }
  }
}

// LRN followed by pooling runs as one kernel: max and average, with and without padding and ceil mode.
TEST(GpuEngine, LrnThenPoolingInOneKernelMatchesCpuRef) {
  SKIP_WITHOUT_GPU();
  for (const Layer& pool : {pool_layer("pool", PoolKind::max, 3, 2), pool_layer("pool", PoolKind::avg, 3, 2, 1, true),
                            pool_layer("pool", PoolKind::max, 2, 2, 0, true)}) {
    uint32_t seed;
    std::mt19937 rng = test::fresh_rng(&seed);
    const Model m = build("lrn-pool", {9, 27, 25}, {lrn_layer("norm"), pool}, rng);
    const int n = 3;
    const std::vector<float> in = test::random_vector(static_cast<size_t>(m.input.size()) * n, rng);
    for (Precision p : {Precision::fp32, Precision::tf32}) {  // tf32 keeps FP32 activations: the same kernel (no product in it)
      auto gpu = make_backend("cuda", test::guarded_options("", "", name_of(p)));
      gpu->load(m);
      EXPECT_EQ(gpu->describe(0), "lrn+" + m.layers[1].type_name() + " kernel") << name_of(p);
      EXPECT_EQ(gpu->describe(1), "fused into norm") << name_of(p);
      EXPECT_LE(test::rel_l2(run(*gpu, m, in, n), cpu_ref_output(m, in, n)), 1e-5) << m.layers[1].type_name() << " seed " << seed;
    }
  }
}

// The pooling kernels alone (FP32 NCHW, 16-bit NHWC) at 1 and 3 images: windows up to 3x3 load their values as one
// batch (pool_gather.cuh), larger ones one at a time; clipped windows (padding, ceil mode) and average with and
// without the padding counted; an odd channel count (the 16-bit path's pad channel) and one of 16 (its 16-byte runs).
TEST(GpuEngine, PoolingAloneMatchesCpuRefForEveryWindowSize) {
  SKIP_WITHOUT_GPU();
  std::vector<Layer> pools = {pool_layer("pool", PoolKind::max, 3, 2), pool_layer("pool", PoolKind::max, 2, 2),
                              pool_layer("pool", PoolKind::max, 3, 1, 1), pool_layer("pool", PoolKind::avg, 3, 2, 1, true),
                              pool_layer("pool", PoolKind::avg, 2, 1), pool_layer("pool", PoolKind::max, 4, 2, 1),
                              pool_layer("pool", PoolKind::avg, 5, 2, 2), pool_layer("pool", PoolKind::max, 5, 3, 0, true)};
  Layer excl = pool_layer("pool", PoolKind::avg, 3, 2, 1, true);
  std::get<PoolParams>(excl.op).count_include_pad = false;
  pools.push_back(excl);
  for (const Layer& pool : pools)
    for (const Shape in_shape : {Shape{16, 13, 13}, Shape{7, 12, 11}}) {
      uint32_t seed;
      std::mt19937 rng = test::fresh_rng(&seed);
      const Model m = build("pool", in_shape, {pool}, rng);
      const auto& pp = std::get<PoolParams>(pool.op);
      for (const int n : {1, 3}) {
        const std::vector<float> in = test::random_vector(static_cast<size_t>(m.input.size()) * n, rng);
        const std::vector<float> want = cpu_ref_output(m, in, n);
        for (Precision p : {Precision::fp32, Precision::fp16, Precision::bf16}) {
          auto gpu = make_backend("cuda", test::guarded_options("", "", name_of(p)));
          gpu->load(m);
          EXPECT_EQ(gpu->describe(0), "pool kernel") << name_of(p);
          const double tol = p == Precision::fp32 ? 1e-6 : p == Precision::fp16 ? 2e-3 : 1.6e-2;  // the inputs' rounding
          EXPECT_LE(test::rel_l2(run(*gpu, m, in, n), want), tol)
              << name_of(p) << (pp.kind == PoolKind::max ? " max " : " avg ") << pp.kh << "x" << pp.kw << " stride " << pp.sh << " pad "
              << pp.ph << " channels " << in_shape.c << " batch " << n << " seed " << seed;
        }
      }
    }
}

// With per-layer transfers the prepared weights are made in each layer's workspace, for every run.
TEST(GpuEngine, PerLayerTransfersPrepareWeightsInTheWorkspace) {
  SKIP_WITHOUT_GPU();
  uint32_t seed;
  std::mt19937 rng = test::fresh_rng(&seed);
  const Model m = build("per-layer", {8, 19, 17},
                        {conv_layer("conv", 24, 3, 1, 1, 2), act_layer("relu", Act::relu), pool_layer("pool", PoolKind::max, 2, 2),
                         {"flat", FlattenParams{}, {}, {}}, fc_layer("fc1", 50), act_layer("r2", Act::relu), fc_layer("fc2", 7)},
                        rng);
  const int n = 6;
  const std::vector<float> in = test::random_vector(static_cast<size_t>(m.input.size()) * n, rng);
  const std::vector<float> want = cpu_ref_output(m, in, n);
  for (auto [conv, fc] : {std::pair{"12", "6"}, std::pair{"13", "7"}, std::pair{"14", "8"}, std::pair{"15", "9"}}) {
    BackendOptions o;
    o.conv_variant = test::conv_version(conv);
    o.fc_variant = test::fc_version(fc);
    o.transfers = Transfers::per_layer;
    auto gpu = make_backend("cuda", o);
    gpu->load(m);
    for (int round = 0; round < 2; ++round)
      EXPECT_LE(test::rel_l2(run(*gpu, m, in, n), want), 1e-5) << "v" << conv << " fc v" << fc << " round " << round << " seed " << seed;
  }
}

// AlexNet's longest reductions at batch sizes that need no split-K, so that one accumulator runs the whole K
// loop (fc6: 9216; conv3: 2304; conv2: 1200): the table's AlexNet cases run at batch 2, where split-K cuts the
// loop short and hid a bias of the tensor cores' accumulation (gemm_math.cuh). Against the cpu backend (one
// SGEMM, itself tested equal to cpu-ref) at the same 1e-5.
TEST(GpuEngine, FullLengthReductionsWithoutSplitKKeepFp32Accuracy) {
  SKIP_WITHOUT_GPU();
  struct Case { const char* what; Shape in; Layer layer; int batch; bool conv; };
  const std::vector<Case> cases = {
      {"fc6", {9216, 1, 1}, fc_layer("l", 4096), 300, false},
      {"conv3", {256, 13, 13}, conv_layer("l", 384, 3, 1, 1, 1), 64, true},
      {"conv2", {96, 27, 27}, conv_layer("l", 256, 5, 1, 2, 2), 32, true},
  };
  auto cpu = make_backend("cpu");
  for (const Case& c : cases) {
    uint32_t seed;
    std::mt19937 rng = test::fresh_rng(&seed);
    const Model m = build(c.what, c.in, {c.layer}, rng);
    const std::vector<float> in = test::random_vector(static_cast<size_t>(m.input.size()) * c.batch, rng);
    cpu->load(m);
    const std::vector<float> want = run(*cpu, m, in, c.batch);
    for (int v : c.conv ? std::vector<int>{12, 13, 14, 15, 34, 35, 36, 51, 52, 53, 62, 63} : std::vector<int>{6, 7, 8, 9, 18}) {
      if (const Support s = registry().find(c.conv ? LayerKind::conv : LayerKind::fc, BackendKind::cuda, v)->check(m.layers[0]); !s.ok) {
        std::cout << "[ skipped  ] v" << v << " on " << c.what << ": " << s.reason << "\n";  // v34-v36, v51-v53, v62-v63: Hopper only
        continue;
      }
      BackendOptions o;
      (c.conv ? o.conv_variant : o.fc_variant) = v;
      auto gpu = make_backend("cuda", o);
      gpu->load(m);
      // 2e-6: each of these is within 9e-7 of the cpu backend (experiments/tuning-accuracy.md). The wgmma versions
      // v34-v36 were at 1.5e-5 on conv3's K = 2,304 while the tensor cores kept their sum over all of K.
      EXPECT_LE(test::rel_l2(run(*gpu, m, in, c.batch), want), 2e-6) << c.what << " batch " << c.batch << " v" << v << " seed " << seed;
    }
  }
}

// BVLC AlexNet's layers at full size with random weights: auto (and each engine version) against the cpu
// backend, at batch 1 (fc streaming, split-K convolutions) and 20. End to end over eight layers the tolerance
// is the sweep's 1e-4 (each layer alone is held to 1e-5 in the table).
Model alexnet_like(std::mt19937& rng) {
  return build("alexnet-like", {3, 227, 227},
               {conv_layer("conv1", 96, 11, 4, 0, 1), act_layer("relu1", Act::relu), lrn_layer("norm1"),
                pool_layer("pool1", PoolKind::max, 3, 2), conv_layer("conv2", 256, 5, 1, 2, 2), act_layer("relu2", Act::relu),
                lrn_layer("norm2"), pool_layer("pool2", PoolKind::max, 3, 2), conv_layer("conv3", 384, 3, 1, 1, 1),
                act_layer("relu3", Act::relu), conv_layer("conv4", 384, 3, 1, 1, 2), act_layer("relu4", Act::relu),
                conv_layer("conv5", 256, 3, 1, 1, 2), act_layer("relu5", Act::relu), pool_layer("pool5", PoolKind::max, 3, 2),
                {"flatten", FlattenParams{}, {}, {}}, fc_layer("fc6", 4096), act_layer("relu6", Act::relu), fc_layer("fc7", 4096),
                act_layer("relu7", Act::relu), fc_layer("fc8", 1000)},
               rng);
}

// Batches of 1 and 20 random inputs of pixel-like size (pixels minus a mean) for the AlexNet-shaped model, each with the
// cpu backend's output: f(n, in, want).
void alexnet_like_batches(const Model& m, std::mt19937& rng,
                          const std::function<void(int, const std::vector<float>&, const std::vector<float>&)>& f) {
  auto ref = make_backend("cpu");
  ref->load(m);
  for (int n : {1, 20}) {
    std::vector<float> in = test::random_vector(static_cast<size_t>(m.input.size()) * n, rng);
    for (float& x : in) x *= 100.0f;
    f(n, in, run(*ref, m, in, n));
  }
}

TEST(GpuEngine, AlexNetShapedModelEndToEnd) {
  SKIP_WITHOUT_GPU();
  uint32_t seed;
  std::mt19937 rng = test::fresh_rng(&seed);
  const Model m = alexnet_like(rng);
  alexnet_like_batches(m, rng, [&](int n, const std::vector<float>& in, const std::vector<float>& want) {
    for (const char* v : {"auto", "12", "13", "14", "34", "35", "36", "51", "52", "53", "62", "63"}) {
      auto gpu = make_backend("cuda", test::guarded_options(v));
      if (Support sup = gpu->supports(m.layers[0]); !sup.ok) {  // v34-v36, v51-v53, v62-v63: wgmma (compute capability 9.0)
        std::printf("v%s skipped: %s\n", v, sup.reason.c_str());
        continue;
      }
      gpu->load(m);
      EXPECT_LE(test::rel_l2(run(*gpu, m, in, n), want), 1e-4) << "conv " << v << " batch " << n << " seed " << seed;
      if (std::string(v) == "auto") {
        EXPECT_EQ(gpu->describe(1), "fused into conv1");
        EXPECT_EQ(gpu->describe(2), "lrn+max_pool kernel");
        EXPECT_EQ(gpu->describe(3), "fused into norm1");
        EXPECT_EQ(gpu->describe(17), "fused into fc6");
        EXPECT_NE(gpu->describe(0).find("(conv+relu)"), std::string::npos) << gpu->describe(0);
        if (n == 1) {
          EXPECT_NE(gpu->describe(16).find("fc v5 stream (fc+relu)"), std::string::npos) << gpu->describe(16);
        }
      }
    }
  });
}

// --precision tf32 end to end on the AlexNet-shaped model: the cuda backend (auto and each TF32 engine version)
// and cudnn, within tf32's 5e-3 of the cpu backend, and auto's convolutions and large-batch FC layers on the TF32
// versions. The measured errors are printed: experiments/precision-tf32.md quotes them.
TEST(GpuEngine, Tf32EndToEndWithinItsTolerance) {
  SKIP_WITHOUT_GPU();
  uint32_t seed;
  std::mt19937 rng = test::fresh_rng(&seed);
  const Model m = alexnet_like(rng);
  alexnet_like_batches(m, rng, [&](int n, const std::vector<float>& in, const std::vector<float>& want) {
    struct Cfg { const char* backend; const char* conv; };
    for (const Cfg& c : {Cfg{"cuda", "auto"}, Cfg{"cuda", "16"}, Cfg{"cuda", "17"}, Cfg{"cuda", "18"}, Cfg{"cuda", "23"}, Cfg{"cuda", "24"},
                          Cfg{"cuda", "25"}, Cfg{"cuda", "26"}, Cfg{"cuda", "27"}, Cfg{"cuda", "28"},
                          Cfg{"cuda", "29"}, Cfg{"cuda", "30"},
                          Cfg{"cuda", "31"}, Cfg{"cuda", "32"}, Cfg{"cuda", "33"}, Cfg{"cuda", "54"}, Cfg{"cuda", "55"},
                          Cfg{"cuda", "56"}, Cfg{"cudnn", ""}}) {
      auto gpu = make_backend(c.backend, test::guarded_options(std::string(c.backend) == "cuda" ? c.conv : "", "", "tf32"));
      gpu->load(m);
      const double err = test::rel_l2(run(*gpu, m, in, n), want);
      std::printf("tf32 %s conv %s batch %d: rel L2 %.3g\n", c.backend, c.conv, n, err);
      EXPECT_LE(err, 5e-3) << c.backend << " conv " << c.conv << " batch " << n << " seed " << seed;
      // Our TF32 kernels must round; cuDNN's tensor-op math only allows TF32, and at batch 1 it was seen (H100, cuDNN
      // 9.19) to pick an FP32 algorithm for every layer (rel L2 9.7e-7), which is its right.
      if (std::string(c.backend) == "cuda") {
        EXPECT_GT(err, 1e-6) << "tf32 that agrees to FP32 rounding did not round its operands";
      }
      if (std::string(c.backend) == "cuda" && std::string(c.conv) == "auto") {
        const std::string d = gpu->describe(0);
        EXPECT_TRUE(d.find("gemm-tf32") != std::string::npos || d.find("wgmma") != std::string::npos) << d;
        EXPECT_NE(gpu->describe(16).find(n == 1 ? "fc v5 stream" : "gemm-tf32"), std::string::npos) << gpu->describe(16);
      }
    }
  });
}

// --precision fp16 and bf16 end to end on the AlexNet-shaped model (16-bit NHWC activations, the flatten before fc6
// read in NHWC order, grouped convolutions, LRN and pooling on 16-bit tensors): auto and each version within the
// precision's tolerance of the cpu backend, and rounding visibly (above FP32's). The errors are printed:
// experiments/precision-half.md quotes them.
TEST(GpuEngine, HalfPrecisionEndToEndWithinItsTolerance) {
  SKIP_WITHOUT_GPU();
  uint32_t seed;
  std::mt19937 rng = test::fresh_rng(&seed);
  const Model m = alexnet_like(rng);
  alexnet_like_batches(m, rng, [&](int n, const std::vector<float>& in, const std::vector<float>& want) {
    for (const char* p : {"fp16", "bf16"})
      for (const char* v : {"auto", "19", "20", "21"}) {
        auto gpu = make_backend("cuda", test::guarded_options(v, std::string(v) == "21" ? "13" : std::string(v) == "19" ? "12" : "", p));
        gpu->load(m);
        const double err = test::rel_l2(run(*gpu, m, in, n), want);
        std::printf("%s conv %s batch %d: rel L2 %.3g\n", p, v, n, err);
        EXPECT_LE(err, precision_tolerance(parse_enum<Precision>(p, "--precision"))) << p << " conv " << v << " batch " << n << " seed " << seed;
        EXPECT_GT(err, 1e-5) << p << " that agrees to FP32 rounding did not round";
        if (std::string(v) == "auto") {
          const std::string d0 = gpu->describe(0);  // conv1: the engine, or v38's space-to-depth rewrite of it
          EXPECT_TRUE(d0.find("gemm-half") != std::string::npos || d0.find("s2d-half") != std::string::npos) << d0;
          EXPECT_EQ(gpu->describe(1), "fused into conv1");
          EXPECT_EQ(gpu->describe(2), "lrn+max_pool kernel");  // lrn_pool_half.cu
          EXPECT_EQ(gpu->describe(3), "fused into norm1");
          // fc: v14 streams the weights at 1 image, v17 on the tensor cores up to 16, the GEMM engine (or wgmma) beyond
          const std::string d16 = gpu->describe(16);
          if (n == 1) EXPECT_NE(d16.find("stream-half"), std::string::npos) << n << ": " << d16;
          else if (n <= 16) EXPECT_NE(d16.find("stream-mma-half"), std::string::npos) << n << ": " << d16;
          else EXPECT_TRUE(d16.find("gemm-half") != std::string::npos || d16.find("wgmma-half") != std::string::npos) << n << ": " << d16;
        }
      }
  });
}

// fp16 cannot hold a value above 65504: a layer whose output goes beyond it is reported by name, not passed on as
// inf; an input beyond it is reported at the first layer; bf16 (FP32's range) runs the same model within tolerance.
// A conv -> relu -> fc model whose convolution's outputs reach about 2e5 (72 inputs of 10, weights of 300: beyond
// fp16), its input of tens; an fp16 backend of `backend` reports the overflow at `where` instead of computing inf;
// with weights in range the same backend (its flag reset) agrees with the CPU; an input beyond 65504 is reported
// too. Returns the model with its weights of 300 again and the input, for more checks.
std::pair<Model, std::vector<float>> check_fp16_overflow(const char* backend, const char* where, std::mt19937& rng, uint32_t seed) {
  const int n = 2;
  Model m = build("big", {8, 6, 6}, {conv_layer("conv", 4, 3, 1, 1, 1), act_layer("relu", Act::relu), {"flat", FlattenParams{}, {}, {}},
                                     fc_layer("fc", 3)},
                  rng);
  auto& conv = std::get<ConvParams>(m.layers[0].op);
  for (float& w : conv.weight) w = 300.0f;
  for (float& b : conv.bias) b = 0.0f;
  std::vector<float> in(static_cast<size_t>(m.input.size()) * n, 10.0f);
  BackendOptions o;
  o.precision = Precision::fp16;
  auto gpu = make_backend(backend, o);
  gpu->load(m);
  test::expect_error_at([&] { run(*gpu, m, in, n); }, where, "exceeds 65504, FP16's largest value");
  for (float& w : conv.weight) w = 1e-3f;
  gpu->load(m);
  auto ref = make_backend("cpu");
  ref->load(m);
  EXPECT_LE(test::rel_l2(run(*gpu, m, in, n), run(*ref, m, in, n)), precision_tolerance(Precision::fp16)) << backend << " seed " << seed;
  std::vector<float> huge = in;
  huge[5] = 1e5f;
  test::expect_error_at([&] { run(*gpu, m, huge, n); }, where, "exceeds 65504");
  for (float& w : conv.weight) w = 300.0f;
  return {std::move(m), std::move(in)};
}

TEST(GpuEngine, Fp16OverflowIsReportedNotTurnedIntoInf) {
  SKIP_WITHOUT_GPU();
  uint32_t seed;
  std::mt19937 rng = test::fresh_rng(&seed);
  auto [m, in] = check_fp16_overflow("cuda", "layer 'conv'", rng, seed);
  // bf16's range is FP32's: the same weights run, and agree with the CPU.
  auto ref = make_backend("cpu");
  ref->load(m);
  BackendOptions o;
  o.precision = Precision::bf16;
  auto b16 = make_backend("cuda", o);
  b16->load(m);
  EXPECT_LE(test::rel_l2(run(*b16, m, in, 2), run(*ref, m, in, 2)), precision_tolerance(Precision::bf16)) << "seed " << seed;
}

// conv v22 (spec-half) and v58 (band-half: the weights in registers, conv1 as a banded product): ECE 408's two shapes on
// the 16-bit tensor cores with what they fuse: on conv1's shape the activation and the 2x2 max pool, reading the FP32
// input itself as the first layer or, after another layer, the 16-bit NHWC tensor; on conv2's the activation (a pool
// after it runs alone). fp16 and bf16, odd batch sizes (v58's warps take whole images: 1-23 images leave warps and
// blocks partly idle; 12 per multiprocessor less 5 give conv2's blocks two sets each, the last block a short one), at the
// per-layer tolerance of the GPU table (2e-3, bf16 1.6e-2); then fp16's range checks on both shapes (after ReLU: a
// saturating activation keeps the stored values in range).
TEST(GpuEngine, SpecHalfChainsMatchCpuRef) {
  SKIP_WITHOUT_GPU();
  struct Case { Shape in; int filters; bool lead, has_act; Act act; bool pool; int batch; };
  std::vector<Case> cases;
  for (bool lead : {false, true})
    for (Act act : {Act::tanh, Act::relu, Act::sigmoid})
      for (bool pool : {true, false}) cases.push_back({{1, 48, 48}, 6, lead, true, act, pool, 1 + 6 * static_cast<int>(cases.size()) % 23});
  cases.push_back({{1, 48, 48}, 6, false, false, Act::relu, true, 5});
  cases.push_back({{1, 48, 48}, 6, false, false, Act::relu, false, 2});
  for (Act act : {Act::tanh, Act::relu, Act::sigmoid}) cases.push_back({{6, 22, 22}, 16, false, true, act, false, 3 + 4 * static_cast<int>(act)});
  cases.push_back({{6, 22, 22}, 16, true, true, Act::tanh, true, 9});
  cases.push_back({{6, 22, 22}, 16, false, false, Act::relu, false, 1});
  // Several 4-image sets a block, the next sets' copies in flight while one is computed, and a short last set in the last
  // block: v58's conv2 (one block a multiprocessor) takes 16 images a block, 4 sets, so that the fourth set lands in the
  // buffer the first was computed from; v22 (two blocks a multiprocessor) takes 2 sets a block.
  cases.push_back({{6, 22, 22}, 16, false, true, Act::tanh, false, 16 * cuda::sm_count() - 5});
  for (const char* version : {"22", "58"})
  for (const char* prec : {"fp16", "bf16"})
    for (const Case& c : cases) {
      uint32_t seed;
      std::mt19937 rng = test::fresh_rng(&seed);
      std::vector<Layer> layers;
      if (c.lead) layers.push_back(act_layer("lead", Act::relu));
      layers.push_back(conv_layer("conv", c.filters, 5, 1, 0, 1));
      if (c.has_act) layers.push_back(act_layer("act", c.act));
      if (c.pool) layers.push_back(pool_layer("pool", PoolKind::max, 2, 2));
      const Model m = build("spec", c.in, layers, rng);
      const std::vector<float> in = test::random_vector(static_cast<size_t>(m.input.size()) * c.batch, rng);
      const std::vector<float> want = cpu_ref_output(m, in, c.batch);
      auto gpu = make_backend("cuda", test::guarded_options(version, "", prec));
      gpu->load(m);
      const size_t ci = c.lead ? 1 : 0;
      const std::string what = "v" + std::string(version) + " " + prec + " in.c " + std::to_string(c.in.c) + " lead " + std::to_string(c.lead) + " act " +
                               (c.has_act ? std::to_string(static_cast<int>(c.act)) : "none") + " pool " + std::to_string(c.pool) +
                               " batch " + std::to_string(c.batch) + " seed " + std::to_string(seed);
      EXPECT_NE(gpu->describe(ci).find(std::string(version) == "22" ? "v22 spec-half" : "v58 band-half"), std::string::npos)
          << gpu->describe(ci);
      if (c.has_act) {
        EXPECT_EQ(gpu->describe(ci + 1), "fused into conv") << what;
      }
      if (c.pool) {
        EXPECT_EQ(gpu->describe(m.layers.size() - 1), c.in.c == 1 ? "fused into conv" : "pool kernel") << what;
      }
      EXPECT_LE(test::rel_l2(run(*gpu, m, in, c.batch), want), std::string(prec) == "fp16" ? 2e-3 : 1.6e-2) << what;
    }
  // fp16's range: an input beyond 65504 (conv1's shape converts it in the kernel), and outputs beyond it.
  std::mt19937 rng(7);
  for (const char* version : {"22", "58"})
  for (Shape in_shape : {Shape{1, 48, 48}, Shape{6, 22, 22}}) {
    Model m = build("range", in_shape, {conv_layer("conv", in_shape.c == 1 ? 6 : 16, 5, 1, 0, 1), act_layer("act", Act::relu),
                                        pool_layer("pool", PoolKind::max, 2, 2)}, rng);
    BackendOptions o;
    o.conv_variant = test::conv_version(version);
    o.precision = parse_enum<Precision>("fp16", "--precision");
    auto gpu = make_backend("cuda", o);
    gpu->load(m);
    const int n = 3;
    std::vector<float> in(static_cast<size_t>(m.input.size()) * n, 0.5f);
    EXPECT_NO_THROW(run(*gpu, m, in, n));
    std::vector<float> huge = in;
    huge[m.input.size() + 77] = 1e5f;
    test::expect_error_at([&] { run(*gpu, m, huge, n); }, "layer 'conv'", "exceeds 65504");
    for (float& w : std::get<ConvParams>(m.layers[0].op).weight) w = 30000.0f;  // 25 or 150 inputs of 0.5: beyond 65504
    gpu->load(m);
    test::expect_error_at([&] { run(*gpu, m, in, n); }, "layer 'conv'", "exceeds 65504");
  }
}

// The cudnn backend's fp16 path has no per-layer flag inside cuDNN's kernels: an overflow that reaches the output
// as inf, and an input beyond 65504, stop the run with one line; in range, the run agrees with the CPU.
TEST(GpuEngine, CudnnFp16OverflowIsReported) {
  SKIP_WITHOUT_GPU();
  uint32_t seed;
  std::mt19937 rng = test::fresh_rng(&seed);
  check_fp16_overflow("cudnn", "cudnn", rng, seed);
}

// `batchscope tune` writes a table; auto takes its choices ("auto (tuned)"), and a table from another device
// is refused with one line.
TEST(GpuEngine, TuneWritesATableThatAutoReads) {
  SKIP_WITHOUT_GPU();
  test::TempDir d;
  uint32_t seed;
  std::mt19937 rng = test::fresh_rng(&seed);
  Model m = build("tiny", {4, 12, 12}, {conv_layer("conv", 20, 3, 1, 1, 1), act_layer("relu", Act::relu), {"flat", FlattenParams{}, {}, {}},
                                        fc_layer("fc", 10)},
                  rng);
  // a model folder for the command (it loads model.json and .npy files)
  test::write_text(d / "model.json",
                   R"({"name": "tiny", "input": [4, 12, 12], "layers": [
                      {"name": "conv", "type": "convolution", "filters": 20, "kernel": 3, "padding": 1, "weight": {"file": "w.npy"}},
                      {"name": "relu", "type": "relu"}, {"name": "flat", "type": "flatten"},
                      {"name": "fc", "type": "fully_connected", "outputs": 10, "weight": {"file": "f.npy"}}]})");
  auto npy = [&](const std::string& file, std::vector<int64_t> shape) {
    size_t count = 1;
    for (int64_t s : shape) count *= static_cast<size_t>(s);
    write_npy(d / file, Array::from_float(shape, test::random_vector(count, rng)));
  };
  npy("w.npy", {20, 4, 3, 3});
  npy("f.npy", {10, 20 * 12 * 12});
  auto t = test::parse_args<TuneOptions>({"--model", d.str(), "--batches", "2,33", "--reps", "2", "--warmup", "1", "--conv-variants",
                                          "6,12,13,14", "--fc-variants", "2,5,7,9", "--out", d / "tuning.json"});
  t->o.command_line = "test";
  ASSERT_EQ(run_tune(t->o), 0);
  const TuningTable table = read_tuning(d / "tuning.json", "");
  ASSERT_EQ(table.entries.size(), 4u);  // (conv, fc) x 2 batches
  // Every timed version's error against the cpu backend is recorded; the choice is within fp32's budget.
  for (const TuningEntry& e : table.entries) {
    EXPECT_EQ(e.error_budget, 1e-6) << e.signature;
    EXPECT_EQ(e.errors.size(), e.times_ms.size()) << e.signature;
    for (const auto& [v, err] : e.errors) EXPECT_TRUE(err >= 0 && err < 1e-4) << e.signature << " v" << v << ": " << err;
    EXPECT_LE(e.errors.at(e.best), 1e-6) << e.signature << " v" << e.best;
  }
  // A budget nothing meets: each choice is the most accurate version, whatever its time.
  auto strict = test::parse_args<TuneOptions>({"--model", d.str(), "--batches", "2", "--reps", "1", "--warmup", "0", "--conv-variants",
                                               "12,13,14", "--fc-variants", "2,5,7", "--error-budget", "1e-12", "--out", d / "strict.json"});
  strict->o.command_line = "test";
  ASSERT_EQ(run_tune(strict->o), 0);
  for (const TuningEntry& e : read_tuning(d / "strict.json", "").entries) {
    EXPECT_EQ(e.error_budget, 1e-12);
    for (const auto& [v, err] : e.errors) EXPECT_LE(e.errors.at(e.best), err) << e.signature << " v" << e.best << " against v" << v;
  }
  m = load_model(d.str());
  BackendOptions o;
  o.tuning_file = d / "tuning.json";
  auto gpu = make_backend("cuda", o);
  gpu->load(m);
  std::vector<float> in = test::random_vector(static_cast<size_t>(m.input.size()) * 33, rng);
  const std::vector<float> got = run(*gpu, m, in, 33);
  EXPECT_LE(test::rel_l2(got, cpu_ref_output(m, in, 33)), 1e-5);
  const int best = *table.lookup("conv", tuning_signature(m, 0), 33);
  EXPECT_EQ(gpu->describe(0).rfind("auto (tuned): v" + std::to_string(best) + " ", 0), 0u) << gpu->describe(0);
  // another device's table
  TuningTable other = table;
  other.device.name = "Some Other GPU";
  write_tuning(d / "other.json", other);
  o.tuning_file = d / "other.json";
  test::expect_error_at([&] { Executor(m, BackendKind::cuda, o); }, d / "other.json", "tuning table measured on 'Some Other GPU', this device is");
  test::write_text(d / "corrupt.json", "{\"format\": \"batchscope-tuning\", \"version\": 1, \"device\": {}}");
  o.tuning_file = d / "corrupt.json";
  test::expect_error_at([&] { Executor(m, BackendKind::cuda, o); }, d / "corrupt.json", "corrupt tuning table");
}

// Two instances of the cuda backend may run at once (throughput --streams) unless two layers take turns in
// one __constant__ weight bank: ECE 408 on conv v3 (both convolutions through c_weights) is refused, on v12
// (global memory) and v10 (only conv1 in the tiled bank) it is not.
TEST(GpuEngine, ConcurrencyHazardNamesSharedConstantBanks) {
  if (std::string why = gpu_missing(); !why.empty()) GTEST_SKIP() << why;
  Model m = load_model(test::data_file("models/ece408"));
  for (const char* v : {"3", "7", "10", "12"}) {
    const Executor ex(m, BackendKind::cuda, test::gpu_options(v));
    const std::string why = ex.planner().concurrency_hazard(64);
    if (std::string(v) == "3" || std::string(v) == "7")
      EXPECT_NE(why.find("take turns in one __constant__ weight bank"), std::string::npos) << v << ": " << why;
    else
      EXPECT_EQ(why, "") << v;
  }
}

}  // namespace
