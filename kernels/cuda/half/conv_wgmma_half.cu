// Convolution versions v39-v47: the 16-bit path (--precision fp16 / bf16) on the engine's Hopper mainloop
// (gemm_wgmma.cuh), wgmma m64nNk16 with FP32 accumulation. Built for sm_90a only (kernels/CMakeLists.txt); elsewhere
// the versions report that they need it.
//
// The same GEMM as v19-v21 (conv_half.cu), per group z: C (pixels x Mg filters) = X_z (pixels x K) * W_z^T, K = KH x
// KW x Cgs in the order (ky, kx, c), a word holding two neighbouring channels. The 16-bit activations are NHWC already,
// so A is gathered by the TF32 NHWC versions' loaders (wgmma_conv_loads.cuh) with no transpose pass: one 16-byte
// cp.async per 8 channels, which needs a multiple of 8 channels per group as stored (every AlexNet layer but conv1,
// which v38's space-to-depth rewrite turns into 48 channels). B is the weights prepared once as K-major words
// (G, Mg, Kw_pad); wgmma's 16-bit forms read 32 bytes of a K-major row per k step (16 values), as the TF32 form does
// (8 values), so the stages, the 128-byte swizzle and the descriptors are the TF32 versions'. The epilogue is v19-v21's
// (conv_half_shared.cuh): bias, activation, channel pairs stored as words, split-K partial sums reduced after.
//
//   v39 wgmma-half        128 pixels x 128 filters on 2 warpgroups, 5 stages (32 KB each)
//   v40 wgmma-half-192    128 x 192, 4 stages
//   v41 wgmma-half-96     128 x 96, 5 stages
//   v42 wgmma-half-4wg-96 256 x 96 on 4 warpgroups, 4 stages (the TF32 winner's shape, v33)
//   v43 wgmma-half-3wg    192 x 128 on 3 warpgroups, 4 stages (v32's)
//   v44 wgmma-half-96x2   128 x 96, 3 stages (85 KB): two blocks per multiprocessor, so that one block's loads overlap
//                         the other's epilogue where K is short (conv1 rewritten by v38: 7 stages of 64 k)
//   v45 wgmma-half-128x2  128 x 128, 3 stages (97 KB), two blocks per multiprocessor
//   v46 wgmma-half-64     128 x 64, 4 stages (97 KB), two blocks per multiprocessor: 64 filters per group (VGG's first
//                         block) fill it, where the 128-wide tiles leave half their columns empty
//   v47 wgmma-half-4wg-64 256 x 64 on 4 warpgroups, 4 stages (161 KB): half v46's weight reads per product
//   v60 wgmma-half-96c    v44 (128 x 96, 3 stages) with its split-K reduced in a thread-block cluster of up to 8
//                         blocks (gemm_wgmma.cuh): no workspace, no reduction kernel, and two blocks per
//                         multiprocessor, for grids under one wave (AlexNet's conv3-conv5 at 8-16 images)
//   v61 wgmma-half-128c   v45 (128 x 128, 3 stages) with the same cluster split-K
//   v65 wgmma-half-96x2-4s v44 with 4 stages (113 KB): still two blocks per multiprocessor (2 x (113 + 1) KB, the
//                         multiprocessor's 228 KB exactly), and two stages of loads in flight where v44 has one
// The floor and what each measured: experiments/precision-half.md, "16-bit convolutions on wgmma".
#include <algorithm>
#include <climits>
#include <type_traits>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/engine/gemm_launch.cuh"
#include "kernels/cuda/engine/gemm_prep.hpp"
#include "kernels/cuda/engine/gemm_wgmma.cuh"
#include "kernels/cuda/engine/wgmma_conv_loads.cuh"
#include "kernels/cuda/half/conv_half_shared.cuh"
#include "kernels/cuda/half/half_ops.hpp"
#include "kernels/cuda/half/wgmma_half_problem.cuh"
#include "kernels/cuda/impl_hooks.hpp"
#include "weights_tools/error.hpp"

