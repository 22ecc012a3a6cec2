// Convolution versions v12-v18, v49, v50: convolution as a problem for the GEMM engine (gemm_engine.cuh), for any
// kernel size, stride, padding and groups.
//
// Per group z: C (Mg filters x N = images * OH * OW) = W_z (Mg x K) * X_z (K x N), K = Cg * KH * KW.
//   A  the weights, prepared once into (G, Kpad, Mpad) (k-major, zero-padded: 16-byte cp.async, no checks)
//   B  implicit im2col: element (k, n) is input (img, z * Cg + c, oy * sh - ph + ky, ox * sw - pw + kx), or 0
//      in the padding. Each thread owns one column n of the tile (its image and window origin computed once)
//      and gathers its rows with 4-byte cp.async through L1 (a block reads each input value up to KH * KW
//      times), zero-filled where the window leaves the image; the row offsets come from the k table
//      (gemm_prep.hpp), read by every lane of a warp at once.
//   C  bias and the activation that follows are applied in the epilogue; with split-K the blocks write
//      partial sums and a reduction kernel adds them up and applies both.
//
//   v12 gemm-fma          128x128x32 tiles, FP32 FFMA, 8x8 outputs per thread, 3 stages
//   v13 gemm-3xtf32       128x64x32 tiles (8 warps of 32x32), 3xTF32 on the tensor cores (FP32 accuracy),
//                         4 stages, two blocks per SM
//   v14 gemm-3xtf32-64    64x64x32 tiles (4 warps), 4 stages: more blocks for small layers and batches, and no
//                         idle rows for 192 filters per group (AlexNet conv4)
//   v16-v18 gemm-tf32*    --precision tf32: one TF32 product per multiply-add, on the tiles of v15, v13, v14
//   v49, v50 *-cluster    v14 and v18 with the split-K reduced in a thread-block cluster (gemm_engine.cuh): no
//                         workspace and no reduction kernel (batches of a few images; compute capability 9.0)
//   v64 *-wsplit-cluster  v49 with the weights prepared as their 3xTF32 parts in the A fragments' order (the same
//                         parts the K loop made: the same products), so that the K loop splits only the im2col operand
//   v15 gemm-3xtf32-128   128x128x32 tiles (8 warps of 64x32), 4 stages: the tensor cores' partial sums and
//                         the FP32 sums of a 64x32 warp tile take 226 registers, so one block per SM; slower than
//                         v13 on every AlexNet layer (kept as the measured cost of that register budget)
// v13, v14 promote the tensor cores' partial sums every two k-tiles, v15 every k-tile (gemm_math.cuh). A 96x64
// tile (6 warps) for 96 and 192 filters was tried and dropped: 18.75 % occupancy, 1.6-2.3x slower than v13.
#include <algorithm>
#include <climits>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/ops/conv.hpp"
#include "kernels/cuda/engine/epilogue.cuh"
#include "kernels/cuda/engine/gemm_launch.cuh"
#include "kernels/cuda/engine/gemm_math.cuh"
#include "kernels/cuda/engine/gemm_prep.hpp"
#include "kernels/cuda/impl_hooks.hpp"
#include "weights_tools/error.hpp"

namespace bs::cuda {
namespace {

using gemm::kPadK;
using gemm::kPadMN;
using gemm::pad_to;

// The B operand's per-thread state: the thread's tile column (its image and window origin, found once) and
// its first row; it loads rows row0, row0 + STEP, ... of every stage. The window's origin is held as a pointer,
// so that a copy's source is one 32-bit offset from it (its k-table entry): the 64-bit offset it replaced was added
// to the input's pointer again for each copy (with the pointer reloaded from the parameters where registers ran
// short), about 4 of the 14 instructions a copy in v49's K loop.
struct Im2colState {
  const float* origin;  // the input at (img, group's first channel, iy0, ix0); read only where the window is inside
  int iy0, ix0, col, row0;
};

struct ConvProblem {
  // A: prepared weights (G, Kpad, Mpad)
  const float* wt;
  int k_pad, m_pad;
  // B: the input (N, C, H, W) and the k table
  const float* in;
  const int2* ktab;
  int h, w, ow, p, sh, sw, ph, pw;
  long long chw, group_chw;  // C*H*W per image, Cg*H*W per group
  // C
  int mg, ncols, m_total, groups, k_tiles, splits, act;
  const float* bias;  // (M,) or null
  float* out;         // (N, M, OH, OW)
  float* part;        // split-K partial sums (splits, G, Mg, ncols)

