// LRN with the pooling after it in one kernel on the FP32 path at batches that fill the GPU (lrn_pool.cu's channel walk):
// every value within 2e-5 (|value| + 1) of cpu-ref's over its paths (the 3 x 3 max pooling, the general loop, the flush-to-zero
// special functions and the exact ones, row tiles, 1, 2 and 4 pixels a thread, LRN alone).
// LRN with the pooling after it in one kernel on the 16-bit NHWC path (lrn_pool_half.cu): the same 16-bit words as
// the unfused pair (lrn_half then pool_half) to the bit, in both forms at every case (the ring: whole pixels in strips of
// rows at large batch, one-row strips and narrow channel chunks where forced at batch 1; the direct form: a thread a word
// and its own window), over their launch shapes, window sizes 1-17, odd channel counts
// (the pad channel), max and average pooling with padding and ceil mode; and the backend's plan taking it, within
// the precision's tolerance of cpu-ref. Without a GPU each test skips.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpu_util.hpp"
#include "kernels/cuda/buffer.hpp"
#include "kernels/cuda/half/half_ops.hpp"
#include "kernels/cuda/ops/ops.hpp"
#include "test_util.hpp"

using namespace bs;
using bs::test::gpu_missing;
namespace h = bs::cuda::half;

namespace {

Layer lrn(int size, float k = 2.0f) {
  LrnParams l;
  l.size = size; l.alpha = 1e-2f * size; l.beta = 0.75f; l.k = k;  // large alpha: the window sum matters
  return {"norm", l, {}, {}};
}
Layer pool(PoolKind kind, int k, int s, int p = 0, bool ceil = false) {
  PoolParams pp;
  pp.kind = kind; pp.kh = pp.kw = k; pp.sh = pp.sw = s; pp.ph = pp.pw = p; pp.ceil_mode = ceil;
  return {"pool", pp, {}, {}};
}
Model lrn_pool_model(Shape in, Layer norm, Layer pl) {
  Model m;
  m.name = "lrn-pool";
  m.input = in;
  m.layers = {std::move(norm), std::move(pl)};
  infer_shapes(m, m.name);
  return m;
}

// The 16-bit words of the model's output, fused or as the unfused pair, from the same 16-bit input. The fp16 overflow
// flag goes to *overflow where given; else it must stay down.
std::vector<uint16_t> run_words(const Model& m, const std::vector<float>& in, int n, bool bf16, bool fused, int* overflow = nullptr,
                                h::LrnPoolHalfForm form = h::LrnPoolHalfForm::any) {
  const Shape s = m.layers[0].in, os = m.layers[1].out;
  const int cs = h::stored_channels(s.c);
  const size_t in_words = static_cast<size_t>(n) * s.h * s.w * cs, out_words = static_cast<size_t>(n) * os.h * os.w * cs;
  DeviceBuffer<float> x;
  x.upload(in.data(), in.size());
  DeviceBuffer<uint16_t> x16(in_words), mid(in_words), y(out_words);
  DeviceBuffer<int> ovf(1);
  CUDA_CHECK(cudaMemset(ovf.get(), 0, sizeof(int)));
  CUDA_CHECK(cudaMemset(y.get(), 0xff, out_words * sizeof(uint16_t)));  // every word must be written
  h::to_half_nhwc(x.get(), n, s, x16.get(), bf16, ovf.get(), nullptr);
  const LrnParams& lp = std::get<LrnParams>(m.layers[0].op);
  const PoolParams& pp = std::get<PoolParams>(m.layers[1].op);
  if (fused) {
    h::lrn_pool_half(x16.get(), n, s, lp, pp, os, y.get(), bf16, ovf.get(), nullptr, form);
  } else {
    h::lrn_half(x16.get(), n, s, lp, mid.get(), bf16, ovf.get(), nullptr);
    h::pool_half(mid.get(), n, s, pp, os, y.get(), bf16, nullptr);
  }
  std::vector<uint16_t> out(out_words);
  CUDA_CHECK(cudaMemcpy(out.data(), y.get(), out_words * sizeof(uint16_t), cudaMemcpyDeviceToHost));
  int flag = 0;
  CUDA_CHECK(cudaMemcpy(&flag, ovf.get(), sizeof(int), cudaMemcpyDeviceToHost));
  if (overflow) *overflow = flag;
  else EXPECT_EQ(flag, 0) << "fp16 overflow raised on values of about 1";
  return out;
}

const char* form_name(h::LrnPoolHalfForm f) { return f == h::LrnPoolHalfForm::ring ? " ring" : " direct"; }

Layer lrn_kbeta(int size, float k, float beta) {
  Layer l = lrn(size, k);
  std::get<LrnParams>(l.op).beta = beta;
  return l;
}

}  // namespace