namespace bs::cuda::half {
namespace {

using Geometry = HalfConvGeometry;  // kw_pad: K in words, padded to whole stages
Geometry geometry(Shape is, const ConvParams& c, Shape os, int n) { return half_conv_geometry(is, c, os, n); }


// Calls f.template operator()<Tile, BF16>() for a version's instantiation.
template <bool BF16, class F>
void with_tile(int version, F&& f) {
  constexpr int t = kType<BF16>;
  switch (version) {
    case 39: return f.template operator()<wg::WgTile<128, 5, 128, 2, 1, t>, BF16>();
    case 40: return f.template operator()<wg::WgTile<192, 4, 128, 2, 1, t>, BF16>();
    case 41: return f.template operator()<wg::WgTile<96, 5, 128, 2, 1, t>, BF16>();
    case 42: return f.template operator()<wg::WgTile<96, 4, 256, 4, 1, t>, BF16>();
    case 43: return f.template operator()<wg::WgTile<128, 4, 192, 3, 1, t>, BF16>();
    case 44: return f.template operator()<wg::WgTile<96, 3, 128, 2, 1, t>, BF16>();
    case 45: return f.template operator()<wg::WgTile<128, 3, 128, 2, 1, t>, BF16>();
    case 46: return f.template operator()<wg::WgTile<64, 4, 128, 2, 1, t>, BF16>();
    case 47: return f.template operator()<wg::WgTile<64, 4, 256, 4, 1, t>, BF16>();
    case 60: return f.template operator()<wg::WgTile<96, 3, 128, 2, 1, t, 8>, BF16>();
    case 61: return f.template operator()<wg::WgTile<128, 3, 128, 2, 1, t, 8>, BF16>();
    case 65: return f.template operator()<wg::WgTile<96, 4, 128, 2, 1, t>, BF16>();
    default: fail("--conv-variant", "version " + std::to_string(version) + " is not a 16-bit wgmma version");
  }
}
template <class F>
void with_config(int version, bool bf16, F&& f) {
  if (bf16) with_tile<true>(version, f);
  else with_tile<false>(version, f);
}

template <class T, bool BF16>
int splits_for(const Geometry& g) {
  const long long blocks = ((g.ncols + T::BM - 1) / T::BM) * ((g.mg + T::BN - 1) / T::BN) * g.groups;
  return wg::wgmma_splits<T, WgHalfProblem<BF16>>(blocks, g.kw_pad / T::BK);
}

// Weights (M, Cg, KH, KW) FP32 -> words (G, Mg, Kw_pad): word (r, kw) = filter r at k = 2 kw, 2 kw + 1 of (ky, kx, c)
// over cgs channels; zero past Cg and past K.
template <bool BF16>
__global__ void prepare_kmajor(const float* __restrict__ w, long long rows, int cg, int cgs, int kh, int kwid, int kw_pad,
                               uint32_t* __restrict__ dst) {
  const long long total = rows * kw_pad;
  const int k = kh * kwid * cgs;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long r = i / kw_pad;
    const int kw = static_cast<int>(i - r * kw_pad);
    float v[2] = {0.0f, 0.0f};
    for (int h = 0; h < 2; ++h) {
      const int kk = 2 * kw + h;
      if (kk >= k) continue;
      const int tap = kk / cgs, c = kk - tap * cgs, ky = tap / kwid, kx = tap - ky * kwid;
      if (c < cg) v[h] = w[((r * cg + c) * kh + ky) * kwid + kx];
    }
    dst[i] = pack2<BF16>(v[0], v[1]);
  }
}

template <class T, bool BF16>
void run(const HalfConvArgs& a, const Geometry& g, cudaStream_t s) {
  WgHalfProblem<BF16> pr;
  fill_wg_half_problem(pr, a, g, splits_for<T, BF16>(g));
  const size_t partials = checked_partials<T>(a, g, pr.splits);
  wg::launch_wgmma<T>(pr, g.ncols, g.mg, g.groups, s);
  if (partials > 0) splitk_finish<BF16>(pr.o, s);
}

bool device_can_run() {
  static const bool ok = wg::wgmma_image_ok(wg::wgmma_kernel<wg::WgTile<128, 5, 128, 2, 1, wg::kF16>, WgHalfProblem<false>>);
  return ok;
}

}  // namespace

Support wgmma_half_supports(int version, const Layer& layer, bool pool) {
  const std::string v = "v" + std::to_string(version);
  if (pool) return {false, v + " fuses the activation that follows, not pooling"};
  const ConvParams& c = std::get<ConvParams>(layer.op);
  const Geometry g = geometry(layer.in, c, layer.out, 1);
  if (g.cgs % 8 != 0)
    return {false, v + " reads 8 channels (16 bytes) at a time: it needs a multiple of 8 channels " +
                       (c.groups > 1 ? "per group (this layer has " + std::to_string(g.cg) + ")"
                                     : "as stored, C rounded up to even (this layer has " + std::to_string(g.cgs) + ")")};
  if (Support lim = half_conv_index_limits(v, layer); !lim.ok) return lim;
  if (!device_can_run()) return {false, v + " needs wgmma: a compute capability 9.0 GPU and a build for sm_90 (kernels/CMakeLists.txt adds sm_90a)"};
  if (is_wgmma_tma(version)) return wgmma_tma_limits(version, layer);
  if (is_wgmma_halo(version)) return wgmma_halo_limits(version, layer);
  return {};
}

