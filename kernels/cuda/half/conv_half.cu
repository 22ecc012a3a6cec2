// Convolution versions v19-v21 and v48 (half_ops.hpp): the GEMM engine on FP16 / BF16 operands, NHWC activations.
//
// Per group z: C (M = images x OH x OW pixels, N = Mg filters) = X_z (M x K) * W_z^T (K x N), K = KH * KW * Cgs
// in the order (ky, kx, c), where Cgs is the group's channel count as stored (Cs when there is one group, so the
// input's pad channel is a k of weight zero; an odd channel count per group is not supported with groups).
// Consecutive k are consecutive channels of one pixel: a pair of them is one aligned 32-bit word of the NHWC
// input, so the implicit im2col (operand A: pixels on the rows, held row-major in shared memory) gathers runs of
// words per cp.async (see VEC below), zero-filled in the padding, through a table of word offsets per k pair
// (built once) and a table of the block's pixels (built at its start). Operand B is the weights prepared once as
// words (G, Kw_pad, N_pad). Pixels go on grid.x (millions of them at batch 1024), filters on grid.y. The epilogue
// adds bias, applies the activation and stores channel pairs as 32-bit words of (N, OH, OW, Ms); with split-K the
// blocks write FP32 partial sums and a reduction stores the result; v48 (v21's tiles) reduces them in a thread-block
// cluster instead (gemm_engine.cuh), with no workspace and no second kernel.
#include <algorithm>
#include <climits>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/engine/epilogue.cuh"
#include "kernels/cuda/engine/gemm_launch.cuh"
#include "kernels/cuda/engine/gemm_math.cuh"
#include "kernels/cuda/engine/gemm_prep.hpp"
#include "kernels/cuda/half/conv_half_shared.cuh"
#include "kernels/cuda/half/half_ops.hpp"
#include "kernels/cuda/impl_hooks.hpp"
#include "kernels/cuda/half/half_types.cuh"
#include "weights_tools/error.hpp"

namespace bs::cuda::half {
namespace {

using Geometry = HalfConvGeometry;
Geometry geometry(Shape is, const ConvParams& c, Shape os, int n) { return half_conv_geometry(is, c, os, n); }

// VEC: words per copy of the implicit im2col. Lanes run along k (a pixel's channels are contiguous in NHWC), VEC
// words (2 x VEC channels) each: 16-byte copies where a group's channel count is a multiple of 8 (every AlexNet
// layer but conv1), 8-byte ones for a multiple of 4 (conv1's 3 + 1 channels), else 4-byte ones. A warp then reads
// whole runs of a pixel's channels; with lanes along the pixels (the first version) every lane of a warp touched its
// own 32-byte sector, and AlexNet's convolutions ran at 45-60 TFLOP/s.
template <bool BF16, int VEC>
struct ConvHalfProblem : HalfConvOut {
  static constexpr bool kPairs = true, kMOnX = true;
  const uint32_t* in;  // (N, H, W, Cs / 2) words
  const int2* ktab;    // per k pair: {word offset from the window's origin, ky << 16 | kx}
  const float* wt;     // (G, Kw_pad, N_pad) words
  int kw_pad, n_pad;
  int h, w, ow, p, sh, sw, ph, pw, cs2, group_words;  // cs2 = Cs / 2; group_words = Cg / 2
  int k_tiles;