// The FP32 channel walk against cpu-ref value by value: LRN alone at the smallest batch that makes it run (chunks of 32
// channels times images >= the multiprocessors), LRN + pooling at 1 image and at that batch (narrow chunks and short
// tiles, then the widest that fill the GPU), each case in whichever kernel its shape takes. The values are about 1 (LRN
// outputs of inputs in +-4); one off by more than 2e-5 (|want| + 1), or left unwritten (NaN), fails.
TEST(GpuLrnPoolFp32, ChannelWalkMatchesCpuRefValueByValue) {
  SKIP_WITHOUT_GPU();
  struct Case { Shape in; Layer norm; std::optional<Layer> pl; const char* what; };
  const std::vector<Case> cases = {
      {{96, 55, 55}, lrn(5), pool(PoolKind::max, 3, 2), "AlexNet's norm1 + pool1: 4 row tiles, 4 pixels a thread, 3 x 3 max, flush-to-zero"},
      {{256, 27, 27}, lrn(5), pool(PoolKind::max, 3, 2), "norm2 + pool2: one tile"},
      {{40, 21, 21}, lrn(3), pool(PoolKind::avg, 3, 2, 1, true), "average with padding and ceil mode: the general loop; a chunk of 8"},
      {{33, 17, 17}, lrn(7), pool(PoolKind::max, 2, 2, 0, true), "2 x 2 max, ceil mode: windows clipped at the edge; a chunk of 1"},
      {{20, 12, 12}, lrn(9, 0.0f), pool(PoolKind::max, 3, 1, 1), "k = 0: the exact special functions; padded windows"},
      {{24, 40, 40}, lrn_kbeta(5, 1.0f, 1.5f), pool(PoolKind::max, 3, 2), "beta 1.5: the exact special functions"},
      {{16, 9, 100}, lrn(3), pool(PoolKind::max, 3, 1), "686 outputs a tile, past the block's 256 threads: the general loop"},
      {{64, 30, 30}, lrn(5), std::nullopt, "LRN alone, one tile"},
      {{50, 70, 70}, lrn(3), std::nullopt, "LRN alone, 5 row tiles"},
      {{8, 20, 6}, lrn(5), pool(PoolKind::max, 3, 2), "1 pixel a thread"},
  };
  int sms = 0, dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  for (const Case& c : cases) {
    uint32_t seed;
    std::mt19937 rng = test::fresh_rng(&seed);
    Model m;
    m.name = "lrn-walk";
    m.input = c.in;
    m.layers = {c.norm};
    if (c.pl) m.layers.push_back(*c.pl);
    infer_shapes(m, m.name);
    const int chunks = (c.in.c + 31) / 32, big = (sms + chunks - 1) / chunks;
    const LrnParams& lp = std::get<LrnParams>(c.norm.op);
    const PoolParams* pp = c.pl ? &std::get<PoolParams>(c.pl->op) : nullptr;
    const Shape os = m.layers.back().out;
    ASSERT_TRUE(cuda::lrn_walk_runs(big, c.in, lp, pp, os)) << c.what;
    if (!pp) {
      EXPECT_FALSE(cuda::lrn_walk_runs(big - 1, c.in, lp, pp, os)) << c.what << ": one image fewer leaves the GPU short";
    }
    for (const int n : pp ? std::vector<int>{1, big} : std::vector<int>{big}) {
      std::vector<float> in = test::random_vector(static_cast<size_t>(c.in.size()) * n, rng);
      for (float& v : in) v *= 4.0f;
      DeviceBuffer<float> x, y(static_cast<size_t>(os.size()) * n);
      x.upload(in.data(), in.size());
      CUDA_CHECK(cudaMemset(y.get(), 0xff, static_cast<size_t>(os.size()) * n * sizeof(float)));  // NaN where nothing is written
      if (pp) cuda::lrn_pool_forward(x.get(), n, c.in, lp, *pp, os, y.get(), nullptr);
      else cuda::lrn_forward(x.get(), n, c.in, lp, y.get(), nullptr);
      std::vector<float> got(static_cast<size_t>(os.size()) * n);
      CUDA_CHECK(cudaMemcpy(got.data(), y.get(), got.size() * sizeof(float), cudaMemcpyDeviceToHost));
      const std::vector<float> want = test::cpu_ref_output(m, in, n);
      ASSERT_EQ(got.size(), want.size());
      size_t bad = 0, first = 0;
      for (size_t i = 0; i < got.size(); ++i)
        if (!(std::fabs(got[i] - want[i]) <= 2e-5f * (std::fabs(want[i]) + 1.0f)) && bad++ == 0) first = i;
      EXPECT_EQ(bad, 0u) << c.what << ", batch " << n << (cuda::lrn_walk_runs(n, c.in, lp, pp, os) ? " (walk)" : " (strips)") << ": first at "
                         << first << " (" << got[first] << " against " << want[first] << ") seed " << seed;
    }
  }
}

