// Convolution versions v23-v36: the implicit GEMM on the engine's Hopper mainloop (gemm_wgmma.cuh), for any kernel
// size, stride, padding and groups; v23-v33 compute in TF32 (--precision tf32), v34-v36 in 3xTF32 (FP32 accuracy).
// Built for sm_90a only (kernels/CMakeLists.txt); elsewhere the versions report that they need it.
//
// Per group z: C (N = images * OH * OW pixels x Mg filters) = X_z (pixels x K) * W_z^T. Both operands K-major, as
// TF32 wgmma requires:
//   A  implicit im2col, a row per output pixel, or 0 in the padding: gathered from the NCHW input 4 bytes at a time
//      (WgConvProblem, k = (c, ky, kx): a warp loads 8 rows x 4 consecutive k per instruction, so that its writes land
//      in 32 different banks of the swizzled tile), or from an NHWC copy 16 bytes (4 channels) at a time
//      (WgConvNhwcProblem, k = (ky, kx, c)); the k table (gemm_prep.hpp) gives each k's offset and (ky, kx).
//   B  the weights, prepared once into (G, Mg, Kpad) in A's k order: zero-padded along K, rounded to the nearest
//      TF32 (or split into TF32 hi and lo parts); rows past Mg read as zeros (cp.async zero fill).
//   C  bias and the activation that follows in the epilogue; split-K partial sums reduced as for v12-v18.
// Rows are pixels and columns filters (not the other way round as in v12-v18) because a wgmma's N can be any
// multiple of 8 up to 256: the widths fit AlexNet's filter counts per group (96, 128, 192, 384 = 2 x 192).
//
//   v23 wgmma-tf32       128 pixels x 128 filters per block, 5 stages, A gathered from NCHW
//   v24 wgmma-tf32-192   128 x 192, 4 stages
//   v25 wgmma-tf32-96    128 x 96, 5 stages
//   v26-v28              v23-v25 reading the NHWC copy
//   v29, v30             v26, v28 with 256 pixels per block on 2 warpgroups (half the weight reads per product)
//   v31-v33              v26 with more warpgroups (the loop is bound by issuing its loaders' instructions from 8 warps,
//                        ncu: IPC 1.09, 72 % of cycles with no eligible warp): 256 x 128 on 4, 192 x 128 on 3,
//                        256 x 96 on 4
//   v34-v36              FP32 accuracy: the NHWC loaders with every operand in two TF32 parts (the transpose pass then
//                        splits the copy, the weights are prepared split) and three products per product: 192 x 96 on
//                        3 warpgroups, 128 x 128 on 2, 192 x 64 on 3, 3 stages (a stage holds four tiles)
// Measured (H100, AlexNet at batch 1024, experiments/precision-tf32.md and alexnet-engine.md): v23-v25 were no faster
// than v17's mma.sync (conv3 3.83 ms against 3.70): the loaders, not the tensor cores, bound them.
//
// Rounding: the weights are prepared as TF32 rounded to nearest. The tensor cores read an operand's top 19 bits, so an
// activation they are handed as it is gets its low 13 bits truncated: a product's relative error up to 2^-10 instead
// of 2^-11, with mean -2^-11, a bias toward zero that adds up linearly over the layers (VGG-16's tf32 error 4.5e-3
// against cuDNN's 1.0e-3; experiments/precision-tf32.md, "Why VGG-16's tf32 error is 4x cuDNN's"). v26-v33 round
// the activations to nearest in their transpose pass, at no extra pass; v23-v25, which read the NCHW input as it is,
// still truncate (the tuning measures their error like every candidate's).
#include <algorithm>
#include <climits>
#include <type_traits>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/ops/conv.hpp"
#include "kernels/cuda/engine/epilogue.cuh"
#include "kernels/cuda/engine/gemm_launch.cuh"
#include "kernels/cuda/engine/gemm_math.cuh"
#include "kernels/cuda/engine/gemm_prep.hpp"
#include "kernels/cuda/engine/gemm_wgmma.cuh"
#include "kernels/cuda/engine/wgmma_conv_loads.cuh"
#include "kernels/cuda/impl_hooks.hpp"
#include "weights_tools/error.hpp"