  // A_FRAGS (v64): the weights as 3xTF32 fragments (prepare_tf32_fragments): per group Kpad / 8 rows of Mpad / 16
  // chunks of 256 floats; a stage is BK / 8 runs of BM / 16 chunks, each run contiguous in global and shared memory.
  template <class T>
  __device__ __forceinline__ const float* a_state(int group, int m0, int) const {
    if constexpr (T::A_FRAGS) return wt + 2 * static_cast<long long>(group) * k_pad * m_pad + (m0 / 16) * 256;
    else return wt + static_cast<long long>(group) * k_pad * m_pad + m0;
  }
  template <class T>
  __device__ __forceinline__ void load_a(const float* base, float* dst, int stride, int kt, int tid) const {
    if constexpr (T::A_FRAGS) {
      constexpr int RUN = T::BM / 16 * 64, PER = RUN / T::THREADS;  // 16-byte pieces a run; a thread's pieces a run
      static_assert(RUN % T::THREADS == 0, "the threads tile a run");
      const long long row = 16LL * m_pad;  // floats from one 8-k row of chunks to the next
      const float* src = base + static_cast<long long>(kt) * (T::BK / 8) * row + 4 * tid;
      float* d = dst + 4 * tid;
#pragma unroll
      for (int j = 0; j < T::BK / 8; ++j, src += row)  // run j: piece tid + THREADS i of it, at 4 (j RUN + tid + THREADS i)
#pragma unroll
        for (int i = 0; i < PER; ++i) gemm::cp_async16(d + 4 * (j * RUN + i * T::THREADS), src + 4 * i * T::THREADS);
    } else {
      gemm::load_dense_tile<T, T::BM>(dst, stride, base, m_pad, kt, tid);
    }
  }

  template <class T>
  __device__ __forceinline__ Im2colState b_state(int group, int n0, int tid) const {
    Im2colState st;
    st.col = tid % T::BN;
    st.row0 = tid / T::BN;
    const int n = n0 + st.col;
    if (n < ncols) {
      const int img = n / p, q = n - img * p, oy = q / ow, ox = q - oy * ow;
      st.iy0 = oy * sh - ph;
      st.ix0 = ox * sw - pw;
      // May point before the input (a window over the top or left padding): only offsets inside it are read.
      st.origin = in + (img * chw + group * group_chw + static_cast<long long>(st.iy0) * w + st.ix0);
    } else {  // past the last column: every row reads as outside the image
      st.iy0 = INT_MIN / 2;
      st.ix0 = 0;
      st.origin = in;
    }
    return st;
  }
  template <class T>
  __device__ __forceinline__ void load_b(const Im2colState& st, float* dst, int stride, int kt, int) const {
    constexpr int STEP = T::THREADS / T::BN, ROWS = (T::BK + STEP - 1) / STEP;  // the last row may be past BK
    static_assert(T::THREADS % T::BN == 0, "threads tile the B stage's columns");
    const int2* ek = ktab + kt * T::BK + st.row0;
    float* d = dst + st.row0 * stride + st.col;  // row j's copy lands j * STEP rows below: an immediate offset
#pragma unroll
    for (int j = 0; j < ROWS; ++j) {
      if (T::BK % STEP != 0 && st.row0 + j * STEP >= T::BK) break;
      const int2 e = __ldg(ek + j * STEP);
      const int iy = st.iy0 + (e.y >> 16), ix = st.ix0 + (e.y & 0xffff);
      const bool ok = static_cast<unsigned>(iy) < static_cast<unsigned>(h) && static_cast<unsigned>(ix) < static_cast<unsigned>(w);
      gemm::cp_async4_zfill(d + j * STEP * stride, ok ? st.origin + e.x : in, ok);
    }
  }