// The walk's launch shape with pooling after it, worked out by hand for 132 multiprocessors (the H100 and H200): the first
// of chunks of 32, 16, 8, 4 channels in the largest tiles, then chunks of 4 in tiles of 4 and 2 pooled rows, with at
// least 198 blocks (1.5 a multiprocessor).
TEST(GpuLrnPoolFp32, WalkLaunchShapeByHand) {
  SKIP_WITHOUT_GPU();
  const PoolParams pp = std::get<PoolParams>(pool(PoolKind::max, 3, 2).op);
  const LrnParams lp = std::get<LrnParams>(lrn(5).op);
  const Shape n1{96, 55, 55}, p1{96, 27, 27}, n2{256, 27, 27}, p2{256, 13, 13};
  struct Want { int n; Shape in, out; bool ok; int chunk, tile_rows, tiles; long long blocks; const char* why; };
  const std::vector<Want> wants = {
      // norm1: 1024 / 55 = 18 LRN rows, so tiles of (18 - 3) / 2 + 1 = 8 pooled rows, 4 of them
      {16, n1, p1, true, 16, 8, 4, 6 * 4 * 16, "norm1, 16 images: chunks of 32 give 192 blocks, of 16 give 384"},
      {17, n1, p1, true, 32, 8, 4, 3 * 4 * 17, "norm1, 17 images: 204 blocks of 32 channels"},
      {1, n1, p1, true, 4, 2, 14, 24 * 14, "norm1, 1 image: chunks of 4 in 4 tiles are 96 blocks, in 7 tiles 168, in 14 336"},
      // norm2: 1024 / 27 = 37 LRN rows, tiles of 18 pooled rows, of which 13 exist: one tile
      {1, n2, p2, true, 4, 4, 4, 64 * 4, "norm2, 1 image: 64 chunks of 4 are 64 blocks, in 4 tiles 256"},
      {4, n2, p2, true, 4, 13, 1, 64 * 4, "norm2, 4 images: chunks of 8 are 128 blocks, of 4 256"},
      {16, n2, p2, true, 16, 13, 1, 16 * 16, "norm2, 16 images: chunks of 32 are 128 blocks, of 16 256"},
      {1, {8, 20, 6}, {8, 9, 2}, false, 0, 0, 0, 0, "8 channels of 20 x 6 at 1 image: 2 chunks in 5 tiles are 10 blocks, the strip kernel"},
  };
  for (const Want& w : wants) {
    const cuda::WalkShape got = cuda::lrn_walk_shape(w.n, w.in, lp, &pp, w.out, 132);
    EXPECT_EQ(got.ok, w.ok) << w.why;
    if (!w.ok || !got.ok) continue;
    EXPECT_EQ(got.chunk, w.chunk) << w.why;
    EXPECT_EQ(got.tile_rows, w.tile_rows) << w.why;
    EXPECT_EQ(got.tiles, w.tiles) << w.why;
    EXPECT_EQ(got.blocks, w.blocks) << w.why;
  }
  // LRN alone keeps chunks of 32 where they number the multiprocessors: 2 chunks of 64 channels from 66 images
  const Shape a{64, 30, 30};
  EXPECT_FALSE(cuda::lrn_walk_shape(65, a, lp, nullptr, a, 132).ok);
  EXPECT_EQ(cuda::lrn_walk_shape(66, a, lp, nullptr, a, 132).chunk, 32);
}