size_t wgmma_half_prepared_floats(const Layer& layer) {
  const Geometry g = geometry(layer.in, std::get<ConvParams>(layer.op), layer.out, 1);
  return static_cast<size_t>(g.groups) * g.mg * g.kw_pad + static_cast<size_t>(g.kw_pad) / 2;  // words, then the k table
}

size_t wgmma_half_workspace_floats(int version, const Layer& layer, int n, bool bf16) {
  if (is_wgmma_tma(version)) return wgmma_tma_workspace_floats(version, layer, n, bf16);
  if (is_wgmma_halo(version)) return 0;
  const Geometry g = geometry(layer.in, std::get<ConvParams>(layer.op), layer.out, n);
  size_t floats = 0;
  with_config(version, bf16, [&]<class T, bool BF16>() {
    floats = gemm::splitk_workspace_floats<T>(splits_for<T, BF16>(g), g.groups, g.mg, g.ncols);
  });
  return floats;
}

void wgmma_half_prepare_table(const Layer& layer, float* prepared, cudaStream_t s) {
  const ConvParams& c = std::get<ConvParams>(layer.op);
  const Geometry g = geometry(layer.in, c, layer.out, 1);
  build_nhwc_k_table(reinterpret_cast<int2*>(prepared + static_cast<long long>(g.groups) * g.mg * g.kw_pad), g.kw_pad / 4, g.kw, g.cgs / 2,
                     c.kw, c.dh, c.dw, layer.in.w, g.cs_in / 2, s);
}

void wgmma_half_prepare(int, const float* w, const Layer& layer, bool bf16, float* prepared, cudaStream_t s) {
  const ConvParams& c = std::get<ConvParams>(layer.op);
  const Geometry g = geometry(layer.in, c, layer.out, 1);
  const long long rows = static_cast<long long>(g.groups) * g.mg;
  const unsigned blocks = static_cast<unsigned>(std::min<long long>((rows * g.kw_pad + 255) / 256, 8192));
  auto* dst = reinterpret_cast<uint32_t*>(prepared);
  if (bf16) prepare_kmajor<true><<<blocks, 256, 0, s>>>(w, rows, g.cg, g.cgs, c.kh, c.kw, g.kw_pad, dst);
  else prepare_kmajor<false><<<blocks, 256, 0, s>>>(w, rows, g.cg, g.cgs, c.kh, c.kw, g.kw_pad, dst);
  CUDA_CHECK_LAUNCH();
  wgmma_half_prepare_table(layer, prepared, s);
}

void wgmma_half_forward(int version, const HalfConvArgs& a, cudaStream_t s) {
  if (!a.prepared) fail("conv v" + std::to_string(version), "weights were not prepared for the wgmma engine");
  const Geometry g = geometry(a.is, *a.p, a.os, a.n);
  check_half_conv_batch(g, a, "wgmma");
  if (is_wgmma_tma(version)) return wgmma_tma_forward(version, a, s);
  if (is_wgmma_halo(version)) return wgmma_halo_forward(version, a, s);
  with_config(version, a.bf16, [&]<class T, bool BF16>() { run<T, BF16>(a, g, s); });
}

}  // namespace bs::cuda::half