namespace bs::cuda {
namespace {

using gemm::kPadK;
using gemm::pad_to;

struct RowsState {
  long long pix[2];  // offset of (img, group's first channel, iy0, ix0) of the thread's two rows
  int iy0[2], ix0[2];
};

// What both problems share: the geometry, the prepared weights and k table, B's loader and the FP32 NCHW epilogue
// (wgmma_conv_loads.cuh). The NHWC problem of v26-v36 is this with the shared A loader over 16-byte chunks of 4
// channels of an NHWC copy of the input (made by a transpose pass into the workspace, channels padded to a multiple
// of 4 with zeros when there is one group); the NCHW problem of v23-v25 replaces it.
using WgConvCommon = wg::NchwOutConv;
using WgConvNhwcProblem = WgConvCommon;

struct WgConvProblem : WgConvCommon {
  long long chw, group_chw;  // A: the input (N, C, H, W)

  template <class T>
  __device__ __forceinline__ RowsState a_state(int group, int m0, int tid, int) const {
    static_assert(T::BM == 128 && T::THREADS == 256, "two rows per thread");
    RowsState st;
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const int n = m0 + (tid / 32) * 8 + (tid % 32) / 4 + 64 * hh;
      if (n < ncols) {
        const int img = static_cast<int>(p_div.div(n)), q = n - img * p, oy = static_cast<int>(ow_div.div(q)), ox = q - oy * ow;
        st.iy0[hh] = oy * sh - ph;
        st.ix0[hh] = ox * sw - pw;
        st.pix[hh] = img * chw + group * group_chw + static_cast<long long>(st.iy0[hh]) * w + st.ix0[hh];
      } else {  // past the last pixel: every k reads as outside the image
        st.iy0[hh] = INT_MIN / 2;
        st.ix0[hh] = 0;
        st.pix[hh] = 0;
      }
    }
    return st;
  }
  template <class T>
  __device__ __forceinline__ void load_a(const RowsState& st, uint32_t dst, int kt, int tid) const {
    const int r = (tid / 32) * 8 + (tid % 32) / 4, kq = tid % 4;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int2 e = __ldg(ktab + kt * T::BK + 4 * j + kq);
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int iy = st.iy0[hh] + (e.y >> 16), ix = st.ix0[hh] + (e.y & 0xffff);
        const bool ok = static_cast<unsigned>(iy) < static_cast<unsigned>(h) && static_cast<unsigned>(ix) < static_cast<unsigned>(w);
        wg::cp_async4(dst + wg::sw_word(r + 64 * hh, 4 * j + kq), ok ? in + st.pix[hh] + e.x : in, ok);
      }
    }
  }
};

// TF32 roundings of gemm_math.cuh: to nearest (cvt.rna, as v16-v18), or 3xTF32's hi and lo parts.
__device__ __forceinline__ float round_tf32(float x) {
  uint32_t hi, lo;
  gemm::tf32_split<1>(x, hi, lo);
  return __uint_as_float(hi);
}
__device__ __forceinline__ void split_tf32(float x, float& hi, float& lo) {
  uint32_t h, l;
  gemm::tf32_split<3>(x, h, l);
  hi = __uint_as_float(h);
  lo = __uint_as_float(l);
}

// The NHWC problem's k order, k = (ky, kx, c) over cgs channels: kk's channel, and its tap ky * KW + kx. (Blocks of 32
// channels over the taps with A read through L1, so that neighbouring k tiles reread the same lines, were measured
// 4-13 % slower on AlexNet's conv2-conv5: experiments/precision-tf32.md.)
struct NhwcK {
  int cgs, taps;
  __device__ __forceinline__ int channel(int kk, int& tap) const {
    tap = kk / cgs;
    return kk - tap * cgs;
  }
};

// In place over an NHWC copy: x -> hi, and lo written `lo` floats further on.
__global__ void split_tf32_kernel(float* __restrict__ x, long long count, long long lo) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count; i += static_cast<long long>(gridDim.x) * blockDim.x) {
    split_tf32(x[i], x[i], x[i + lo]);
  }
}