TEST(GpuLrnPoolHalf, FusedKernelGivesTheUnfusedPairsWordsToTheBit) {
  SKIP_WITHOUT_GPU();
  struct Case { Shape in; Layer norm, pl; int n; };
  const std::vector<Case> cases = {
      {{96, 55, 55}, lrn(5), pool(PoolKind::max, 3, 2), 1},    // AlexNet's norm1 + pool1 at batch 1: one-row strips, chunks of 4 words
      {{96, 55, 55}, lrn(5), pool(PoolKind::max, 3, 2), 40},   // ... at a batch that fills the GPU: whole pixels, strips of 4 rows, 16-channel tasks
      {{256, 27, 27}, lrn(5), pool(PoolKind::max, 3, 2), 3},   // norm2 + pool2
      {{7, 13, 11}, lrn(3), pool(PoolKind::avg, 3, 2, 1, true), 5},  // odd channels: the pad channel; average with padding, ceil mode
      {{33, 9, 17}, lrn(9), pool(PoolKind::max, 2, 2, 0, true), 4},
      {{20, 12, 12}, lrn(17, 0.5f), pool(PoolKind::avg, 2, 3), 2},    // the widest window; stride beyond the window (rows skipped)
      {{24, 12, 12}, lrn(17, 0.5f), pool(PoolKind::max, 2, 3), 3},    // ... in 8-channel tasks (halos of 4 words)
      {{12, 10, 10}, lrn(1), pool(PoolKind::max, 3, 1, 1), 2},       // a window of one channel; stride 1 (every row in 3 windows)
      {{64, 30, 30}, lrn(7), pool(PoolKind::max, 5, 2, 2), 70},
      {{40, 21, 21}, lrn(5), pool(PoolKind::avg, 3, 2), 1},     // 8-channel tasks in chunks of 4 words: halos across chunks
      {{30, 11, 11}, lrn(5), pool(PoolKind::max, 3, 2), 2},     // 15 words a pixel: 1-word tasks
      {{32, 12, 12}, lrn(17, 0.5f), pool(PoolKind::max, 2, 3), 40},   // 16-channel tasks in chunks of 8 words, halos of 4 across chunks
      {{15, 9, 9}, lrn(5), pool(PoolKind::avg, 3, 2, 1, true), 60},   // one 16-channel task a pixel, its last channel the pad
      {{48, 13, 13}, lrn(9), pool(PoolKind::max, 3, 2), 140},        // three 16-channel tasks a pixel, strips of 4 rows
  };
  for (const Case& c : cases) {
    uint32_t seed;
    std::mt19937 rng = test::fresh_rng(&seed);
    const Model m = lrn_pool_model(c.in, c.norm, c.pl);
    std::vector<float> in = test::random_vector(static_cast<size_t>(m.input.size()) * c.n, rng);
    for (float& v : in) v *= 4.0f;
    for (bool bf16 : {false, true}) {
      const std::vector<uint16_t> unfused = run_words(m, in, c.n, bf16, false);
      for (h::LrnPoolHalfForm form : {h::LrnPoolHalfForm::ring, h::LrnPoolHalfForm::direct}) {
        const std::vector<uint16_t> fused = run_words(m, in, c.n, bf16, true, nullptr, form);
        ASSERT_EQ(fused.size(), unfused.size());
        size_t differ = 0, first = fused.size();
        for (size_t i = 0; i < fused.size(); ++i)
          if (fused[i] != unfused[i] && differ++ == 0) first = i;
        EXPECT_EQ(differ, 0u) << "LRN " << std::get<LrnParams>(c.norm.op).size << " on " << c.in.c << "x" << c.in.h << "x" << c.in.w
                              << " batch " << c.n << (bf16 ? " bf16" : " fp16") << form_name(form)
                              << ": first at word " << first << " seed " << seed;
      }
    }
  }
}