  // The reduced sums of a cluster's split-K (gemm_engine.cuh's store_reduced_quad): pixels n to n + 3 of filter m, with
  // one division for the four (store's, per value, was most of the cluster reduction's time at batch 1); the same values.
  // quad_pre: the filter's bias, loaded before the cluster's barrier (gemm_engine.cuh's quad_pre).
  __device__ __forceinline__ float quad_pre(int group, int m, int n) const {
    return bias && m < mg && n < ncols ? bias[group * mg + m] : 0.0f;
  }
  __device__ __forceinline__ void store4(int group, int m, int n, const float4& v, float b) const {
    if (m >= mg || n >= ncols) return;
    const int mm = group * mg + m;
    int img = n / p, q = n - img * p;
    float* o = out + (static_cast<long long>(img) * m_total + mm) * p + q;
    float x[4] = {v.x, v.y, v.z, v.w};
    if (bias) {
#pragma unroll
      for (int j = 0; j < 4; ++j) x[j] += b;
    }
    if (act == 0) {  // one branch for the four (the activation code is the launch's)
#pragma unroll
      for (int j = 0; j < 4; ++j) x[j] = fmaxf(x[j], 0.0f);
    } else if (act > 0) {
#pragma unroll
      for (int j = 0; j < 4; ++j) x[j] = activate(x[j], act);
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      if (n + j >= ncols) break;
      if (q == p) {  // the next image's first pixel
        q = 0;
        o = out + (static_cast<long long>(++img) * m_total + mm) * p;
      }
      *o++ = x[j];
      ++q;
    }
  }
  // split: whose partial sums v is, or gemm::kSplitsReduced for the output.
  __device__ __forceinline__ void store(int group, int split, int m, int n, float v) const {
    if (m >= mg || n >= ncols) return;
    if (splits > 1 && split != gemm::kSplitsReduced) {
      part[((static_cast<long long>(split) * groups + group) * mg + m) * ncols + n] = v;
      return;
    }
    const int img = n / p, q = n - img * p, mm = group * mg + m;
    if (bias) v += bias[mm];
    out[(static_cast<long long>(img) * m_total + mm) * p + q] = activate_or_keep(v, act);
  }
};

// Sums the split-K partials of one output row (group, filter) per blockIdx.y, adds the bias, activates.
__global__ void conv_splitk_reduce(const float* __restrict__ part, int splits, long long split_stride, int ncols, int p,
                                   int m_total, const float* __restrict__ bias, int act, float* __restrict__ out) {
  const int row = blockIdx.y;  // group * Mg + m: the partials' row order too
  for (int n = blockIdx.x * blockDim.x + threadIdx.x; n < ncols; n += gridDim.x * blockDim.x) {
    float v = 0.0f;
    for (int s = 0; s < splits; ++s) v += part[s * split_stride + static_cast<long long>(row) * ncols + n];
    if (bias) v += bias[row];
    const int img = n / p, q = n - img * p;
    out[(static_cast<long long>(img) * m_total + row) * p + q] = activate_or_keep(v, act);
  }
}

struct Geometry {
  int groups, mg, cg, k, k_pad, m_pad, p;
  long long ncols;
};
Geometry geometry(Shape is, const ConvParams& c, Shape os, int n) {
  Geometry g;
  g.groups = c.groups;
  g.mg = c.filters / c.groups;
  g.cg = is.c / c.groups;
  g.k = g.cg * c.kh * c.kw;
  g.k_pad = pad_to(g.k, kPadK);
  g.m_pad = pad_to(g.mg, kPadMN);
  g.p = os.h * os.w;
  g.ncols = static_cast<long long>(n) * g.p;
  return g;
}

template <class T, class Math>
int splits_for(const Geometry& g) {
  const long long blocks = ((g.ncols + T::BN - 1) / T::BN) * ((g.mg + T::BM - 1) / T::BM) * g.groups;
  return gemm::engine_splits<T, Math, ConvProblem>(blocks, g.k_pad / T::BK);
}
// The prepared weights' floats, before the k table: (G, Kpad, Mpad), twice that as hi and lo fragments (v64).
template <class T>
size_t weight_floats(const Geometry& g) { return (T::A_FRAGS ? 2 : 1) * static_cast<size_t>(g.groups) * g.k_pad * g.m_pad; }
template <class T>
size_t workspace_for(const Geometry& g, int splits) { return gemm::splitk_workspace_floats<T>(splits, g.groups, g.mg, g.ncols); }

template <class T, class Math>
void run(const ConvArgs& a, int act, cudaStream_t s) {
  const ConvParams& c = *a.p;
  const Geometry g = geometry(a.is, c, a.os, a.n);
  if (g.ncols > INT_MAX) fail("layer convolution", "batch too large for one launch of the GEMM engine (images x OH x OW > 2^31)");
  ConvProblem pr;
  pr.wt = a.prepared;
  pr.k_pad = g.k_pad;
  pr.m_pad = g.m_pad;
  pr.in = a.in;
  pr.ktab = reinterpret_cast<const int2*>(a.prepared + weight_floats<T>(g));
  pr.h = a.is.h; pr.w = a.is.w; pr.ow = a.os.w; pr.p = g.p;
  pr.sh = c.sh; pr.sw = c.sw; pr.ph = c.ph; pr.pw = c.pw;
  pr.chw = a.is.size();
  pr.group_chw = static_cast<long long>(g.cg) * a.is.h * a.is.w;
  pr.mg = g.mg;
  pr.ncols = static_cast<int>(g.ncols);
  pr.m_total = c.filters;
  pr.groups = g.groups;
  pr.k_tiles = g.k_pad / T::BK;
  pr.splits = splits_for<T, Math>(g);
  pr.act = act;
  pr.bias = a.bias;
  pr.out = a.out;
  pr.part = a.workspace;
  if (a.workspace_floats < workspace_for<T>(g, pr.splits))
    fail("layer convolution", "split-K workspace too small (internal: workspace_floats disagrees with the launch)");
  gemm::launch_engine<T, Math>(pr, g.mg, pr.ncols, g.groups, s);
  if (workspace_for<T>(g, pr.splits) > 0) detail::conv_splitk_finish(a, pr.splits, g.groups, g.mg, pr.ncols, g.p, act, s);
}

// Calls f.template operator()<Tile, Math>() for a version's instantiation.
template <class F>
void with_config(int version, F&& f) {
  switch (version) {
    case 12: return f.template operator()<gemm::TileL_Fma, gemm::FmaMath<gemm::TileL_Fma>>();
    case 13: return f.template operator()<gemm::TileM_Mma, gemm::MmaTf32Math<gemm::TileM_Mma, 3, 2>>();
    case 14: return f.template operator()<gemm::TileS_Mma, gemm::MmaTf32Math<gemm::TileS_Mma, 3, 2>>();
    case 15: return f.template operator()<gemm::TileL_Mma, gemm::MmaTf32Math<gemm::TileL_Mma, 3>>();
    // One TF32 product, no promotion (the accumulation's round-toward-zero, ~1e-5, is far below TF32's 1e-3; the
    // partial-sum registers go unused and the compiler drops them).
    case 16: return f.template operator()<gemm::TileL_Mma, gemm::MmaTf32Math<gemm::TileL_Mma, 1, 0>>();
    case 17: return f.template operator()<gemm::TileM_Mma, gemm::MmaTf32Math<gemm::TileM_Mma, 1, 0>>();
    case 18: return f.template operator()<gemm::TileS_Mma, gemm::MmaTf32Math<gemm::TileS_Mma, 1, 0>>();
    // v14 and v18 with their split-K reduced in a thread-block cluster.
    case 49: return f.template operator()<gemm::TileS_MmaC, gemm::MmaTf32Math<gemm::TileS_MmaC, 3, 2>>();
    case 50: return f.template operator()<gemm::TileS_MmaC, gemm::MmaTf32Math<gemm::TileS_MmaC, 1, 0>>();
    // v49 with the weights' 3xTF32 parts split when they are prepared.
    case 64: return f.template operator()<gemm::TileS_MmaCP, gemm::MmaTf32Math<gemm::TileS_MmaCP, 3, 2>>();
    default: fail("--conv-variant", "version " + std::to_string(version) + " is not a GEMM-engine version");
  }
}

}  // namespace

namespace detail {

Support gemm_supports(int version, const Layer& layer, const Epilogue& epi) {
  const std::string v = "v" + std::to_string(version);
  if (epi.pool2x2) return {false, v + " fuses the activation that follows, not pooling"};
  const ConvParams& c = std::get<ConvParams>(layer.op);
  if (layer.in.h >= 16384 - c.ph || layer.in.w >= 65536 || c.window_h() >= 16384 || c.window_w() >= 65536)
    return {false, v + " indexes images and kernels below 16384 rows"};
  if (static_cast<long long>(layer.in.c / c.groups) * layer.in.h * layer.in.w >= INT_MAX)
    return {false, v + ": one group's input plane stack exceeds 2^31 values"};
  if (c.filters > 65535) return {false, v + " handles at most 65535 filters"};
  if (version >= 49) {
    bool ok = true;
    with_config(version, [&]<class T, class Math>() { ok = gemm::cluster_launch_ok<T, Math, ConvProblem>(); });
    if (!ok) return {false, v + " reduces its split-K in thread-block clusters: a compute capability 9.0 GPU and a build for it"};
  }
  return {};
}

size_t gemm_prepared_floats(int version, const Layer& layer) {
  const Geometry g = geometry(layer.in, std::get<ConvParams>(layer.op), layer.out, 1);
  size_t weights = 0;
  with_config(version, [&]<class T, class Math>() { weights = weight_floats<T>(g); });
  return weights + 2 * static_cast<size_t>(g.k_pad);  // weights, then the k table
}

size_t gemm_workspace_floats(int version, const Layer& layer, int n) {
  const Geometry g = geometry(layer.in, std::get<ConvParams>(layer.op), layer.out, n);
  size_t floats = 0;
  with_config(version, [&]<class T, class Math>() { floats = workspace_for<T>(g, splits_for<T, Math>(g)); });
  return floats;
}

void gemm_prepare(int version, const ConvArgs& a, float* prepared, cudaStream_t s) {
  const ConvParams& c = *a.p;
  const Geometry g = geometry(a.is, c, a.os, 1);
  bool frags = false;
  size_t weights = 0;
  with_config(version, [&]<class T, class Math>() { frags = T::A_FRAGS; weights = weight_floats<T>(g); });
  if (frags) prepare_tf32_fragments(a.w, g.groups, g.mg, g.k, prepared, g.m_pad, g.k_pad, s);  // (G, Kpad / 8, Mpad / 16) chunks
  else transpose_pad(a.w, g.groups, g.mg, g.k, prepared, g.m_pad, g.k_pad, s);                   // (G, Mg, K) -> (G, Kpad, Mpad)
  build_k_table(reinterpret_cast<int2*>(prepared + weights), g.k, g.k_pad, c.kh, c.kw, c.dh, c.dw, a.is.h, a.is.w, s);
}

void conv_splitk_finish(const ConvArgs& a, int splits, int groups, int mg, int ncols, int p, int act, cudaStream_t s) {
  const long long stride = static_cast<long long>(groups) * mg * ncols;
  const unsigned bx = static_cast<unsigned>(std::min<long long>((ncols + 255) / 256, 1024));
  conv_splitk_reduce<<<dim3(bx, a.p->filters), 256, 0, s>>>(a.workspace, splits, stride, ncols, p, a.p->filters, a.bias, act, a.out);
  CUDA_CHECK_LAUNCH();
}

void gemm_forward(int version, const ConvArgs& a, cudaStream_t s) {
  if (!a.prepared) fail("conv v" + std::to_string(version), "weights were not prepared for the GEMM engine");
  const int act = a.epi.has_act ? act_code(a.epi.act) : -1;
  with_config(version, [&]<class T, class Math>() { run<T, Math>(a, act, s); });
}

}  // namespace detail

void register_conv_engine(Registry& r) {
  static const ImplHooks hooks{.conv_prepare = [](int v, const ConvArgs& a, float* p, cudaStream_t s) { detail::gemm_prepare(v, a, p, s); },
                               .conv_forward = detail::gemm_forward};
  auto add = [&](int v, const char* name, const char* summary, Precision p) {
    Impl i = cuda_impl(LayerKind::conv, v, name, summary, &hooks);
    i.math = name_of(p);
    i.precisions = {p};
    i.fuses_act = true;
    i.dilation = true;  // the k table holds each tap's dilated offsets
    // (G, Kpad, Mpad) weights and the k table, the same for v12-v18, v49, v50; v64's fragments are a layout of their own
    with_config(v, [&]<class T, class Math>() { i.prep_layout = T::A_FRAGS ? v : 12; });
    i.supports = [v](const Layer& l, const Epilogue& e) { return detail::gemm_supports(v, l, e); };
    i.workspace_floats = [v](const Layer& l, Shape, int n, Precision) { return detail::gemm_workspace_floats(v, l, n); };
    i.prepared_floats = [v](const Layer& l, Shape, Precision) { return detail::gemm_prepared_floats(v, l); };
    r.add(std::move(i));
  };
  add(12, "gemm-fma", "GEMM engine: implicit GEMM, 128x128x32 tiles, 8x8 FP32 FFMA outputs per thread, 3-stage cp.async, "
                      "split-K, bias + activation fused", Precision::fp32);
  add(13, "gemm-3xtf32", "GEMM engine on the tensor cores, 3xTF32 (FP32-accurate: the tensor cores' partial sums promoted to "
                         "FP32 every two k-tiles), 128x64x32 tiles, 4 stages, split-K, bias + activation fused", Precision::fp32);
  add(14, "gemm-3xtf32-64", "v13 with 64x64x32 tiles: more blocks for small layers and batches", Precision::fp32);
  add(15, "gemm-3xtf32-128", "v13 with 128x128x32 tiles, one block per SM (slower than v13: kept as a measured point)", Precision::fp32);
  add(16, "gemm-tf32", "GEMM engine on the tensor cores, one TF32 product (--precision tf32), 128x128x32 tiles, 4 stages, "
                       "split-K, bias + activation fused", Precision::tf32);
  add(17, "gemm-tf32-128x64", "v16 with 128x64x32 tiles (two blocks per SM)", Precision::tf32);
  add(18, "gemm-tf32-64", "v16 with 64x64x32 tiles: more blocks for small layers and batches", Precision::tf32);
  add(49, "gemm-3xtf32-64-cluster", "v14 with its split-K reduced in a thread-block cluster (up to 8 blocks, through distributed "
                                    "shared memory; compute capability 9.0): no workspace and no reduction kernel, for batches of a "
                                    "few images", Precision::fp32);
  add(50, "gemm-tf32-64-cluster", "v18 with its split-K reduced in a thread-block cluster, as v49", Precision::tf32);
  add(64, "gemm-3xtf32-64-wsplit-cluster",
      "v49 with the weights' two TF32 parts split once, when they are prepared, in the tensor cores' fragment order (no split "
      "of the weights in the K loop; two blocks per SM)", Precision::fp32);
}

}  // namespace bs::cuda