// (G, Mg, Cg, KH, KW) -> (G, Mg, Kpad) in NhwcK's order over cgs >= Cg channels, zeros in the padding, rounded to the
// nearest TF32.
// split: the 3xTF32 parts, hi into dst and lo into dst + rows * k_pad.
__global__ void prep_nhwc_weights_kernel(const float* __restrict__ src, long long rows, int cg, NhwcK ko, int k, int k_pad,
                                         bool split, float* __restrict__ dst) {
  const long long total = rows * k_pad;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total; i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long r = i / k_pad;
    const int kk = static_cast<int>(i - r * k_pad);
    int tap = 0;
    const int c = kk < k ? ko.channel(kk, tap) : cg;
    const float v = c < cg ? src[(r * cg + c) * ko.taps + tap] : 0.0f;
    if (split) {
      split_tf32(v, dst[i], dst[i + total]);
    } else {
      dst[i] = round_tf32(v);
    }
  }
}

// (G, Mg, K) -> (G, Mg, Kpad), zeros in the padding, each value rounded to the nearest TF32.
__global__ void pad_round_tf32_kernel(const float* __restrict__ src, long long rows, int k, int k_pad, float* __restrict__ dst) {
  const long long total = rows * k_pad;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total; i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long r = i / k_pad;
    const int c = static_cast<int>(i - r * k_pad);
    dst[i] = c < k ? round_tf32(src[r * k + c]) : 0.0f;
  }
}

struct Geometry {
  int groups, mg, cg, k, k_pad, p;
  long long ncols;
  bool nhwc;              // v26-v36
  int parts;              // 2 for 3xTF32 (v34-v36): hi and lo copies of the input and the weights
  int cs, cgs;            // NHWC: channels stored per pixel, and per group in k's order (Cg, or Cs with one group)
  long long nhwc_floats;  // the NHWC copy of the input, at the head of the workspace
};
Geometry geometry(int version, Shape is, const ConvParams& c, Shape os, int n) {
  Geometry g;
  g.groups = c.groups;
  g.mg = c.filters / c.groups;
  g.cg = is.c / c.groups;
  g.nhwc = version >= 26;
  g.parts = version >= 34 ? 2 : 1;
  g.cs = g.nhwc && c.groups == 1 ? pad_to(is.c, 4) : is.c;
  g.cgs = c.groups == 1 ? g.cs : g.cg;
  g.k = g.nhwc ? c.kh * c.kw * g.cgs : g.cg * c.kh * c.kw;
  g.k_pad = pad_to(g.k, kPadK);
  g.p = os.h * os.w;
  g.ncols = static_cast<long long>(n) * g.p;
  g.nhwc_floats = g.nhwc ? static_cast<long long>(g.parts) * n * is.h * is.w * g.cs : 0;
  return g;
}

using Tile128 = wg::WgTile<128, 5>;
using Tile192 = wg::WgTile<192, 4>;
using Tile96 = wg::WgTile<96, 5>;
using Tile256x128 = wg::WgTile<128, 4, 256>;
using Tile256x96 = wg::WgTile<96, 4, 256>;
using Tile256x128w4 = wg::WgTile<128, 4, 256, 4>;
using Tile192x128w3 = wg::WgTile<128, 4, 192, 3>;
using Tile256x96w4 = wg::WgTile<96, 4, 256, 4>;
using Tile192x96w3x3 = wg::WgTile<96, 3, 192, 3, 2>;   // 3xTF32: 72 KB a stage
using Tile128x128x3 = wg::WgTile<128, 3, 128, 2, 2>;   // 64 KB a stage
using Tile192x64w3x3 = wg::WgTile<64, 3, 192, 3, 2>;   // 64 KB a stage