// fp16's range: with k = 1e-4 and a negligible alpha the factor is k^-0.75 = 1000, so inputs of 70-100 give LRN values of
// 7e4-1e5, past fp16's 65504. The fused kernel (each form) checks each thread's largest value once: it must raise the flag
// where the unfused LRN kernel raises it (one value out of range is enough), and not at 60 (6e4, in range).
TEST(GpuLrnPoolHalf, FusedKernelRaisesFp16OverflowWhereTheUnfusedPairDoes) {
  SKIP_WITHOUT_GPU();
  for (Shape in : {Shape{96, 13, 13}, Shape{30, 9, 9}}) {  // 8-channel and 1-word tasks
    LrnParams lp;
    lp.size = 5; lp.alpha = 1e-12f; lp.beta = 0.75f; lp.k = 1e-4f;
    const Model m = lrn_pool_model(in, {"norm", lp, {}, {}}, pool(PoolKind::max, 3, 2));
    for (float big : {60.0f, 100.0f}) {
      std::vector<float> x(static_cast<size_t>(m.input.size()) * 2, 1.0f);
      x[x.size() / 2 + 7] = big;  // one value, in the second image
      int unfused = -1;
      run_words(m, x, 2, false, false, &unfused);
      EXPECT_EQ(unfused, big > 65.504f ? 1 : 0) << "the unfused LRN kernel's flag, input " << big;
      for (h::LrnPoolHalfForm form : {h::LrnPoolHalfForm::ring, h::LrnPoolHalfForm::direct}) {
        int fused = -1;
        run_words(m, x, 2, false, true, &fused, form);
        EXPECT_EQ(fused, unfused) << to_string(in) << ", input " << big << form_name(form);
      }
    }
  }
}

// The launch shape, worked out by hand for 132 multiprocessors (the H100 SXM).
TEST(GpuLrnPoolHalf, LaunchShapeCoversTheGpuAtEveryBatch) {
  SKIP_WITHOUT_GPU();
  const PoolParams pp = std::get<PoolParams>(pool(PoolKind::max, 3, 2).op);
  const Shape n1{96, 55, 55}, p1{96, 27, 27}, n2{256, 27, 27}, p2{256, 13, 13};
  // the direct form up to 768 words a multiprocessor (101,376): norm1 at batch 1 is 27 x 27 x 48 = 34,992 words, 274 blocks
  // of 128 threads; at 2 images 69,984 words, at 3 104,976 (the ring)
  h::LrnPoolHalfGrid g = h::lrn_pool_half_grid(1, n1, pp, p1, 132);
  EXPECT_TRUE(g.direct);
  EXPECT_EQ(g.vec, 1);
  EXPECT_EQ(g.grid[0], 274);
  EXPECT_TRUE(h::lrn_pool_half_grid(2, n1, pp, p1, 132).direct);
  EXPECT_FALSE(h::lrn_pool_half_grid(3, n1, pp, p1, 132).direct);
  // norm2: 13 x 13 x 128 = 21,632 words an image, 169 blocks at 1; direct up to 4 images (86,528), the ring at 5 (108,160)
  g = h::lrn_pool_half_grid(1, n2, pp, p2, 132);
  EXPECT_TRUE(g.direct);
  EXPECT_EQ(g.grid[0], 169);
  EXPECT_TRUE(h::lrn_pool_half_grid(4, n2, pp, p2, 132).direct);
  EXPECT_FALSE(h::lrn_pool_half_grid(5, n2, pp, p2, 132).direct);
  // ... on a GPU of 66 multiprocessors the limit halves: norm2 at 2 images direct, at 3 the ring
  EXPECT_TRUE(h::lrn_pool_half_grid(2, n2, pp, p2, 66).direct);
  EXPECT_FALSE(h::lrn_pool_half_grid(3, n2, pp, p2, 66).direct);
  // the ring forced at batch 1: one-row strips, then chunks of 24, 12, 8, 4 words (whole 4-word tasks), 12 x 27 blocks
  g = h::lrn_pool_half_grid(1, n1, pp, p1, 132, h::LrnPoolHalfForm::ring);
  EXPECT_FALSE(g.direct);
  EXPECT_EQ(g.strip, 1);
  EXPECT_EQ(g.cw, 4);
  EXPECT_EQ(g.vec, 4);
  EXPECT_EQ(g.grid[0], 12);
  EXPECT_EQ(g.grid[1], 27);
  // batch 40: 7 strips of 4 rows x 40 images = 280 blocks of whole pixels (48 words; a ring of 3 x 55 x 48 words = 31.7 KB),
  // 16-channel tasks
  g = h::lrn_pool_half_grid(40, n1, pp, p1, 132);
  EXPECT_FALSE(g.direct);
  EXPECT_EQ(g.strip, 4);
  EXPECT_EQ(g.cw, 48);
  EXPECT_EQ(g.vec, 8);
  EXPECT_EQ(g.grid[1] * g.grid[2], 280);
  // norm2 at batch 1024: 128 words a pixel (a ring of 3 x 27 x 128 words = 41.5 KB, within 48 KB)
  g = h::lrn_pool_half_grid(1024, n2, pp, p2, 132);
  EXPECT_EQ(g.cw, 128);
  EXPECT_EQ(g.grid[0], 1);
  EXPECT_EQ(g.grid[1], 4);
  // a plane too wide for whole pixels: 3 rows x 200 pixels x 48 words = 115 KB, halved to 24 words (57.6 KB), 12 (28.8 KB)
  g = h::lrn_pool_half_grid(1024, {96, 200, 200}, pp, {96, 99, 99}, 132);
  EXPECT_FALSE(g.direct);
  EXPECT_EQ(g.cw, 12);
  // 2 x 9 channels: words of 1-channel pairs (no 4-word tasks); 3 rows x 3000 pixels x 5 words = 180 KB, halved to 3 words
  // (108 KB), 2 (72 KB), 1 (36 KB); at 4 images its 59,960 words take the direct form unless the ring is asked for
  g = h::lrn_pool_half_grid(4, {9, 5, 3000}, pp, {9, 2, 1499}, 132, h::LrnPoolHalfForm::ring);
  EXPECT_FALSE(g.direct);
  EXPECT_EQ(g.cw, 1);
  EXPECT_EQ(g.vec, 1);
  EXPECT_TRUE(h::lrn_pool_half_grid(4, {9, 5, 3000}, pp, {9, 2, 1499}, 132).direct);
  // the direct form's words are counted in 32 bits: asked for at 5000 x 99 x 99 x 48 = 2.35e9 words it is the ring
  EXPECT_FALSE(h::lrn_pool_half_grid(5000, {96, 200, 200}, pp, {96, 99, 99}, 132, h::LrnPoolHalfForm::direct).direct);
}

