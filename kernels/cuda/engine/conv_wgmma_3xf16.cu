// Convolution versions v51-v56, v62 and v63: FP32 accuracy (3xFP16) and tf32 on the FP16 tensor cores, on the engine's
// Hopper mainloop (gemm_wgmma.cuh) with the NHWC loaders of v26-v36 (wgmma_conv_loads.cuh). Built for sm_90a only.
//
// The three products of 3xTF32 (v34-v36), over FP16 parts: an operand x becomes hi = fp16(s x) and lo = fp16(s x - hi),
// s a power of two, and each product is a_lo b_hi + a_hi b_lo + a_hi b_hi (summed per stage and promoted to FP32
// registers, as v34-v36). FP16 keeps 11 significant bits as TF32 does, so hi + lo carries 22 of x's 24, the same as
// 3xTF32's split; FP16 runs at twice TF32's rate on the H100 and a 32-bit word holds two k, so a stage covers 64 k where
// v34-v36's covers 32. FP16's range is what the scale is for: s puts the largest |x| of the operand in [2^14, 2^15),
// where hi cannot overflow (65504) and lo (2^-11 of hi) stays a normal FP16 for every value within 2^17 of the
// largest; smaller ones lose lo's low bits, an error below 2^-24 of the largest value. The weights get one s per
// filter (prepared once); the activations one per image, found on the device at each launch as the input is copied
// (f16_split.cuh), and the epilogue divides by both (exact: powers of two). Emulated before it was built:
// 2.1e-7 own error on AlexNet, 3.0e-7 on VGG-16, as 3xTF32 (experiments/tuning-accuracy.md, "FP32 on the FP16 tensor
// cores, by emulation").
//
// Per launch: the NCHW input -> an NHWC copy of FP16 words, two channels a word (channels padded to a multiple of 8 with
// zeros with one group; groups need a multiple of 8 each), hi then lo, and each image's max |x| into the workspace (one
// fused pass where an image's bands fit the shared memory of a cluster, else a max pass and a copy pass:
// f16_split.cuh); the wgmma kernel; split-K partial sums (already unscaled) reduced as for v34-v36.
// A strided convolution over fewer than 8 channels (AlexNet's conv1: 3 channels, 11x11, stride 4) is run as v38 runs
// it in 16 bits (conv_s2d_half.cu says why and how): the copy is written space-to-depth, S x S pixels of Ct channels
// each becoming one pixel of S S Ct (a multiple of 8), and the weights rearranged to match, so that the layer becomes
// ceil(KH / S) x ceil(KW / S) taps at stride 1 with no padding: conv1's K is 3 x 3 x 48 = 432 where the plain copy's
// would be 11 x 11 x 8 = 968, mostly padding channels. The copy pass does the rewrite at no extra cost.
//
//   v51 wgmma-3xf16       192 pixels x 96 filters on 3 warpgroups, 3 stages (v34's shape)
//   v52 wgmma-3xf16-128   128 x 128 on 2 warpgroups, 3 stages (v35's)
//   v53 wgmma-3xf16-64    192 x 64 on 3 warpgroups, 3 stages (v36's)
//   v62 wgmma-3xf16-c     v51 with its split-K reduced in a thread-block cluster of up to 8 blocks (gemm_wgmma.cuh, as v60)
//   v63 wgmma-3xf16-128c  v52 with the same
//   fc v18 wgmma-3xf16    a fully connected layer as the 1x1 convolution it is over its (N, I, 1, 1) input, on v51:
//                         the weights (O, I) are already (M, C, 1, 1), and the copy pass is a flat split
// --precision tf32, the same with hi alone (one part): one FP16 product of the scaled operands, which is TF32's rounding
// (11 significant bits, to nearest) at FP16's rate, the scale standing in for TF32's exponent range:
//   v54 wgmma-f16s        128 x 128 on 2 warpgroups, 3 stages, two blocks per multiprocessor (v45's tile)
//   v55 wgmma-f16s-4wg-96 256 x 96 on 4 warpgroups, 4 stages (v42's)
//   v56 wgmma-f16s-64     128 x 64 on 2 warpgroups, 4 stages, two blocks per multiprocessor (v46's)
//   fc v19 wgmma-f16s     as fc v18, on v54
// Measured (H100): experiments/tuning-accuracy.md, "3xFP16 on the device"; precision-tf32.md, "TF32 on the FP16 tensor
// cores".
#include <cuda_fp16.h>