// Calls f.template operator()<Tile, Problem>() for a version's instantiation.
template <class F>
void with_config(int version, F&& f) {
  switch (version) {
    case 23: return f.template operator()<Tile128, WgConvProblem>();
    case 24: return f.template operator()<Tile192, WgConvProblem>();
    case 25: return f.template operator()<Tile96, WgConvProblem>();
    case 26: return f.template operator()<Tile128, WgConvNhwcProblem>();
    case 27: return f.template operator()<Tile192, WgConvNhwcProblem>();
    case 28: return f.template operator()<Tile96, WgConvNhwcProblem>();
    case 29: return f.template operator()<Tile256x128, WgConvNhwcProblem>();
    case 30: return f.template operator()<Tile256x96, WgConvNhwcProblem>();
    case 31: return f.template operator()<Tile256x128w4, WgConvNhwcProblem>();
    case 32: return f.template operator()<Tile192x128w3, WgConvNhwcProblem>();
    case 33: return f.template operator()<Tile256x96w4, WgConvNhwcProblem>();
    case 34: return f.template operator()<Tile192x96w3x3, WgConvNhwcProblem>();
    case 35: return f.template operator()<Tile128x128x3, WgConvNhwcProblem>();
    case 36: return f.template operator()<Tile192x64w3x3, WgConvNhwcProblem>();
    default: fail("--conv-variant", "version " + std::to_string(version) + " is not a wgmma version");
  }
}

template <class T, class Problem>
int splits_for(const Geometry& g) {
  const long long blocks = ((g.ncols + T::BM - 1) / T::BM) * ((g.mg + T::BN - 1) / T::BN) * g.groups;
  return gemm::choose_splits(blocks, g.k_pad / T::BK, wg::wgmma_occupancy<T, Problem>());
}

template <class T, class Problem>
void run(const ConvArgs& a, const Geometry& g, int act, cudaStream_t s) {
  const ConvParams& c = *a.p;
  Problem pr;
  pr.ktab = reinterpret_cast<const int2*>(a.prepared + static_cast<size_t>(g.parts) * g.groups * g.mg * g.k_pad);
  pr.h = a.is.h; pr.w = a.is.w;
  pr.set_pixels(g.p, a.os.w);
  pr.sh = c.sh; pr.sw = c.sw; pr.ph = c.ph; pr.pw = c.pw;
  pr.wt = a.prepared;
  pr.k_pad = g.k_pad;
  pr.mg = g.mg;
  pr.ncols = static_cast<int>(g.ncols);
  pr.m_total = c.filters;
  pr.groups = g.groups;
  pr.k_tiles = g.k_pad / T::BK;
  pr.splits = splits_for<T, Problem>(g);
  pr.act = act;
  pr.bias = a.bias;
  pr.out = a.out;
  pr.part = a.workspace + g.nhwc_floats;
  if constexpr (std::is_same_v<Problem, WgConvNhwcProblem>) {
    float* nhwc = a.workspace;
    const long long hw = static_cast<long long>(a.is.h) * a.is.w;
    // (N, C, H, W) -> (N, H, W, Cs), grid z over images; TF32 (PARTS 1): rounded to nearest on the way, which the
    // tensor cores would otherwise truncate (3xTF32 splits the exact copy below).
    for (int b0 = 0; b0 < a.n; b0 += 65535)
      transpose_pad(a.in + b0 * static_cast<long long>(a.is.size()), std::min(65535, a.n - b0), a.is.c, static_cast<int>(hw),
                    nhwc + b0 * hw * g.cs, g.cs, static_cast<int>(hw), s, T::PARTS == 1);
    if constexpr (T::PARTS == 2) {
      const long long count = static_cast<long long>(a.n) * hw * g.cs;
      split_tf32_kernel<<<static_cast<unsigned>(std::min<long long>((count + 255) / 256, 8192)), 256, 0, s>>>(nhwc, count, count);
      CUDA_CHECK_LAUNCH();
      pr.lo_in = count;
      pr.lo_w = static_cast<long long>(g.groups) * g.mg * g.k_pad;
    } else {
      pr.lo_in = pr.lo_w = 0;
    }
    pr.in = nhwc;
    pr.cs = g.cs;
    pr.cg = g.cg;
    pr.hwc = hw * g.cs;
  } else {
    pr.in = a.in;
    pr.chw = a.is.size();
    pr.group_chw = static_cast<long long>(g.cg) * a.is.h * a.is.w;
  }
  const size_t need = static_cast<size_t>(g.nhwc_floats) + (pr.splits > 1 ? static_cast<size_t>(pr.splits) * g.groups * g.mg * g.ncols : 0);
  wg::launch_fp32_conv<T>(pr, a, need, act, s);
}

