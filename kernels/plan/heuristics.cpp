// What auto runs without a tuning table: per layer and batch size, a version of the cuda menus chosen from the layer's
// shape and the device's multiprocessor count, measured on the H100 (experiments/alexnet-engine.md,
// precision-tf32.md, precision-half.md). heuristic_text says the same in words, for `batchscope variants`.
#include <utility>

#include "kernels/plan/plan.hpp"
#include "weights_tools/error.hpp"

namespace bs {
namespace {

const Impl& version(LayerKind op, int v) { return registry().version(op, v, "auto"); }
bool runs(LayerKind op, int v, const Layer& l) {
  const Impl* i = registry().find(op, BackendKind::cuda, v);
  return i && i->check(l).ok;
}

// FP32. v11 where compiled for the shape: measured fastest on ECE 408 (0.489 ms, H100). Otherwise from the AlexNet
// tuning runs on the H100: v14's 64x64 tiles win where v13's 128x64 grid is under one block per SM (batch 1) or where
// 64-row tiles waste fewer filter rows (conv4's 192 per group: 3 full tiles against 2 at 75 %); v13 everywhere else.
int conv_fp32(const Layer& l, int n, int sms) {
  if (runs(LayerKind::conv, 11, l)) return 11;
  const ConvParams& p = std::get<ConvParams>(l.op);
  const long long cols = static_cast<long long>(n) * l.out.h * l.out.w;
  const int mg = p.filters / p.groups;
  const long long tiles = ((cols + 63) / 64) * ((mg + 127) / 128) * p.groups;
  const double use128 = static_cast<double>(mg) / ((mg + 127) / 128 * 128), use64 = static_cast<double>(mg) / ((mg + 63) / 64 * 64);
  return tiles < sms || use64 > use128 + 0.1 ? 14 : 13;
}
// A strided convolution over fewer than 8 channels with one group (AlexNet's conv1): v51-v56 copy it space-to-depth
// (conv_wgmma_3xf16.cu's `rewrites`), which makes it worth their while.
bool space_to_depth(const Layer& l) {
  const ConvParams& p = std::get<ConvParams>(l.op);
  return p.groups == 1 && l.in.c < 8 && p.sh == p.sw && p.sh >= 2 && p.sh <= 4 && !p.dilated();
}

// FP32 on Hopper, where the wgmma versions run: v51-v53 (3xFP16: three FP16 products of scaled hi/lo parts,
// FP32-accurate like v34-v36's 3xTF32 at 4e-7 a layer, and 1.5-2.2x faster: `tune`, H100,
// experiments/tuning-accuracy.md, "3xFP16 on the device"), from the batch where v13's grid fills a quarter of the GPU
// (below). Since the epilogue over the whole accumulator (7647278) the tile that wins moved (`tune` on the H100,
// AlexNet at 128 and 1024, VGG-16 at 256; experiments/tuning-accuracy.md, "Tile choices after the epilogue"):
//   v52 (128 x 128, two warpgroups) for a multiple of 128 filters per group where its grid fills two waves (AlexNet's
//     conv2, conv3, conv5: 0.81-0.96x the time of v53 / v51, chosen before; VGG's 128-512: 0.66-0.90x);
//   v53 (192 x 64) for 64 (VGG's conv1_2: 0.88x v51), or 128 below two waves of v52;
//   v51 (192 x 96) for the rest (AlexNet's conv4, 192 a group: 0.83x v52).
// Under 16 channels per group v51 takes the strided layers it rewrites space-to-depth (AlexNet's conv1: 2.82 ms at
// 1024 against v52's 3.30), and v36 (3xTF32, 192 x 64, NHWC copy) the rest (VGG's conv1_1, 3 channels at stride 1:
// 4.43 ms against v14's 6.51 and v53's 6.45).
// Small grids, from `tune` on the H200 with the cluster versions (AlexNet at 2-64 images, each layer alone with its
// input pass; experiments/batch1-latency.md, "`tune` with the cluster versions, and auto's FP32 rule at small grids"):
//   from a quarter of the GPU in v13's 128 x 64 blocks (was half: conv3 and conv4 at 4 images took v49, 41 and 32 us in
//     the network, where v62 takes 30.5 and 29.0 alone; conv5 at 8 v14, 46 us, where v53 takes 31); below it v49 / v14
//     (conv5 at 4 images 24 us on v49, 26-27 on the wgmma versions);
//   conv1 rewritten space-to-depth: v49 below a quarter of the GPU in v51's blocks (2 images: 26 us against v51's 36),
//     v53 below half (4 images: 29 against 35), else v51 (v62 was 1.2 and 3.8 us slower at 8 and 16 images in the
//     network, though `tune` had it 0-2 % faster);
//   v62 (v51's tiles, the split-K reduced in a cluster) where v51's grid is under a quarter of the GPU (AlexNet's conv3
//     and conv4 at 4 images 30.5 and 29.0 us alone against v51's 35.4 and 35.5; at 8 conv3 2 us faster in a trace,
//     conv4 0.6 slower). Under one wave it was no better: at 16 images conv3 2.6 us faster and conv4 0.7 slower, and
//     torchvision's AlexNet 4-5 us slower in each of conv2-conv5.
// 0: none of them.
int conv_fp32_wgmma(const Layer& l, int n, int sms) {
  const ConvParams& p = std::get<ConvParams>(l.op);
  const int mg = p.filters / p.groups, cg = l.in.c / p.groups;
  const long long cols = static_cast<long long>(n) * l.out.h * l.out.w;
  const long long blocks51 = (cols + 191) / 192 * ((mg + 95) / 96) * p.groups;
  if (cg < 16 && space_to_depth(l)) {
    if (!runs(LayerKind::conv, 51, l) || 4 * blocks51 < sms) return 0;
    return 2 * blocks51 < sms && runs(LayerKind::conv, 53, l) ? 53 : 51;
  }
  if (4 * ((cols + 63) / 64) * ((mg + 127) / 128) * p.groups < sms) return 0;
  if (cg < 16) return runs(LayerKind::conv, 36, l) ? 36 : 0;
  // v52's 128 x 128 tiles: from two waves of them (AlexNet's conv2 at 16 images, 184 blocks, ran 0.088 ms on v52
  // against v53's 0.078).
  const long long blocks52 = (cols + 127) / 128 * (mg / 128) * p.groups;
  if (mg % 128 == 0 && blocks52 >= 2LL * sms && runs(LayerKind::conv, 52, l)) return 52;
  if (mg % 64 == 0 && mg <= 128 && runs(LayerKind::conv, 53, l)) return 53;
  if (4 * blocks51 < sms && runs(LayerKind::conv, 62, l)) return 62;
  if (runs(LayerKind::conv, 51, l)) return 51;
  return 0;
}
// 16-bit on Hopper, where conv v39-v45 (wgmma) run (a multiple of 8 channels per group as stored). From the AlexNet
// tuning runs on the H100 (experiments/precision-half.md, "16-bit convolutions on wgmma"), at batch 16 to 1024 every
// layer's best was one of them, 0.6-0.85x v20/v21's time:
//   batch 1 (v20's 128 x 64 tiles under a quarter of the multiprocessors): none clearly faster than v21, some 1.3x
//     slower, so v21 stays;
//   K up to 512 (conv1 rewritten by v38: 7 stages of 64): v65, v44's 128 x 96 in two blocks per multiprocessor with 4
//     stages where v44 has 3 (on the H200, AlexNet's conv1 in fp16 / bf16 1-4 % faster at 16-1,024 images, bf16 at 16
//     7 %: experiments/results/h200-wgmma-half-epilogue/), or for a multiple of 64 filters that is not one of 96
//     (VGG-16's conv1_1 rewritten by v38: K = 72) v46, 128 x 64, whose columns are all filters where a third of v44's
//     would be empty;
//   128-row tiles under one block per multiprocessor (conv3-conv5 at batch 16): v41 (128 x 96);
//   else by the filters per group: a multiple of 128 (conv2, conv3, conv5) v45 (128 x 128, two blocks per
//     multiprocessor), of 96 (conv4) v42 (256 x 96 on four warpgroups), of 64 (VGG-16's conv1_2) v46 (128 x 64, two
//     blocks per multiprocessor), other counts v43 (192 x 128 on three).
// The cluster versions v60 (v44's 128 x 96 tiles) and v61 (v45's 128 x 128), whose split-K is reduced in a
// thread-block cluster, take the grids under one wave: below a quarter of the multiprocessors (where v48 or v21 ran
// before), and in v41's place unless v41's own tiles fill half the multiprocessors to all of them with no empty
// columns (a multiple of 96 filters: AlexNet's conv3 and conv4 at 16 images). `tune` on the H200 (AlexNet, fp16 and
// bf16; experiments/batch1-latency.md, "Split-K in a cluster on wgmma"), against v41: conv2-conv5 at 8 images 0.79-0.86x
// its time, conv5 at 16 0.90x, conv3 and conv5 at 32 0.80-0.81x; against v48 at 4 images 0.91-0.98x; conv3 and conv4 at 16
// 1.03-1.07x (v41 kept). v60 for a multiple of 96 filters whose 96-wide tiles fit one wave (conv3 at 4 and 8 images:
// 0.96x v61), else v61 for a multiple of 128 (conv2, conv5; conv3 at 32: 0.91x v60), else v60.
// 0: none of them.
// A convolution's 128-pixel x 128-filter tiles at n images (v45's and v61's blocks).
long long tiles128(const Layer& l, int n) {
  const ConvParams& p = std::get<ConvParams>(l.op);
  const long long pixels = static_cast<long long>(n) * l.out.h * l.out.w;
  return (pixels + 127) / 128 * ((p.filters / p.groups + 127) / 128) * p.groups;
}
int conv_half_wgmma(const Layer& l, int n, int sms) {
  if (!runs(LayerKind::conv, 39, l)) return 0;
  const ConvParams& p = std::get<ConvParams>(l.op);
  const int mg = p.filters / p.groups;
  const long long pixels = static_cast<long long>(n) * l.out.h * l.out.w, rows = (pixels + 127) / 128;
  const long long t96 = rows * ((mg + 95) / 96) * p.groups, t128 = tiles128(l, n);
  const int cluster = !runs(LayerKind::conv, 60, l) ? 0 : mg % 96 == 0 && t96 <= sms ? 60 : mg % 128 == 0 ? 61 : 60;
  if (rows * ((mg + 63) / 64) * p.groups < sms / 4) return cluster;
  const long long k = static_cast<long long>(p.kh) * p.kw * (p.groups == 1 ? l.in.c + (l.in.c & 1) : l.in.c / p.groups);
  if (k <= 8 * 64) {
    // v72 (the halo version: the weights resident, each tile's input rows read once) where its 256-pixel tiles make 2.5
    // waves or more; under that its persistent blocks' last round runs part-empty and v65 wins (H200, conv1 after v38
    // forced: 0.99x v65's time at 32 images, 0.90x at 1,024; 1.07-1.13x at 16-24: experiments/results/h200-halo/).
    if (mg % 96 == 0 && runs(LayerKind::conv, 72, l) && 2 * ((pixels + 255) / 256 * (mg / 96) * p.groups) >= 5LL * sms) return 72;
    return mg % 96 != 0 && mg % 64 == 0 ? 46 : 65;
  }
  if (t128 < sms) return cluster && !(mg % 96 == 0 && 2 * t96 > sms && t96 <= sms) ? cluster : 41;
  return mg % 128 == 0 ? 45 : mg % 96 == 0 ? 42 : mg % 64 == 0 ? 46 : 43;
}
// The TMA twin of a cp.async 16-bit wgmma version (conv_wgmma_tma.cu: the same tiles, products and epilogue, each stage
// loaded by one thread's bulk tensor copies), for a multiple of 64 channels per group as stored (one 64-channel box a
// stage): AlexNet's conv3-conv5 on the H200 0.77-0.90x their twins' time at 16-1,024 images. With 16-channel boxes (48
// channels a group: conv1 after v38, conv2) they were 4-12 % slower at 128-1,024 images, 4-7 % faster on conv2 and conv5
// at 16 (experiments/results/h200-wgmma-tma/, calls 1-2).
// {cp.async version, its TMA twin}
constexpr std::pair<int, int> kTmaTwins[] = {{45, 66}, {65, 67}, {42, 68}, {61, 69}, {60, 70}, {41, 71}};
// With 16-channel boxes v66 (v45's twin) still wins under two waves of v45's blocks (two a multiprocessor): AlexNet's
// conv2 (48 channels a group) in `tune` on the H200, fp16, v66 against v45: 0.98x at 8 images, 0.96x at 12 and 16, 0.97x
// at 24 and 32 (t128 = 366 blocks, 1.4 waves), 1.00x at 64 (730, 2.8 waves), 1.01-1.03x at 128-1,024
// (experiments/results/h200-b16/).
int tma_twin(int v, const Layer& l, int n, int sms) {
  const ConvParams& p = std::get<ConvParams>(l.op);
  const int cg = p.groups == 1 ? l.in.c + (l.in.c & 1) : l.in.c / p.groups;
  for (const auto& [cp, t] : kTmaTwins)
    if (cp == v) {
      if (!runs(LayerKind::conv, t, l)) return v;
      return cg % 64 == 0 || (v == 45 && cg % 16 == 0 && tiles128(l, n) < 4LL * sms) ? t : v;
    }
  return v;
}
// Up to this many images the small-tile versions hand their split-K to a thread-block cluster (conv v48-v50: no
// workspace, no reduction kernel) where the GPU launches clusters; measured on the H100 (experiments/batch1-latency.md,
// "Split-K in a cluster").
constexpr int kClusterSplitImages = 4;
// From this many images the 16-bit wgmma versions (v60 and v61 where v48 ran) take over from v48: `tune` on the H200
// (AlexNet conv2-conv5, fp16 and bf16) at 4 images 0.91-0.98x v48's time; at 2 v48 won conv2 and conv5 (v60 0.93-0.95x
// on conv3 and conv4), at 1 every layer but conv2.
constexpr int kHalfWgmmaImages = 3;
// The cluster twin of a small-tile version (v21 -> v48, v14 -> v49, v18 -> v50) at a few images, where it runs.
int cluster_twin(int v, const Layer& l, int n) {
  const int twin = v == 21 ? 48 : v == 14 ? 49 : v == 18 ? 50 : 0;
  return twin && n <= kClusterSplitImages && runs(LayerKind::conv, twin, l) ? twin : v;
}

// From the AlexNet tuning runs on the H100: streaming wins while the batch is a few images (one pass over the weights),
// the 64x64-tile engine (v8) up to a few hundred, the 128x128 one (v7) beyond.
int fc_fp32(int n) { return n <= 4 ? 5 : n <= 256 ? 8 : 7; }
// FP32 on Hopper from 65 images: fc v18 (3xFP16 on wgmma, the layer as a 1x1 convolution on conv v51). AlexNet's fc6 +
// fc7 + fc8 on the H100: 0.244 ms at batch 128 against v7's 0.306, 0.891 at 1024 against 2.040; at 16 images v8's 0.168
// against 0.187 (experiments/tuning-accuracy.md, "3xFP16 on the device").
constexpr int kFc3xF16Images = 65;
// FP32 at 5-16 images: fc v20 (the weights streamed once per 16 images on mma.sync, 3xTF32). AlexNet's fc6 + fc7 + fc8
// on the H100 (experiments/batch1-latency.md, "fc v20"): 0.104 ms at 8 images against v8's 0.166 and v5's 0.143, 0.107
// at 16 against 0.169 and 0.246; at 1-4 images v5 stays ahead (0.083-0.097 against 0.099-0.102), at 32 v8 (0.174
// against 0.203: v20 reads the weights twice).
constexpr int kFcStreamTf32Images = 16;
// 16-bit on Hopper: fc v16 (the layer as a 1x1 convolution on the wgmma versions) from this batch on. The AlexNet tuning
// run on the H100 (experiments/precision-half.md, "fc v16"): fc6 + fc7 + fc8 at 16 images 1.04x v13's time, at 64 0.97x,
// 128 0.89x, 256 0.98x, 512 1.00x (fc7 alone 1.1-1.2x v12 at 256-512), 1024 0.51x v12's.
constexpr int kFcWgmmaImages = 64;
// --precision tf32 on Hopper: fc v19 (the scaled FP16 product on wgmma, the layer as a 1x1 convolution on conv v54) where
// the layer's product is more than 2^31 multiply-adds (images x inputs x outputs). AlexNet on the H100, forced versions
// in one call, v19 against v11 (experiments/tuning-accuracy.md, "One scale per image"): fc6 (37.7 M weights) 0.074 ms
// against 0.077 at 64 images, 0.082 / 0.114 at 128, 0.101 / 0.241 at 256; fc7 (16.8 M) 0.048 / 0.040 at 64,
// 0.057 / 0.057 at 128, 0.073 / 0.112 at 256; fc8 (4.1 M) 0.032 / 0.024 at 128, 0.039 / 0.035 at 256.
constexpr double kFcF16sMacs = 2147483648.0;

}  // namespace

int cp_async_twin(int version) {
  for (const auto& [cp, t] : kTmaTwins)
    if (t == version) return cp;
  return version;
}

const Impl* heuristic_version(const Layer& l, int n, Precision p, int sms, WeightFormat w) {
  const bool conv = l.kind() == LayerKind::conv;
  if (!conv && l.kind() != LayerKind::fc) fail("layer '" + l.name + "'", "no menu for this layer kind (internal)");
  int v = 0;
  if (!conv && w == WeightFormat::int8 && n <= kInt8StreamImages) {
    v = 15;  // a quarter of FP32's weight bytes, half of 16-bit's, in every precision
  } else if (is_half(p)) {
    if (!conv) {
      // v17 streams the weights once per pass of up to 16 images on the tensor cores: AlexNet's fc6-fc8 on the H100
      // (experiments/batch1-latency.md, "fc v17") 51.7-52.0 us at 2 images (v14 54.2-54.5), 54.1 at 8 and 57.1-57.4
      // at 16 (v13 71.2 and 73.5-74.1); at 1 image v14 stays ahead (45.5-45.8 against 51.4-51.6), at 32 v13 (78 against
      // 103 us, v17 reading the weights twice).
      v = n <= 1 ? 14 : n <= 16 ? 17 : n <= 256 ? 13 : 12;
      if (n >= kFcWgmmaImages && runs(LayerKind::fc, 16, l)) v = 16;  // the layer as a 1x1 convolution on wgmma
    } else if (runs(LayerKind::conv, 58, l)) {
      // ECE 408's shapes: v58 holds the weights in registers (H200, 10,000 images, fp16: conv1 0.063 ms against v22's
      // 0.089, conv2 0.082 against 0.093; faster at 1 and 1,024 images too).
      v = 58;
    } else {
      const ConvParams& c = std::get<ConvParams>(l.op);
      const long long pixels = static_cast<long long>(n) * l.out.h * l.out.w;
      const long long blocks = (pixels + 127) / 128 * ((c.filters / c.groups + 63) / 64) * c.groups;
      v = cluster_twin(blocks < 2LL * sms ? 21 : 20, l, n);
      // Fewer than 8 channels (AlexNet's conv1, VGG's conv1_1): v38's space-to-depth rewrite, padded to 8-channel runs,
      // gathers 16 bytes at a time (on wgmma, which takes only whole runs, where the GPU has it).
      // Measured (H100) 0.81x v20's time at batch 1024, 0.89x at 16, but 1.17x at batch 1 (v21's small grid): the
      // rewrite's extra pass costs more than it saves there.
      if (v == 20 && runs(LayerKind::conv, 38, l)) v = 38;
      // v48 at 1-2 images beats the wgmma versions too (H100, AlexNet at 2 and 4 images: conv2 13.4 against v41's
      // 17.2 us at 2, conv2-conv4 0.88-0.96x v41's time at 4; at 8 v41 wins conv3 and conv4); from 3 images the
      // cluster versions v60 / v61 take its layers (kHalfWgmmaImages).
      if (v != 48 || n >= kHalfWgmmaImages)
        if (const int w = conv_half_wgmma(l, n, sms)) v = w;
      v = tma_twin(v, l, n, sms);
      if (!runs(LayerKind::conv, v, l)) v = 37;  // odd channel counts per group (depthwise): the direct kernel
    }
  } else if (p == Precision::tf32) {
    if (conv) {
      if (runs(LayerKind::conv, 33, l)) {
        const ConvParams& c = std::get<ConvParams>(l.op);
        const long long pixels = static_cast<long long>(n) * l.out.h * l.out.w;
        const long long blocks33 = (pixels + 255) / 256 * ((c.filters / c.groups + 95) / 96) * c.groups;
        if (blocks33 >= 2LL * sms) v = 33;
        // A long K (VGG-16's 512-channel layers, K = 4608): v28's 128 x 96 tiles on two warpgroups took 0.74-0.76x v33's
        // time in `tune` on the H100 (batch 256; experiments/precision-half.md, "VGG-16: conv1_1 by v38, pooling"), where
        // at K = 2304 (conv3_2, conv4_1) v33 stayed 0.85x v28's.
        const long long k = static_cast<long long>(c.kh) * c.kw * (l.in.c / c.groups);
        if (v == 33 && k > 4096 && runs(LayerKind::conv, 28, l)) v = 28;
        // Where a wgmma version fills the GPU, the scaled FP16 product (v54-v56: TF32's rounding at FP16's rate) in its
        // place. Since the epilogue over the whole accumulator (7647278), `tune` on the H100 (AlexNet at 128 and 1024,
        // VGG-16 at 256; experiments/tuning-accuracy.md, "Tile choices after the epilogue") takes:
        //   v54 (192 x 96) for a multiple of 128 filters per group (AlexNet's conv2, conv3, conv5: 0.78-0.93x the time
        //     of v56 / v55, chosen before; VGG's 128-512: 0.84-0.89x), and for conv1 rewritten space-to-depth (1.80 ms
        //     at 1024 against v33's 4.73);
        //   v56 (128 x 64) for 64 (VGG's conv1_2: 0.92x v55);
        //   v55 (256 x 96) for the rest (AlexNet's conv4, 192 a group: 0.91x v54 at 1024).
        // VGG's conv1_1 (3 channels, stride 1) stays on v33 (v25, 0.85x its time, reads its activations truncated to
        // TF32).
        if (v) {
          const int mg = c.filters / c.groups, cg = l.in.c / c.groups;
          const int f = space_to_depth(l) ? 54 : cg < 16 ? 0 : mg % 128 == 0 ? 54 : mg == 64 ? 56 : 55;
          if (f && runs(LayerKind::conv, f, l)) v = f;
        } else if (4 * blocks33 >= sms) {
          // Under two waves but a quarter of the multiprocessors or more (AlexNet from a few images): v33 itself, or
          // v54 for conv1 rewritten space-to-depth. In the shipped table (H100, batch 16, before 7647278's epilogue,
          // which sped them up further) v33 took 0.045 / 0.046 / 0.044 ms on conv3 / conv4 / conv5 against v18's
          // 0.096 / 0.076 / 0.059, conv2 0.106 against v17's 0.122, and v54 conv1 0.109 against v17's 0.117. Measured
          // on AlexNet only (tf32 at 16 images 0.612 -> 0.459 ms); VGG-16 below 256 images was not.
          v = space_to_depth(l) && runs(LayerKind::conv, 54, l) ? 54 : 33;
        }
      }
      if (!v) v = cluster_twin(conv_fp32(l, n, sms) == 14 ? 18 : 17, l, n);
    } else {
      const int f = fc_fp32(n);
      v = f == 5 ? 5 : f == 8 ? 11 : 10;
      const FcParams* fp = std::get_if<FcParams>(&l.op);
      const double macs = fp ? static_cast<double>(n) * static_cast<double>(l.in.size()) * fp->outputs : 0.0;
      if (macs > kFcF16sMacs && runs(LayerKind::fc, 19, l)) v = 19;
    }
  } else if (conv) {
    // ECE 408's shapes: v57 (3xFP16 on mma.sync for conv2, v10 for conv1) once its 4-image sets number the SMs, v11
    // below (ECE 408 sweeps, H100, v57 with producer and consumer warps: conv2 0.67x v11's time at 10,000 images, 0.82x
    // at 1024, 1.06x at 512, 1.3-1.6x at 1-256; the network's error against cpu-ref lower than v11's at every batch).
    if (runs(LayerKind::conv, 57, l) && (n + 3) / 4 >= sms) v = 57;
    else v = runs(LayerKind::conv, 11, l) ? 11 : conv_fp32_wgmma(l, n, sms);
    if (!v) v = cluster_twin(conv_fp32(l, n, sms), l, n);
  } else {
    v = n >= kFc3xF16Images && runs(LayerKind::fc, 18, l) ? 18 : fc_fp32(n);
    if (v == 8 && n <= kFcStreamTf32Images && runs(LayerKind::fc, 20, l)) v = 20;
  }
  return &version(l.kind(), v);
}

std::string heuristic_text(LayerKind op) {
  if (op == LayerKind::conv)
    return "v57 where it is compiled for the shape (ECE 408) and its 4-image sets number the SMs or more, else v11 there; on Hopper, where v13's grid fills a quarter of the GPU and a group has 16 "
           "channels or more (a multiple of 8 with groups), v52 (3xFP16 on wgmma, 128 x 128) for a multiple of 128 filters per "
           "group where its tiles fill two waves of the GPU, v53 (192 x 64) for 64 or 128, else v62 (v51's tiles, split-K reduced in a thread-block "
           "cluster) where v51's grid is under a quarter of the GPU, else v51 (192 x 96); for a stride of 2-4 over fewer than 8 channels (rewritten "
           "space-to-depth) where v51's grid fills a quarter of the GPU: v53 below half, else v51; under 16 channels "
           "otherwise v36 (3xTF32 on wgmma, 192 x 64); "
           "else v14 when v13's 128x64 tiles would give fewer blocks than "
           "the GPU has multiprocessors or its 64-row tiles waste fewer filter rows (192 per group; v49 up to 4 images, "
           "v14's split-K reduced in a thread-block cluster where the GPU launches clusters), else v13; with --precision "
           "tf32: where v33 (wgmma) runs (compute capability 9.0) and its 256 x 96 tiles fill two waves of the GPU, the scaled "
           "FP16 product on wgmma: v54 (192 x 96) for a multiple of 128 filters per group, v56 (128 x 64) for 64, v55 (256 x 96) for other counts, v54 for "
           "a stride of 2-4 over fewer than 8 channels (space-to-depth), and under 16 channels otherwise v33 (v28 in its "
           "place for K = C/groups x KH x KW over 4096); where those tiles fill under two waves but a quarter of the "
           "multiprocessors or more, v33 itself (v54 for the space-to-depth case); else "
           "v18 where the fp32 heuristic would take v14 (v50 up to 4 images, as v48), else v17 (v16's 128x128 tiles were 1.2-1.7x slower on the H100); with "
           "fp16 or bf16: v58 where it is compiled for the shape (ECE 408: the weights in registers, conv1 as a banded product); up to 4 images, where the GPU launches clusters "
           "(compute capability 9.0), v48 (v21 with its split-K reduced in a thread-block cluster) where v21 would run, before "
           "the wgmma versions up to 2 images; on Hopper, for a multiple of 8 channels per group as stored: where v20's tiles give under a quarter as many blocks as the GPU has "
           "multiprocessors, from 3 images, a cluster version (v60: wgmma, 128 x 96, split-K reduced in a thread-block cluster, for a multiple of 96 filters whose "
           "96-wide tiles fit one wave, else v61, 128 x 128, for a multiple of 128, else v60); from a quarter on: v65 (wgmma, "
           "128 x 96, 4 stages, two blocks per multiprocessor; v72, the weights resident and each tile's input rows read once, for a multiple of 96 filters "
           "where its 256-pixel tiles make 2.5 waves; v46 for a multiple of 64 filters that is not one of 96) for K up to 512; where 128 x 128 tiles would give fewer blocks "
           "than the GPU has multiprocessors, v41 (128 x 96) if its tiles fill half the multiprocessors to all of them and the filters are a multiple of 96, else the cluster version; else v45 (128 x 128, two blocks per multiprocessor) for a multiple of 128 filters "
           "per group, v42 (256 x 96) for a multiple of 96, v46 (128 x 64) for a multiple of 64, v43 (192 x 128) for other counts; "
           "of these, v41, v42, v45, v60, v61 and v65 as their TMA twins (v71, v68, v66, v70, v69, v67: the same tiles, each stage loaded by "
           "the tensor memory accelerator, one 64-channel box a stage) where a group has a multiple of 64 channels as stored, and v45 as v66 "
           "with 16-channel boxes for a multiple of 16 where its blocks make under two waves (AlexNet's conv2 up to 32 images); "
           "else v21 when v20's tiles would give fewer blocks "
           "than two waves of the GPU, else v20, or v38 (space-to-depth, padded to 8-channel runs) in its place for a stride of 1-4 over fewer than 8 "
           "channels (AlexNet's conv1, VGG's conv1_1); v37 for groups of an odd channel count (depthwise), which v19-v21 cannot pair";
  return "v5 (stream) up to 4 images, v20 (stream-mma-3xtf32) up to 16 where the rows are a multiple of 4 values, v8 up to 64; from 65 images v18 (3xFP16 on wgmma) where it runs (compute capability "
         "9.0), else v8 up to 256, else v7; with --precision tf32: v5 (stream, memory-bound) up to 4 images, "
         "v11 up to 256, else v10, and v19 (the scaled FP16 product on wgmma) where it runs and the product is more than 2^31 multiply-adds (images x inputs x outputs); with fp16 or bf16: v14 (stream) at 1 image, v17 (stream on the tensor cores) up to 16, then from 64 images v16 (wgmma) where it "
         "runs (compute capability 9.0, a multiple of 8 input values), else v13 up to 256, else v12; with --weights int8, "
         "v15 (8-bit rows streamed) up to " + std::to_string(kInt8StreamImages) + " images in every precision, then as above";
}

}  // namespace bs