  // The A loader's state: the block's pixels in shared memory, and this thread's k-table entry for the next stage,
  // read one stage ahead (the engine loads stages kt0, kt0 + 1, ... in turn). Read when it is needed, the entry (an L2
  // access where one block runs on a multiprocessor) stood between each stage's barrier and its copies: ncu at batch 1
  // (fp16 conv3, v48) had 13-14 % of the warps' stall samples on it (experiments/batch1-latency.md).
  struct Rows {
    const int4* tab;
    int2 e;       // the entry of stage next_kt
    int next_kt;  // -1 before the first stage
  };
  // The block's pixels, found once: {word offset of (img, iy0, ix0, the group's first channel), iy0, ix0}.
  template <class T>
  static constexpr int extra_smem() { return T::BM * static_cast<int>(sizeof(int4)); }
  template <class T>
  __device__ __forceinline__ Rows setup(float* extra, int group, int m0, int tid) const {
    int4* tab = reinterpret_cast<int4*>(extra);
    for (int r = tid; r < T::BM; r += T::THREADS) {
      // m0 is an int (the engine's tile origin), so is m: 32-bit divisions (a 64-bit one is a call of ~70 instructions,
      // which at batch 1 was most of the block's set-up: experiments/batch1-latency.md, the per-block timeline).
      const int m = m0 + r;
      int4 e = make_int4(0, INT_MIN / 2, 0, 0);  // past the last pixel: every row reads as outside the image
      if (m < ncols) {
        const int img = m / p, q = m - img * p, oy = q / ow, ox = q - oy * ow;
        e.y = oy * sh - ph;
        e.z = ox * sw - pw;
        e.x = ((img * h + e.y) * w + e.z) * cs2 + group * group_words;
      }
      tab[r] = e;
    }
    return Rows{tab, make_int2(0, 0), -1};
  }
  template <class T>
  __device__ __forceinline__ void load_a(Rows& st, float* dst, int stride, int kt, int tid) const {
    static_assert(T::A_ROW, "the half convolutions hold A row-major");
    constexpr int LPP = T::BK / VEC, PPP = T::THREADS / LPP, PASSES = T::BM / PPP;
    static_assert(T::THREADS % LPP == 0 && T::BM % PPP == 0, "lanes tile the A stage");
    const int q = tid % LPP, r0 = tid / LPP;
    const int2 e = st.next_kt == kt ? st.e : __ldg(ktab + kt * T::BK + q * VEC);
    if (kt + 1 < k_tiles) st.e = __ldg(ktab + (kt + 1) * T::BK + q * VEC);  // for the next call
    st.next_kt = kt + 1;
    const int4* tab = st.tab;
    const int ky = e.y >> 16, kx = e.y & 0xffff;
#pragma unroll
    for (int j = 0; j < PASSES; ++j) {
      const int r = r0 + j * PPP;
      const int4 s = tab[r];
      const int iy = s.y + ky, ix = s.z + kx;
      const bool ok = static_cast<unsigned>(iy) < static_cast<unsigned>(h) && static_cast<unsigned>(ix) < static_cast<unsigned>(w);
      gemm::cp_async_zfill<4 * VEC>(dst + r * stride + q * VEC, reinterpret_cast<const float*>(ok ? in + s.x + e.x : in), ok);
    }
  }
  template <class T>
  __device__ __forceinline__ const float* b_state(int group, int n0, int) const {
    return wt + static_cast<long long>(group) * kw_pad * n_pad + n0;
  }
  template <class T>
  __device__ __forceinline__ void load_b(const float* base, float* dst, int stride, int kt, int tid) const {
    gemm::load_dense_tile<T, T::BN>(dst, stride, base, n_pad, kt, tid);
  }