// The cuda backend plans the fused kernel for LRN then pooling in fp16 and bf16, within the precision's tolerance of
// cpu-ref; an LRN with no pooling after it, or a window beyond 17 channels, runs the LRN kernel alone.
TEST(GpuLrnPoolHalf, BackendPlansItAndMatchesCpuRef) {
  SKIP_WITHOUT_GPU();
  uint32_t seed;
  std::mt19937 rng = test::fresh_rng(&seed);
  struct Case { Model m; std::string describe0; };
  Model alone;
  alone.name = "lrn-alone";
  alone.input = {10, 9, 9};
  alone.layers = {lrn(5), {"relu", ActParams{Act::relu}, {}, {}}};
  infer_shapes(alone, alone.name);
  const std::vector<Case> cases = {
      {lrn_pool_model({96, 27, 27}, lrn(5), pool(PoolKind::max, 3, 2)), "lrn+max_pool kernel"},
      {lrn_pool_model({9, 14, 15}, lrn(3), pool(PoolKind::avg, 3, 2, 1, true)), "lrn+avg_pool kernel"},
      {lrn_pool_model({24, 8, 8}, lrn(19), pool(PoolKind::max, 2, 2)), "lrn kernel"},
      {alone, "lrn kernel"},
  };
  for (const Case& c : cases)
    for (int n : {1, 6})
      for (const char* p : {"fp16", "bf16"}) {
        std::vector<float> in = test::random_vector(static_cast<size_t>(c.m.input.size()) * n, rng);
        auto gpu = test::open_backend(c.m, "cuda", test::guarded_options("", "", p));
        EXPECT_EQ(gpu->describe(0), c.describe0) << c.m.layers[0].in.c << " " << p;
        if (c.describe0 != "lrn kernel") {
          EXPECT_EQ(gpu->describe(1), "fused into norm");
        }
        const double err = test::rel_l2(test::guarded_forward(*gpu, c.m, in, n).out, test::cpu_ref_output(c.m, in, n));
        EXPECT_LE(err, precision_tolerance(parse_enum<Precision>(p, "--precision"))) << c.describe0 << " " << p << " batch " << n << " seed " << seed;
      }
}