bool device_can_run() {
  static const bool ok = wg::wgmma_image_ok(wg::wgmma_kernel<Tile128, WgConvProblem>);
  return ok;
}

}  // namespace

namespace detail {

Support wgmma_supports(int version, const Layer& layer, const Epilogue& epi) {
  const std::string v = "v" + std::to_string(version);
  if (epi.pool2x2) return {false, v + " fuses the activation that follows, not pooling"};
  const ConvParams& c = std::get<ConvParams>(layer.op);
  if (layer.in.h >= 16384 - c.ph || layer.in.w >= 65536 || c.window_h() >= 16384 || c.window_w() >= 65536)
    return {false, v + " indexes images and kernels below 16384 rows"};
  const Geometry g = geometry(version, layer.in, c, layer.out, 1);
  if (g.nhwc) {
    if (c.groups > 1 && g.cg % 4 != 0)
      return {false, v + " reads 4 channels at a time: with groups, each group needs a multiple of 4 channels (this layer has " +
                         std::to_string(g.cg) + ")"};
    if (static_cast<long long>(layer.in.h) * layer.in.w * g.cs >= INT_MAX) return {false, v + ": one image's input exceeds 2^31 values"};
  } else if (static_cast<long long>(g.cg) * layer.in.h * layer.in.w >= INT_MAX) {
    return {false, v + ": one group's input plane stack exceeds 2^31 values"};
  }
  if (!device_can_run()) return {false, v + " needs wgmma: a compute capability 9.0 GPU and a build for sm_90 (kernels/CMakeLists.txt adds sm_90a)"};
  return {};
}

size_t wgmma_prepared_floats(int version, const Layer& layer) {
  const Geometry g = geometry(version, layer.in, std::get<ConvParams>(layer.op), layer.out, 1);
  return static_cast<size_t>(g.parts) * g.groups * g.mg * g.k_pad + 2 * static_cast<size_t>(g.k_pad);  // weights, then the k table
}

size_t wgmma_workspace_floats(int version, const Layer& layer, int n) {
  const Geometry g = geometry(version, layer.in, std::get<ConvParams>(layer.op), layer.out, n);
  size_t floats = 0;
  with_config(version, [&]<class T, class Problem>() {
    const int splits = splits_for<T, Problem>(g);
    floats = static_cast<size_t>(g.nhwc_floats) + (splits > 1 ? static_cast<size_t>(splits) * g.groups * g.mg * g.ncols : 0);
  });
  return floats;
}

void wgmma_prepare(int version, const ConvArgs& a, float* prepared, cudaStream_t s) {
  const ConvParams& c = *a.p;
  const Geometry g = geometry(version, a.is, c, a.os, 1);
  const long long rows = static_cast<long long>(g.groups) * g.mg;
  const unsigned blocks = static_cast<unsigned>(std::min<long long>((rows * g.k_pad + 255) / 256, 4096));
  int2* table = reinterpret_cast<int2*>(prepared + g.parts * rows * g.k_pad);
  if (g.nhwc) {
    const NhwcK ko{g.cgs, c.kh * c.kw};
    prep_nhwc_weights_kernel<<<blocks, 256, 0, s>>>(a.w, rows, g.cg, ko, g.k, g.k_pad, g.parts == 2, prepared);
    CUDA_CHECK_LAUNCH();
    build_nhwc_k_table(table, g.k_pad / 4, g.k, g.cgs, c.kw, c.dh, c.dw, a.is.w, g.cs, s);
  } else {
    pad_round_tf32_kernel<<<blocks, 256, 0, s>>>(a.w, rows, g.k, g.k_pad, prepared);
    CUDA_CHECK_LAUNCH();
    build_k_table(table, g.k, g.k_pad, c.kh, c.kw, c.dh, c.dw, a.is.h, a.is.w, s);
  }
}

void wgmma_forward(int version, const ConvArgs& a, cudaStream_t s) {
  if (!a.prepared) fail("conv v" + std::to_string(version), "weights were not prepared for the wgmma engine");
  const Geometry g = geometry(version, a.is, *a.p, a.os, a.n);
  if (g.ncols > INT_MAX) fail("layer convolution", "batch too large for one launch of the wgmma engine (images x OH x OW > 2^31)");
  const int act = a.epi.has_act ? act_code(a.epi.act) : -1;
  with_config(version, [&]<class T, class Problem>() { run<T, Problem>(a, g, act, s); });
}

}  // namespace detail