  __device__ __forceinline__ void store2(int group, int split, int m, int f, float v0, float v1) const {
    store2_as<BF16>(group, split, m, f, v0, v1);
  }
  __device__ __forceinline__ void store4(int group, int m, int f, const float4& v, const float4& b) const {
    store4_as<BF16>(group, m, f, v, [&] { return b; });
  }
};

// Weights (M, Cg, KH, KW) FP32 -> words (G, Kw_pad, N_pad): word (z, kw, f) = filter z * Mg + f at k = 2kw, 2kw + 1.
template <bool BF16>
__global__ void prepare_weights(const float* __restrict__ w, int groups, int mg, int cg, int cgs, int kh, int kwid, int kw_pad, int n_pad,
                                uint32_t* __restrict__ dst) {
  const long long total = static_cast<long long>(groups) * kw_pad * n_pad;
  const int k = kh * kwid * cgs;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const int f = static_cast<int>(i % n_pad), kw = static_cast<int>((i / n_pad) % kw_pad), z = static_cast<int>(i / (static_cast<long long>(n_pad) * kw_pad));
    float v[2] = {0.0f, 0.0f};
    for (int h = 0; h < 2; ++h) {
      const int kk = 2 * kw + h;
      if (kk >= k || f >= mg) continue;
      const int c = kk % cgs, kx = (kk / cgs) % kwid, ky = kk / (cgs * kwid);
      if (c < cg) v[h] = w[((static_cast<long long>(z * mg + f) * cg + c) * kh + ky) * kwid + kx];
    }
    dst[i] = pack2<BF16>(v[0], v[1]);
  }
}

// Dilation: the tap's offsets y = ky * dh, x = kx * dw.
__global__ void k_pair_table(int2* table, int kw_count, int kw_pad, int cgs, int kwid, int dh, int dw, int w, int cs2) {
  const int kw = blockIdx.x * blockDim.x + threadIdx.x;
  if (kw >= kw_pad) return;
  if (kw < kw_count) {
    const int k = 2 * kw, c = k % cgs, x = ((k / cgs) % kwid) * dw, y = (k / (cgs * kwid)) * dh;
    table[kw] = make_int2((y * w + x) * cs2 + c / 2, (y << 16) | x);
  } else {
    table[kw] = make_int2(0, kNoRow << 16);
  }
}

int vec_for(const Geometry& g) { return g.cgs % 8 == 0 ? 4 : g.cgs % 4 == 0 ? 2 : 1; }

template <class T, class Math, bool BF16, int VEC>
int splits_for(const Geometry& g) {
  const long long blocks = ((g.ncols + T::BM - 1) / T::BM) * ((g.mg + T::BN - 1) / T::BN) * g.groups;
  return gemm::engine_splits<T, Math, ConvHalfProblem<BF16, VEC>>(blocks, g.kw_pad / T::BK);
}
template <class T>
size_t workspace_for(const Geometry& g, int splits) { return gemm::splitk_workspace_floats<T>(splits, g.groups, g.mg, g.ncols); }

template <class T, class Math, bool BF16, int VEC>
void run(const HalfConvArgs& a, cudaStream_t s) {
  const ConvParams& c = *a.p;
  const Geometry g = geometry(a.is, c, a.os, a.n);
  check_half_conv_batch(g, a, "GEMM");
  ConvHalfProblem<BF16, VEC> pr;
  pr.in = reinterpret_cast<const uint32_t*>(a.in);
  pr.wt = a.prepared;
  pr.ktab = reinterpret_cast<const int2*>(a.prepared + static_cast<size_t>(g.groups) * g.kw_pad * g.n_pad);
  pr.kw_pad = g.kw_pad;
  pr.n_pad = g.n_pad;
  pr.h = a.is.h; pr.w = a.is.w; pr.ow = a.os.w; pr.p = g.p;
  pr.sh = c.sh; pr.sw = c.sw; pr.ph = c.ph; pr.pw = c.pw;
  pr.cs2 = g.cs_in / 2;
  pr.group_words = g.cg / 2;
  pr.mg = g.mg;
  pr.groups = g.groups;
  pr.m_total = c.filters;
  pr.ms = g.ms;
  pr.k_tiles = g.kw_pad / T::BK;
  pr.splits = splits_for<T, Math, BF16, VEC>(g);
  pr.act = a.act;
  pr.ncols = g.ncols;
  pr.bias = a.bias;
  pr.out = a.out;
  pr.part = a.workspace;
  pr.ovf = a.ovf;
  if (a.workspace_floats < workspace_for<T>(g, pr.splits))
    fail("layer convolution", "split-K workspace too small (internal: workspace_floats disagrees with the launch)");
  gemm::launch_engine<T, Math>(pr, static_cast<int>(g.ncols), g.mg, g.groups, s);
  if (workspace_for<T>(g, pr.splits) > 0) splitk_finish<BF16>(pr, s);
}

template <bool BF16, int VEC, class F>
void with_config_t(int version, F&& f) {
  switch (version) {
    case 19: return f.template operator()<gemm::TileL_Half, gemm::MmaHalfMath<gemm::TileL_Half, BF16>, BF16, VEC>();
    case 20: return f.template operator()<gemm::TileM_Half, gemm::MmaHalfMath<gemm::TileM_Half, BF16>, BF16, VEC>();
    case 21: return f.template operator()<gemm::TileS_Half, gemm::MmaHalfMath<gemm::TileS_Half, BF16>, BF16, VEC>();
    case 48: return f.template operator()<gemm::TileS_HalfC, gemm::MmaHalfMath<gemm::TileS_HalfC, BF16>, BF16, VEC>();
    default: fail("--conv-variant", "version " + std::to_string(version) + " is not a half-precision GEMM-engine version");
  }
}
template <bool BF16, class F>
void with_vec(int version, int vec, F&& f) {
  if (vec == 4) with_config_t<BF16, 4>(version, f);
  else if (vec == 2) with_config_t<BF16, 2>(version, f);
  else with_config_t<BF16, 1>(version, f);
}
template <class F>
void with_config(int version, bool bf16, int vec, F&& f) {
  if (bf16) with_vec<true>(version, vec, f);
  else with_vec<false>(version, vec, f);
}

}  // namespace

Support conv_half_supports(int version, const Layer& layer, bool pool) {
  const std::string v = "v" + std::to_string(version);
  if (pool) return {false, v + " fuses the activation that follows, not pooling"};
  const ConvParams& c = std::get<ConvParams>(layer.op);
  if (c.groups > 1 && (layer.in.c / c.groups) % 2 != 0)
    return {false, v + " pairs channels: with groups, each group needs an even channel count (this layer has " +
                       std::to_string(layer.in.c / c.groups) + ")"};
  if (Support lim = half_conv_index_limits(v, layer); !lim.ok) return lim;
  if (static_cast<long long>(c.kh) * c.kw * stored_channels(layer.in.c) >= INT_MAX / 2) return {false, v + ": the window is too large"};
  if (version == 48) {
    bool ok = true;
    with_config(version, false, 1, [&]<class T, class Math, bool BF16, int VEC>() { ok = gemm::cluster_launch_ok<T, Math, ConvHalfProblem<BF16, VEC>>(); });
    if (!ok) return {false, v + " reduces its split-K in thread-block clusters: a compute capability 9.0 GPU and a build for it"};
  }
  return {};
}