namespace bs::cuda {

void register_conv_wgmma_half(Registry& r) {
  static const ImplHooks hooks{.half_conv_prepare = half::wgmma_half_prepare, .half_conv_forward = half::wgmma_half_forward};
  auto add = [&](int v, const char* name, const char* summary,
                 const char* shapes = "a multiple of 8 channels per group as stored (compute capability 9.0, sm_90a build)") {
    Impl i = cuda_impl(LayerKind::conv, v, name, summary, &hooks);
    i.shapes = shapes;
    i.math = "fp16/bf16";
    i.precisions = {Precision::fp16, Precision::bf16};
    i.fuses_act = true;
    i.dilation = true;  // the k table holds each tap's dilated offsets
    i.prep_layout = 39;  // K-major words (G, Mg, Kw_pad), then the NHWC k table
    i.supports = [v](const Layer& l, const Epilogue& e) { return half::wgmma_half_supports(v, l, e.pool2x2); };
    i.workspace_floats = [v](const Layer& l, Shape, int n, Precision p) { return half::wgmma_half_workspace_floats(v, l, n, p == Precision::bf16); };
    i.prepared_floats = [](const Layer& l, Shape, Precision) { return half::wgmma_half_prepared_floats(l); };
    r.add(std::move(i));
  };
  add(39, "wgmma-half", "the 16-bit path (--precision fp16 or bf16) on the engine's Hopper mainloop: wgmma m64nNk16 from "
                        "128-byte-swizzled shared memory, FP32 accumulation, the NHWC activations gathered 8 channels per "
                        "16-byte cp.async, 128 pixels x 128 filters x 64 k per block, 5 stages, split-K, bias + activation fused");
  add(40, "wgmma-half-192", "v39 with 128 pixels x 192 filters, 4 stages");
  add(41, "wgmma-half-96", "v39 with 128 pixels x 96 filters");
  add(42, "wgmma-half-4wg-96", "v39 with 256 pixels x 96 filters on four warpgroups (512 threads), 4 stages");
  add(43, "wgmma-half-3wg", "v39 with 192 pixels x 128 filters on three warpgroups, 4 stages");
  add(44, "wgmma-half-96x2", "v39 with 128 pixels x 96 filters and 3 stages: two blocks per multiprocessor (for short K)");
  add(45, "wgmma-half-128x2", "v39 with 3 stages: two blocks per multiprocessor");
  add(46, "wgmma-half-64", "v39 with 128 pixels x 64 filters, 4 stages (two blocks per multiprocessor): for 64 filters per group");
  add(47, "wgmma-half-4wg-64", "v39 with 256 pixels x 64 filters on four warpgroups (512 threads), 4 stages");
  add(60, "wgmma-half-96c", "v44 (128 pixels x 96 filters, 3 stages) with its split-K reduced in a thread-block cluster of up "
                            "to 8 blocks: no workspace, no reduction kernel (for grids under one wave)");
  add(61, "wgmma-half-128c", "v45 (128 x 128, 3 stages) with its split-K reduced in a thread-block cluster of up to 8 blocks");
  add(65, "wgmma-half-96x2-4s", "v44 with 4 stages (113 KB): two blocks per multiprocessor, two stages of loads in flight (for short K)");
  // The TMA versions (conv_wgmma_tma.cu): the same tiles, products and epilogue, each stage loaded by one thread's bulk
  // tensor copies (im2col boxes of the activations, tiled boxes of the weights) in place of the block's cp.async.
  const auto tma = [&](int v, const char* name, const char* summary) {
    add(v, name, summary, "a multiple of 16 channels per group as stored, strides up to 8, padding up to 128 (compute capability 9.0, sm_90a build)");
  };
  tma(66, "wgmma-half-tma-128x2", "v45 (128 pixels x 128 filters, 3 stages, two blocks per multiprocessor) with each stage loaded by "
                                  "TMA, issued by one thread: one im2col box of 64 channels of the activations where a group's channels are a "
                                  "multiple of 64 (else four of 16) and one box of the weights");
  tma(67, "wgmma-half-tma-96x2-4s", "v65 (128 x 96, 4 stages, two blocks per multiprocessor) with its stages loaded by TMA (for short K)");
  tma(68, "wgmma-half-tma-4wg-96", "v42 (256 x 96 on four warpgroups, 4 stages) with its stages loaded by TMA");
  tma(69, "wgmma-half-tma-128c", "v61 (128 x 128, split-K reduced in a cluster of up to 8 blocks) with its stages loaded by TMA");
  tma(70, "wgmma-half-tma-96c", "v60 (128 x 96, split-K reduced in a cluster) with its stages loaded by TMA");
  tma(71, "wgmma-half-tma-96", "v41 (128 x 96, 5 stages) with its stages loaded by TMA");
  // The halo versions (conv_wgmma_halo.cu): short K, A from registers.
  const auto halo = [&](int v, const char* name, const char* summary) {
    add(v, name, summary, "a multiple of 16 channels per group as stored, 96 filters' weights for all of K and two halos in 227 KB "
                          "(K up to about 600; compute capability 9.0, sm_90a build)");
  };
  halo(72, "wgmma-half-halo", "for short K (conv1 after v38): a persistent block holds 96 filters' weights for the whole of K in "
                              "shared memory, copies each 256-pixel tile's input rows once (the halo, while the tile before is multiplied) "
                              "and feeds wgmma m64n96k16 its A from registers, gathered from the halo by ldmatrix at each tap's offset; "
                              "four warpgroups");
  halo(73, "wgmma-half-halo-128", "v72 with 128-pixel tiles on two warpgroups (for grids of few tiles)");
}

}  // namespace bs::cuda