#include <algorithm>
#include <climits>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/engine/gemm_launch.cuh"
#include "kernels/cuda/engine/f16_split.cuh"
#include "kernels/cuda/engine/gemm_prep.hpp"
#include "kernels/cuda/engine/gemm_wgmma.cuh"
#include "kernels/cuda/engine/wgmma_conv_loads.cuh"
#include "kernels/cuda/impl_hooks.hpp"
#include "kernels/cuda/buffer.hpp"
#include "kernels/cuda/ops/conv.hpp"
#include "kernels/cuda/ops/ops.hpp"
#include "weights_tools/error.hpp"

namespace bs::cuda {
namespace {

using gemm::kPadK;
using gemm::pad_to;

using f16split::CopyMap;
using f16split::pow2;
using f16split::scale_shift;
using f16split::split_f16;
using f16split::word;

// Where a weight word's two values come from: k = (KY, KX, ch) over kh2 x kw2 taps of cgs channels, ch = (r S + q) Ct + c
// as in the copy, the value w[m][c][KY S + r][KX S + q] (zero past the kernel and for c >= Cg).
struct WeightMap {
  int cg, kh, kw;            // the layer's channels per group and kernel
  int s, ct, cgs, kh2, kw2;  // the rewrite (S = 1, Ct = cgs without it), the copy's channels per group, the taps
};

// Weights (G Mg rows, Cg, KH, KW) -> hi words (rows, kw_pad) in the copy's k order, the lo words `lo` words further on,
// and 1 / s per row into inv (s from the row's largest |w|). One block per row.
__global__ void prep_weights_f16_kernel(const float* __restrict__ w, WeightMap g, int kw_pad, uint32_t* __restrict__ dst, long long lo,
                                        float* __restrict__ inv) {
  const long long r = blockIdx.x;
  const int fan = g.cg * g.kh * g.kw;
  const float* row = w + r * fan;
  __shared__ float red[32];
  float m = 0.0f;
  for (int i = threadIdx.x; i < fan; i += blockDim.x) m = fmaxf(m, fabsf(row[i]));
  for (int o = 16; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = m;
  __syncthreads();
  if (threadIdx.x < 32) {
    m = threadIdx.x < blockDim.x / 32 ? red[threadIdx.x] : 0.0f;
    for (int o = 16; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    if (threadIdx.x == 0) red[0] = m;
  }
  __syncthreads();
  const int shift = scale_shift(__float_as_uint(red[0]));
  const float s = pow2(shift);
  if (threadIdx.x == 0) inv[r] = pow2(-shift);
  const int k = g.kh2 * g.kw2 * g.cgs;
  for (int kw = threadIdx.x; kw < kw_pad; kw += blockDim.x) {
    __half h[2], l[2];
#pragma unroll
    for (int q = 0; q < 2; ++q) {
      const int kk = 2 * kw + q;
      float v = 0.0f;
      if (kk < k) {
        const int tap = kk / g.cgs, ch = kk - tap * g.cgs, ty = tap / g.kw2, tx = tap - ty * g.kw2;
        const int sub = ch / g.ct, c = ch - sub * g.ct, sr = sub / g.s, sq = sub - sr * g.s;
        const int ky = ty * g.s + sr, kx = tx * g.s + sq;
        if (c < g.cg && sub < g.s * g.s && ky < g.kh && kx < g.kw) v = row[(c * g.kh + ky) * g.kw + kx];
      }
      split_f16(v, s, h[q], l[q]);
    }
    dst[r * kw_pad + kw] = word(h[0], h[1]);
    if (lo) dst[r * kw_pad + kw + lo] = word(l[0], l[1]);
  }
}

// The FP32 epilogue, each value first divided by its filter's and its image's scale (exact: powers of two).
struct Wg3xF16Problem : wg::NchwOutConv {
  const float* inv_w;    // 1 / s per filter (G Mg)
  const unsigned* amax;  // each image's max |x| (FP32 bits)
  template <class T>
  __device__ __forceinline__ void store_tile(const float (&acc)[T::MI][T::BN / 2], int group, int split, int r, int c) const {
    float inv_a[T::MI][2];  // per row: its image's 1 / s
#pragma unroll
    for (int mi = 0; mi < T::MI; ++mi)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int m = r + 64 * mi + 8 * h;
        inv_a[mi][h] = m < ncols ? pow2(-scale_shift(__ldg(amax + p_div.div(m)))) : 0.0f;
      }
    store_tile_nchw<T, true>(acc, group, split, r, c, inv_a, inv_w + group * mg);
  }
  // The cluster versions' (v62, v63) reduced sums (gemm_engine.cuh's store_reduced_quad), filters n to n + 3 at pixel m:
  // each first divided by its image's and its filter's scale as store_tile divides a tile's values (the same product of
  // the two factors, exact), then bias, activation and the output as NchwOutConv's store writes it. The splits' partial
  // sums are added unscaled in the cluster; with powers of two that is the sum of the scaled partial sums the workspace
  // path adds. One division for the four, the image's factor read once, the filters' factors and biases in flight
  // together, one branch on the activation (a value at a time, this was the cluster reduction's longest step).
  __device__ __forceinline__ void store4(int group, int m, int n, const float4& v) const {
    if (m >= ncols) return;
    const int img = static_cast<int>(p_div.div(m)), q = m - img * p, nn = group * mg + n;
    const float fa = pow2(-scale_shift(__ldg(amax + img)));
    float x[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int j = 0; j < 4; ++j)
      if (n + j < mg) {
        x[j] *= fa * __ldg(inv_w + nn + j);
        if (bias) x[j] += bias[nn + j];
      }
    if (act == 0) {
#pragma unroll
      for (int j = 0; j < 4; ++j) x[j] = fmaxf(x[j], 0.0f);
    } else if (act > 0) {
#pragma unroll
      for (int j = 0; j < 4; ++j) x[j] = activate(x[j], act);
    }
    float* o = out + (static_cast<long long>(img) * m_total + nn) * p + q;
#pragma unroll
    for (int j = 0; j < 4; ++j)
      if (n + j < mg) o[static_cast<long long>(j) * p] = x[j];
  }
};

// The space-to-depth rewrite (the header): a strided convolution over fewer than 8 channels with one group.
bool rewrites(Shape is, const ConvParams& c) {
  return c.groups == 1 && is.c < 8 && c.sh == c.sw && c.sh >= 2 && c.sh <= 4 && !c.dilated();
}

struct Geometry {
  int groups, mg, cg, p;
  CopyMap copy;          // the input's NHWC copy (space-to-depth where rewritten)
  WeightMap wm;          // the weights' k order
  int kh, kw, sh, sw, ph, pw, dh, dw;  // the convolution the kernel runs over the copy (the rewritten one: stride 1, no padding)
  int kwords, kw_pad;    // K in words, padded to whole stages
  long long ncols;
  int parts;             // 2: hi and lo (3xFP16); 1: hi alone
  long long nhwc_words;  // one part of the NHWC copy
  long long rows;        // G Mg
  int images;            // n
};
// v51-v53, v62 and v63 take two parts (3xFP16), v54-v56 one (the scaled FP16 product of --precision tf32).
int parts_of(int version) { return version >= 54 && version <= 56 ? 1 : 2; }

Geometry geometry(int version, Shape is, const ConvParams& c, Shape os, int n) {
  Geometry g;
  g.parts = parts_of(version);
  g.groups = c.groups;
  g.mg = c.filters / c.groups;
  g.cg = is.c / c.groups;
  g.p = os.h * os.w;
  const bool s2d = rewrites(is, c);
  const int s = s2d ? c.sh : 1;
  const int cs_ch = c.groups == 1 ? pad_to(is.c, 8) : is.c;  // channels per copy pixel without the rewrite
  int ct = cs_ch, cgs = c.groups == 1 ? cs_ch : g.cg;
  g.kh = c.kh; g.kw = c.kw; g.sh = c.sh; g.sw = c.sw; g.ph = c.ph; g.pw = c.pw; g.dh = c.dh; g.dw = c.dw;
  CopyMap& m = g.copy;
  m.c = is.c; m.h = is.h; m.w = is.w; m.s = s; m.ph = 0; m.pw = 0; m.h2 = is.h; m.w2 = is.w;
  if (s2d) {
    ct = is.c;
    while (s * s * ct % 8 != 0) ++ct;
    cgs = s * s * ct;
    g.kh = (c.kh + s - 1) / s; g.kw = (c.kw + s - 1) / s;
    g.sh = g.sw = 1; g.ph = g.pw = 0;
    m.ph = c.ph; m.pw = c.pw;
    m.h2 = os.h + g.kh - 1; m.w2 = os.w + g.kw - 1;
  }
  m.ct = ct;
  m.cs = (s2d ? cgs : cs_ch) / 2;
  g.wm = WeightMap{g.cg, c.kh, c.kw, s, ct, cgs, g.kh, g.kw};
  g.kwords = g.kh * g.kw * cgs / 2;
  g.kw_pad = pad_to(g.kwords, kPadK);
  g.ncols = static_cast<long long>(n) * g.p;
  g.nhwc_words = static_cast<long long>(n) * m.h2 * m.w2 * m.cs;
  g.rows = static_cast<long long>(g.groups) * g.mg;
  g.images = n;
  return g;
}
// Workspace (floats): the NHWC copy's hi and lo words, each image's max |x| (n words, rounded up to 4), then the split-K
// partial sums.
long long scale_at(const Geometry& g) { return g.parts * g.nhwc_words; }
long long partials_at(const Geometry& g) { return scale_at(g) + (g.images + 3) / 4 * 4; }
// Prepared (floats): hi words (rows, kw_pad), lo words, 1 / s per row (rows rounded up to even), the k table.
long long inv_at(const Geometry& g) { return g.parts * g.rows * g.kw_pad; }
long long table_at(const Geometry& g) { return inv_at(g) + (g.rows + 1) / 2 * 2; }

template <int BN, int BM, int WG>
using Tile3 = wg::WgTile<BN, 3, BM, WG, 2, wg::kF16>;
template <int BN, int BM, int WG>
using Tile3c = wg::WgTile<BN, 3, BM, WG, 2, wg::kF16, 8>;  // split-K in a cluster of up to 8 blocks
template <int BN, int STAGES, int BM, int WG>
using Tile1 = wg::WgTile<BN, STAGES, BM, WG, 1, wg::kF16>;

template <class F>
void with_tile(int version, F&& f) {
  switch (version) {
    case 51: return f.template operator()<Tile3<96, 192, 3>>();
    case 52: return f.template operator()<Tile3<128, 128, 2>>();
    case 53: return f.template operator()<Tile3<64, 192, 3>>();
    case 62: return f.template operator()<Tile3c<96, 192, 3>>();   // v51's tile
    case 63: return f.template operator()<Tile3c<128, 128, 2>>();  // v52's
    case 54: return f.template operator()<Tile1<128, 3, 128, 2>>();  // v45's: two blocks per multiprocessor
    case 55: return f.template operator()<Tile1<96, 4, 256, 4>>();   // v42's
    case 56: return f.template operator()<Tile1<64, 4, 128, 2>>();   // v46's: two blocks per multiprocessor
    default: fail("--conv-variant", "version " + std::to_string(version) + " is not a 3xFP16 wgmma version");
  }
}

template <class T>
int splits_for(const Geometry& g) {
  const long long blocks = ((g.ncols + T::BM - 1) / T::BM) * ((g.mg + T::BN - 1) / T::BN) * g.groups;
  return wg::wgmma_splits<T, Wg3xF16Problem>(blocks, g.kw_pad / T::BK);
}

template <class T>
void run(const ConvArgs& a, const Geometry& g, int act, cudaStream_t s) {
  const ConvParams& c = *a.p;
  auto* nhwc = reinterpret_cast<uint32_t*>(a.workspace);
  auto* amax = reinterpret_cast<unsigned*>(a.workspace + scale_at(g));
  f16split::run_split(a.in, a.n, g.copy, amax, nhwc, g.parts == 2 ? g.nhwc_words : 0, sm_count(), s);
  const long long hw2 = static_cast<long long>(g.copy.h2) * g.copy.w2;
  Wg3xF16Problem pr;
  pr.in = a.workspace;  // words
  pr.ktab = reinterpret_cast<const int2*>(a.prepared + table_at(g));
  pr.h = g.copy.h2; pr.w = g.copy.w2;
  pr.set_pixels(g.p, a.os.w);
  pr.sh = g.sh; pr.sw = g.sw; pr.ph = g.ph; pr.pw = g.pw;
  pr.wt = a.prepared;
  pr.k_pad = g.kw_pad;
  pr.mg = g.mg;
  pr.ncols = static_cast<int>(g.ncols);
  pr.groups = g.groups;
  pr.k_tiles = g.kw_pad / T::BK;
  pr.splits = splits_for<T>(g);
  pr.cs = g.copy.cs;
  pr.cg = g.cg / 2;
  pr.hwc = hw2 * g.copy.cs;
  pr.lo_in = g.nhwc_words;
  pr.lo_w = g.rows * g.kw_pad;
  pr.m_total = c.filters;
  pr.act = act;
  pr.bias = a.bias;
  pr.out = a.out;
  pr.part = a.workspace + partials_at(g);
  pr.inv_w = a.prepared + inv_at(g);
  pr.amax = amax;
  const size_t need = static_cast<size_t>(partials_at(g)) + gemm::splitk_workspace_floats<T>(pr.splits, g.groups, g.mg, g.ncols);
  wg::launch_fp32_conv<T>(pr, a, need, act, s);
}

bool device_can_run() {
  static const bool ok = wg::wgmma_image_ok(wg::wgmma_kernel<Tile3<128, 128, 2>, Wg3xF16Problem>);
  return ok;
}

Support supports(int version, const Layer& layer, const Epilogue& epi) {
  const std::string v = "v" + std::to_string(version);
  if (epi.pool2x2) return {false, v + " fuses the activation that follows, not pooling"};
  const ConvParams& c = std::get<ConvParams>(layer.op);
  if (layer.in.h >= 16384 - c.ph || layer.in.w >= 65536 || c.window_h() >= 16384 || c.window_w() >= 65536)
    return {false, v + " indexes images and kernels below 16384 rows"};
  const Geometry g = geometry(version, layer.in, c, layer.out, 1);
  if (c.groups > 1 && g.cg % 8 != 0)
    return {false, v + " reads 8 channels (16 bytes of FP16 words) at a time: with groups, each group needs a multiple of 8 "
                       "channels (this layer has " + std::to_string(g.cg) + ")"};
  if (static_cast<long long>(g.copy.h2) * g.copy.w2 * g.copy.cs >= INT_MAX) return {false, v + ": one image's input exceeds 2^31 words"};
  if (!device_can_run()) return {false, v + " needs wgmma: a compute capability 9.0 GPU and a build for sm_90 (kernels/CMakeLists.txt adds sm_90a)"};
  return {};
}

size_t workspace_floats(int version, const Layer& layer, int n) {
  const Geometry g = geometry(version, layer.in, std::get<ConvParams>(layer.op), layer.out, n);
  size_t floats = 0;
  with_tile(version, [&]<class T>() {
    floats = static_cast<size_t>(partials_at(g)) + gemm::splitk_workspace_floats<T>(splits_for<T>(g), g.groups, g.mg, g.ncols);
  });
  return floats;
}

size_t prepared_floats(int version, const Layer& layer) {
  const Geometry g = geometry(version, layer.in, std::get<ConvParams>(layer.op), layer.out, 1);
  return static_cast<size_t>(table_at(g)) + static_cast<size_t>(g.kw_pad) / 2;  // the table: one int2 per 4 words
}

void prepare(int version, const ConvArgs& a, float* prepared, cudaStream_t s) {
  const Geometry g = geometry(version, a.is, *a.p, a.os, 1);
  prep_weights_f16_kernel<<<static_cast<unsigned>(g.rows), 256, 0, s>>>(a.w, g.wm, g.kw_pad, reinterpret_cast<uint32_t*>(prepared),
                                                                        g.parts == 2 ? g.rows * g.kw_pad : 0, prepared + inv_at(g));
  CUDA_CHECK_LAUNCH();
  build_nhwc_k_table(reinterpret_cast<int2*>(prepared + table_at(g)), g.kw_pad / 4, g.kwords, g.wm.cgs / 2, g.kw, g.dh, g.dw,
                     g.copy.w2, g.copy.cs, s);
}

void forward(int version, const ConvArgs& a, cudaStream_t s) {
  if (!a.prepared) fail("conv v" + std::to_string(version), "weights were not prepared for the wgmma engine");
  const Geometry g = geometry(version, a.is, *a.p, a.os, a.n);
  if (g.ncols > INT_MAX) fail("layer convolution", "batch too large for one launch of the wgmma engine (images x OH x OW > 2^31)");
  const int act = a.epi.has_act ? act_code(a.epi.act) : -1;
  with_tile(version, [&]<class T>() { run<T>(a, g, act, s); });
}

// fc v18 / v19: the layer (I inputs, O outputs) as a 1x1 convolution of O filters over (I, 1, 1), run on conv v51 / v54.
int fc_tile(int fc_version) { return fc_version == 18 ? 51 : 54; }
Layer as_conv(int inputs, int outputs) {
  ConvParams p;
  p.filters = outputs;
  p.kh = p.kw = 1;
  return {"", p, {inputs, 1, 1}, {outputs, 1, 1}};
}
Layer as_conv(const Layer& fc) { return as_conv(static_cast<int>(std::min<long long>(fc.in.size(), INT_MAX)), std::get<FcParams>(fc.op).outputs); }

void fc_prepare(int version, const float* w, int inputs, int outputs, float* prepared, cudaStream_t s) {
  const Layer l = as_conv(inputs, outputs);
  ConvArgs a;
  a.w = w;
  a.is = l.in;
  a.os = l.out;
  a.p = &std::get<ConvParams>(l.op);
  prepare(fc_tile(version), a, prepared, s);
}

void fc_forward(int version, const FcArgs& f, cudaStream_t s) {
  if (!f.prepared) fail("fc v" + std::to_string(version), "weights were not prepared for the wgmma engine");
  const Layer l = as_conv(f.inputs, f.outputs);
  ConvArgs a;
  a.in = f.in;
  a.bias = f.bias;
  a.out = f.out;
  a.n = f.n;
  a.is = l.in;
  a.os = l.out;
  a.p = &std::get<ConvParams>(l.op);
  a.prepared = f.prepared;
  a.workspace = f.workspace;
  a.workspace_floats = f.workspace_floats;
  const int tile = fc_tile(version);
  const Geometry g = geometry(tile, a.is, *a.p, a.os, a.n);
  with_tile(tile, [&]<class T>() { run<T>(a, g, f.act, s); });
}

}  // namespace

bool f16_split_fused(int version, const Layer& layer) {
  const Geometry g = geometry(version, layer.in, std::get<ConvParams>(layer.op), layer.out, 1);
  return f16split::fused_runs(g.copy);
}

F16SplitWords f16_split_words(int version, const Layer& layer, const std::vector<float>& x, int n, bool two_passes) {
  const Geometry g = geometry(version, layer.in, std::get<ConvParams>(layer.op), layer.out, n);
  F16SplitWords r;
  r.words.resize(static_cast<size_t>(g.parts * g.nhwc_words));
  r.amax.resize(static_cast<size_t>(n));
  DeviceBuffer<float> in;
  in.upload(x.data(), x.size());
  DeviceBuffer<uint32_t> dst(r.words.size());
  DeviceBuffer<unsigned> amax(r.amax.size());
  CUDA_CHECK(cudaMemset(dst.get(), 0xee, r.words.size() * sizeof(uint32_t)));  // what the pass leaves unwritten shows
  CUDA_CHECK(cudaMemset(amax.get(), 0x77, r.amax.size() * sizeof(unsigned)));
  f16split::run_split(in.get(), n, g.copy, amax.get(), dst.get(), g.parts == 2 ? g.nhwc_words : 0, sm_count(), nullptr, two_passes);
  CUDA_CHECK(cudaMemcpy(r.words.data(), dst.get(), r.words.size() * sizeof(uint32_t), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(r.amax.data(), amax.get(), r.amax.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
  r.blocks = f16split::band_for(g.copy, n, sm_count()).blocks;
  return r;
}

void register_conv_wgmma_3xf16(Registry& r) {
  static const ImplHooks hooks{.conv_prepare = prepare, .conv_forward = forward};
  auto add = [&](int v, const char* name, const char* summary) {
    Impl i = cuda_impl(LayerKind::conv, v, name, summary, &hooks);
    const Precision p = parts_of(v) == 2 ? Precision::fp32 : Precision::tf32;
    i.shapes = "any (groups: a multiple of 8 channels each; compute capability 9.0, sm_90a build)";
    i.math = name_of(p);
    i.precisions = {p};
    i.fuses_act = true;
    i.dilation = true;  // the k table holds each tap's dilated offsets
    // FP16 words (G, Mg, Kw_pad) in the NHWC k order (hi, then lo for 3xFP16), 1 / s per filter, the k table
    i.prep_layout = parts_of(v) == 2 ? 51 : 54;
    i.supports = [v](const Layer& l, const Epilogue& e) { return supports(v, l, e); };
    i.workspace_floats = [v](const Layer& l, Shape, int n, Precision) { return workspace_floats(v, l, n); };
    i.prepared_floats = [v](const Layer& l, Shape, Precision) { return prepared_floats(v, l); };
    r.add(std::move(i));
  };
  add(51, "wgmma-3xf16", "FP32-accurate on the FP16 tensor cores: every operand split into two FP16 parts after a power-of-two "
                         "scale (per filter for the weights, per image for the input, found on the device as it is copied), three "
                         "products per product (3xFP16), v34's NHWC loaders over two channels a word, 192 pixels x 96 filters "
                         "on three warpgroups, 3 stages of 64 k");
  add(52, "wgmma-3xf16-128", "v51 with 128 x 128 tiles on two warpgroups");
  add(53, "wgmma-3xf16-64", "v51 with 192 pixels x 64 filters");
  add(62, "wgmma-3xf16-c", "v51 (192 pixels x 96 filters, 3xFP16) with its split-K reduced in a thread-block cluster of up to 8 "
                           "blocks (each block's partial tile summed over the cluster's shared memory: no workspace, no "
                           "reduction kernel), for small grids");
  add(63, "wgmma-3xf16-128c", "v52 (128 x 128, 3xFP16) with the same cluster split-K");
  add(54, "wgmma-f16s", "--precision tf32 on the FP16 tensor cores: one FP16 product of operands scaled as v51's (TF32's 11 "
                        "significant bits, rounded to nearest, at twice TF32's rate and half its bytes), 128 x 128 tiles, "
                        "3 stages, two blocks per multiprocessor");
  add(55, "wgmma-f16s-4wg-96", "v54 with 256 pixels x 96 filters on four warpgroups, 4 stages");
  add(56, "wgmma-f16s-64", "v54 with 128 pixels x 64 filters, 4 stages, two blocks per multiprocessor");
}

void register_fc_wgmma_3xf16(Registry& r) {
  static const ImplHooks fc{.fc_prepare = fc_prepare, .fc_forward = fc_forward};
  auto add = [&](int v, const char* name, const char* summary) {
    Impl i = cuda_impl(LayerKind::fc, v, name, summary, &fc);
    const Precision p = v == 18 ? Precision::fp32 : Precision::tf32;
    i.shapes = "any (compute capability 9.0, sm_90a build)";
    i.math = name_of(p);
    i.precisions = {p};
    i.fuses_act = true;
    i.prep_layout = v;  // conv v51's / v54's layout for the 1x1 convolution the layer is
    i.supports = [v](const Layer& l, const Epilogue&) {
      const Support c = supports(fc_tile(v), as_conv(l), {});
      return c.ok ? c : Support{false, "fc v" + std::to_string(v) + " runs the layer on conv v" + std::to_string(fc_tile(v)) + ": " + c.reason};
    };
    i.workspace_floats = [v](const Layer& l, Shape, int n, Precision) { return workspace_floats(fc_tile(v), as_conv(l), n); };
    i.prepared_floats = [v](const Layer& l, Shape, Precision) { return prepared_floats(fc_tile(v), as_conv(l)); };
    r.add(std::move(i));
  };
  add(18, "wgmma-3xf16", "FP32-accurate on the FP16 tensor cores: the layer as a 1x1 convolution over its input, run by conv v51 "
                         "(3xFP16: the weights split once with a power-of-two scale per output, the input per launch), split-K, "
                         "bias + activation fused; for large batches");
  add(19, "wgmma-f16s", "--precision tf32 on the FP16 tensor cores: the layer as a 1x1 convolution, run by conv v54 (one scaled "
                        "FP16 product: TF32's 11 significant bits); for large batches");
}

}  // namespace bs::cuda