size_t conv_half_prepared_floats(const Layer& layer) {
  const Geometry g = geometry(layer.in, std::get<ConvParams>(layer.op), layer.out, 1);
  return static_cast<size_t>(g.groups) * g.kw_pad * g.n_pad + 2 * static_cast<size_t>(g.kw_pad);
}

size_t conv_half_workspace_floats(int version, const Layer& layer, int n, bool bf16) {
  const Geometry g = geometry(layer.in, std::get<ConvParams>(layer.op), layer.out, n);
  size_t floats = 0;
  with_config(version, bf16, vec_for(g), [&]<class T, class Math, bool BF16, int VEC>() { floats = workspace_for<T>(g, splits_for<T, Math, BF16, VEC>(g)); });
  return floats;
}

void conv_half_prepare(int, const float* w, const Layer& layer, bool bf16, float* prepared, cudaStream_t s) {
  const ConvParams& c = std::get<ConvParams>(layer.op);
  const Geometry g = geometry(layer.in, c, layer.out, 1);
  const long long words = static_cast<long long>(g.groups) * g.kw_pad * g.n_pad;
  const unsigned blocks = static_cast<unsigned>(std::min<long long>((words + 255) / 256, 8192));
  auto* dst = reinterpret_cast<uint32_t*>(prepared);
  if (bf16) prepare_weights<true><<<blocks, 256, 0, s>>>(w, g.groups, g.mg, g.cg, g.cgs, c.kh, c.kw, g.kw_pad, g.n_pad, dst);
  else prepare_weights<false><<<blocks, 256, 0, s>>>(w, g.groups, g.mg, g.cg, g.cgs, c.kh, c.kw, g.kw_pad, g.n_pad, dst);
  CUDA_CHECK_LAUNCH();
  k_pair_table<<<(g.kw_pad + 255) / 256, 256, 0, s>>>(reinterpret_cast<int2*>(prepared + words), g.kw, g.kw_pad, g.cgs, c.kw, c.dh, c.dw,
                                                     layer.in.w,
                                                     g.cs_in / 2);
  CUDA_CHECK_LAUNCH();
}

void conv_half_forward(int version, const HalfConvArgs& a, cudaStream_t s) {
  if (!a.prepared) fail("conv v" + std::to_string(version), "weights were not prepared for the GEMM engine");
  const Geometry g = geometry(a.is, *a.p, a.os, a.n);
  with_config(version, a.bf16, vec_for(g), [&]<class T, class Math, bool BF16, int VEC>() { run<T, Math, BF16, VEC>(a, s); });
}

}  // namespace bs::cuda::half

namespace bs::cuda {

void register_conv_half(Registry& r) {
  static const ImplHooks hooks{.half_conv_prepare = half::conv_half_prepare, .half_conv_forward = half::conv_half_forward};
  auto add = [&](int v, const char* name, const char* summary, const char* shapes) {
    Impl i = cuda_impl(LayerKind::conv, v, name, summary, &hooks);
    i.shapes = shapes;
    i.math = "fp16/bf16";
    i.precisions = {Precision::fp16, Precision::bf16};
    i.fuses_act = true;
    i.dilation = true;  // the k table holds each tap's dilated offsets
    i.prep_layout = 19;
    i.supports = [v](const Layer& l, const Epilogue& e) { return half::conv_half_supports(v, l, e.pool2x2); };
    i.workspace_floats = [v](const Layer& l, Shape, int n, Precision p) { return half::conv_half_workspace_floats(v, l, n, p == Precision::bf16); };
    i.prepared_floats = [](const Layer& l, Shape, Precision) { return half::conv_half_prepared_floats(l); };
    r.add(std::move(i));
  };
  add(19, "gemm-half", "GEMM engine on FP16/BF16 tensor cores (--precision fp16 or bf16): NHWC 16-bit activations, "
                       "channel pairs gathered as 32-bit words, 128 pixels x 128 filters x 64 k tiles, FP32 accumulation, "
                       "split-K, bias + activation fused", "any (groups: an even channel count per group)");
  add(20, "gemm-half-128x64", "v19 with 128 pixels x 64 filters per block (two blocks per SM)", "any (as v19)");
  add(21, "gemm-half-64", "v19 with 64x64 tiles: more blocks for small layers and batches", "any (as v19)");
  add(48, "gemm-half-64-cluster", "v21 with its split-K reduced in a thread-block cluster (up to 8 blocks, through distributed shared "
                                  "memory): no workspace and no reduction kernel, for batches of a few images",
      "any (as v19; compute capability 9.0)");
}

}  // namespace bs::cuda