void register_conv_wgmma(Registry& r) {
  static const ImplHooks hooks{.conv_prepare = detail::wgmma_prepare, .conv_forward = detail::wgmma_forward};
  auto add = [&](int v, const char* name, const char* summary, const char* shapes) {
    Impl i = cuda_impl(LayerKind::conv, v, name, summary, &hooks);
    i.shapes = shapes;
    const Precision p = v >= 34 ? Precision::fp32 : Precision::tf32;
    i.math = name_of(p);
    i.precisions = {p};
    i.fuses_act = true;
    i.dilation = true;  // the k table holds each tap's dilated offsets
    i.prep_layout = v >= 34 ? 34 : v >= 26 ? 26 : 23;  // NCHW k order; NHWC k order; NHWC split into two TF32 parts
    i.supports = [v](const Layer& l, const Epilogue& e) { return detail::wgmma_supports(v, l, e); };
    i.workspace_floats = [v](const Layer& l, Shape, int n, Precision) { return detail::wgmma_workspace_floats(v, l, n); };
    i.prepared_floats = [v](const Layer& l, Shape, Precision) { return detail::wgmma_prepared_floats(v, l); };
    r.add(std::move(i));
  };
  const char* sm90 = "any (compute capability 9.0, sm_90a build)";
  const char* nhwc = "any (as v23; groups: a multiple of 4 channels each)";
  add(23, "wgmma-tf32", "the GEMM engine's Hopper mainloop (--precision tf32): wgmma from 128-byte-swizzled shared memory, "
                        "128 pixels x 128 filters x 32 k per block, 5 cp.async stages, A gathered from NCHW 4 bytes at a time, split-K, "
                        "bias + activation fused", sm90);
  add(24, "wgmma-tf32-192", "v23 with 128 pixels x 192 filters, 4 stages", "any (as v23)");
  add(25, "wgmma-tf32-96", "v23 with 128 pixels x 96 filters", "any (as v23)");
  add(26, "wgmma-nhwc", "v23 reading an NHWC copy of its input (a transpose pass into the workspace; channels padded to 4 "
                        "with one group) in 16-byte copies of 4 channels", nhwc);
  add(27, "wgmma-nhwc-192", "v26 with 128 pixels x 192 filters, 4 stages", "any (as v26)");
  add(28, "wgmma-nhwc-96", "v26 with 128 pixels x 96 filters", "any (as v26)");
  add(29, "wgmma-nhwc-256", "v26 with 256 pixels x 128 filters per block (two 64-row wgmmas per warpgroup: half the weight "
                            "reads per product), 4 stages", "any (as v26)");
  add(30, "wgmma-nhwc-256x96", "v29 with 256 pixels x 96 filters", "any (as v26)");
  add(31, "wgmma-nhwc-4wg", "v26 with 256 pixels x 128 filters on four warpgroups (512 threads: more warps to issue the "
                            "loaders from)", "any (as v26)");
  add(32, "wgmma-nhwc-3wg", "v26 with 192 pixels x 128 filters on three warpgroups", "any (as v26)");
  add(33, "wgmma-nhwc-4wg-96", "v31 with 256 pixels x 96 filters", "any (as v26)");
  add(34, "wgmma-3xtf32", "FP32-accurate on the wgmma mainloop: v26's NHWC loaders with the input copy and the weights "
                          "split into two TF32 parts, three products per product (3xTF32), 192 pixels x 96 filters on three "
                          "warpgroups, 3 stages", "any (as v26)");
  add(35, "wgmma-3xtf32-128", "v34 with 128 x 128 tiles on two warpgroups", "any (as v26)");
  add(36, "wgmma-3xtf32-64", "v34 with 192 pixels x 64 filters", "any (as v26)");
}

}  // namespace bs::cuda
