// Convolution versions v23-v25 (--precision tf32): the implicit GEMM on the engine's Hopper mainloop
// (gemm_wgmma.cuh), for any kernel size, stride, padding and groups. Built for sm_90a only (kernels/CMakeLists.txt);
// elsewhere the versions report that they need it.
//
// Per group z: C (N = images * OH * OW pixels x Mg filters) = X_z (pixels x K) * W_z^T, K = Cg * KH * KW. Both
// operands K-major, as TF32 wgmma requires:
//   A  implicit im2col, a row per output pixel: element (pixel, k) is input (img, z * Cg + c, oy * sh - ph + ky,
//      ox * sw - pw + kx), or 0 in the padding. A warp loads 8 rows x 4 consecutive k per instruction (lane
//      = row * 4 + word), so that its 4-byte cp.async writes land in 32 different banks of the swizzled tile and its
//      reads of 8 neighbouring pixels share sectors; each thread keeps the origins of its two rows (r, r + 64) and
//      reads the k table (gemm_prep.hpp) once per k for both.
//   B  the weights, prepared once into (G, Mg, Kpad): zero-padded along K, rounded to the nearest TF32; rows past
//      Mg read as zeros (cp.async zero fill), so no padding along the filters.
//   C  bias and the activation that follows in the epilogue; split-K partial sums reduced as for v12-v18.
// Rows are pixels and columns filters (not the other way round as in v12-v18) because a wgmma's N can be any
// multiple of 8 up to 256: the three versions' widths fit AlexNet's filter counts per group (96, 128, 192, 384 =
// 2 x 192) without idle columns.
//
//   v23 wgmma-tf32-128   128 pixels x 128 filters per block, 5 stages
//   v24 wgmma-tf32-192   128 x 192, 4 stages
//   v25 wgmma-tf32-96    128 x 96, 5 stages
//
// Rounding: the weights are TF32 already; the tensor cores truncate an activation's low 13 bits (they read the top
// 19), where v16-v18 round it to nearest: the relative error of a product is up to 2^-10 instead of 2^-11, and its
// mean is -2^-11 (a bias toward zero, which scales a dot product by about 1 - 4.9e-4 rather than adding noise).
#include <algorithm>
#include <climits>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/conv.hpp"
#include "kernels/cuda/epilogue.cuh"
#include "kernels/cuda/gemm_launch.cuh"
#include "kernels/cuda/gemm_prep.hpp"
#include "kernels/cuda/gemm_wgmma.cuh"
#include "weights_tools/error.hpp"

namespace bs::cuda {
namespace {

using gemm::kPadK;
using gemm::pad_to;

struct RowsState {
  long long pix[2];  // offset of (img, group's first channel, iy0, ix0) of the thread's two rows
  int iy0[2], ix0[2];
};

struct WgConvProblem {
  // A: the input (N, C, H, W) and the k table
  const float* in;
  const int2* ktab;
  int h, w, ow, p, sh, sw, ph, pw;
  long long chw, group_chw;
  // B: prepared weights (G, Mg, Kpad)
  const float* wt;
  int k_pad;
  // C
  int mg, ncols, m_total, groups, k_tiles, splits, act;
  const float* bias;
  float* out;   // (N, M, OH, OW)
  float* part;  // split-K partial sums (splits, G, Mg, ncols)

  template <class T>
  __device__ __forceinline__ RowsState a_state(int group, int m0, int tid) const {
    RowsState st;
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const int n = m0 + (tid / 32) * 8 + (tid % 32) / 4 + 64 * hh;
      if (n < ncols) {
        const int img = n / p, q = n - img * p, oy = q / ow, ox = q - oy * ow;
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

  struct WeightRows {
    const float* base;  // the tile's first filter
    int left;           // filters of the group from there on
  };
  template <class T>
  __device__ __forceinline__ WeightRows b_state(int group, int n0, int) const {
    return {wt + (static_cast<long long>(group) * mg + n0) * k_pad, mg - n0};
  }
  template <class T>
  __device__ __forceinline__ void load_b(const WeightRows& st, uint32_t dst, int kt, int tid) const {
#pragma unroll
    for (int i = 0; i < T::BN * 8 / T::THREADS; ++i) {
      const int idx = tid + i * T::THREADS, r = idx / 8, c = idx % 8;
      const bool ok = r < st.left;
      wg::cp_async16(dst + wg::sw_chunk(r, c), ok ? st.base + static_cast<long long>(r) * k_pad + kt * T::BK + 4 * c : wt, ok);
    }
  }

  __device__ __forceinline__ void store(int group, int split, int m, int n, float v) const {
    if (m >= ncols || n >= mg) return;
    if (splits > 1) {
      part[((static_cast<long long>(split) * groups + group) * mg + n) * ncols + m] = v;
      return;
    }
    const int img = m / p, q = m - img * p, nn = group * mg + n;
    if (bias) v += bias[nn];
    out[(static_cast<long long>(img) * m_total + nn) * p + q] = activate_or_keep(v, act);
  }
};

// (G, Mg, K) -> (G, Mg, Kpad), zeros in the padding, each value rounded to the nearest TF32.
__global__ void pad_round_tf32_kernel(const float* __restrict__ src, long long rows, int k, int k_pad, float* __restrict__ dst) {
  const long long total = rows * k_pad;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total; i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long r = i / k_pad;
    const int c = static_cast<int>(i - r * k_pad);
    float v = 0.0f;
    if (c < k) {
      uint32_t bits;
      asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(bits) : "f"(src[r * k + c]));
      v = __uint_as_float(bits);
    }
    dst[i] = v;
  }
}

struct Geometry {
  int groups, mg, cg, k, k_pad, p;
  long long ncols;
};
Geometry geometry(Shape is, const ConvParams& c, Shape os, int n) {
  Geometry g;
  g.groups = c.groups;
  g.mg = c.filters / c.groups;
  g.cg = is.c / c.groups;
  g.k = g.cg * c.kh * c.kw;
  g.k_pad = pad_to(g.k, kPadK);
  g.p = os.h * os.w;
  g.ncols = static_cast<long long>(n) * g.p;
  return g;
}

using Tile23 = wg::WgTile<128, 5>;
using Tile24 = wg::WgTile<192, 4>;
using Tile25 = wg::WgTile<96, 5>;

template <class F>
void with_tile(int version, F&& f) {
  switch (version) {
    case 23: return f.template operator()<Tile23>();
    case 24: return f.template operator()<Tile24>();
    case 25: return f.template operator()<Tile25>();
    default: fail("--conv-variant", "version " + std::to_string(version) + " is not a wgmma version");
  }
}

template <class T>
int splits_for(const Geometry& g) {
  const long long blocks = ((g.ncols + T::BM - 1) / T::BM) * ((g.mg + T::BN - 1) / T::BN) * g.groups;
  return gemm::choose_splits(blocks, g.k_pad / T::BK, wg::wgmma_occupancy<T, WgConvProblem>());
}

template <class T>
void run(const ConvArgs& a, int act, cudaStream_t s) {
  const ConvParams& c = *a.p;
  const Geometry g = geometry(a.is, c, a.os, a.n);
  if (g.ncols > INT_MAX) fail("layer convolution", "batch too large for one launch of the wgmma engine (images x OH x OW > 2^31)");
  WgConvProblem pr;
  pr.in = a.in;
  pr.ktab = reinterpret_cast<const int2*>(a.prepared + static_cast<size_t>(g.groups) * g.mg * g.k_pad);
  pr.h = a.is.h; pr.w = a.is.w; pr.ow = a.os.w; pr.p = g.p;
  pr.sh = c.sh; pr.sw = c.sw; pr.ph = c.ph; pr.pw = c.pw;
  pr.chw = a.is.size();
  pr.group_chw = static_cast<long long>(g.cg) * a.is.h * a.is.w;
  pr.wt = a.prepared;
  pr.k_pad = g.k_pad;
  pr.mg = g.mg;
  pr.ncols = static_cast<int>(g.ncols);
  pr.m_total = c.filters;
  pr.groups = g.groups;
  pr.k_tiles = g.k_pad / T::BK;
  pr.splits = splits_for<T>(g);
  pr.act = act;
  pr.bias = a.bias;
  pr.out = a.out;
  pr.part = a.workspace;
  if (pr.splits > 1 && a.workspace_floats < static_cast<size_t>(pr.splits) * g.groups * g.mg * g.ncols)
    fail("layer convolution", "split-K workspace too small (internal: workspace_floats disagrees with the launch)");
  wg::launch_wgmma<T>(pr, g.ncols, g.mg, g.groups, s);
  if (pr.splits > 1) detail::conv_splitk_finish(a, pr.splits, g.groups, g.mg, pr.ncols, g.p, act, s);
}

bool device_can_run() {
  static const bool ok = wg::wgmma_image_ok(wg::wgmma_kernel<Tile23, WgConvProblem>);
  return ok;
}

}  // namespace

namespace detail {

Support wgmma_supports(int version, const Layer& layer, const Epilogue& epi) {
  const std::string v = "v" + std::to_string(version);
  if (epi.pool2x2) return {false, v + " fuses the activation that follows, not pooling"};
  const ConvParams& c = std::get<ConvParams>(layer.op);
  if (layer.in.h >= 16384 - c.ph || layer.in.w >= 65536 || c.kh >= 16384 || c.kw >= 65536)
    return {false, v + " indexes images and kernels below 16384 rows"};
  if (static_cast<long long>(layer.in.c / c.groups) * layer.in.h * layer.in.w >= INT_MAX)
    return {false, v + ": one group's input plane stack exceeds 2^31 values"};
  if (!device_can_run()) return {false, v + " needs wgmma: a compute capability 9.0 GPU and a build for sm_90 (kernels/CMakeLists.txt adds sm_90a)"};
  return {};
}

size_t wgmma_prepared_floats(const Layer& layer) {
  const Geometry g = geometry(layer.in, std::get<ConvParams>(layer.op), layer.out, 1);
  return static_cast<size_t>(g.groups) * g.mg * g.k_pad + 2 * static_cast<size_t>(g.k_pad);  // weights, then the k table
}

size_t wgmma_workspace_floats(int version, const Layer& layer, int n) {
  const Geometry g = geometry(layer.in, std::get<ConvParams>(layer.op), layer.out, n);
  size_t floats = 0;
  with_tile(version, [&]<class T>() {
    const int splits = splits_for<T>(g);
    floats = splits > 1 ? static_cast<size_t>(splits) * g.groups * g.mg * g.ncols : 0;
  });
  return floats;
}

void wgmma_prepare(const ConvArgs& a, float* prepared, cudaStream_t s) {
  const ConvParams& c = *a.p;
  const Geometry g = geometry(a.is, c, a.os, 1);
  const long long rows = static_cast<long long>(g.groups) * g.mg;
  const long long total = rows * g.k_pad;
  pad_round_tf32_kernel<<<static_cast<unsigned>(std::min<long long>((total + 255) / 256, 4096)), 256, 0, s>>>(a.w, rows, g.k, g.k_pad, prepared);
  CUDA_CHECK_LAUNCH();
  build_k_table(reinterpret_cast<int2*>(prepared + rows * g.k_pad), g.k, g.k_pad, c.kh, c.kw, a.is.h, a.is.w, s);
}

void wgmma_forward(int version, const ConvArgs& a, cudaStream_t s) {
  if (!a.prepared) fail("conv v" + std::to_string(version), "weights were not prepared for the wgmma engine");
  const int act = a.epi.has_act ? act_code(a.epi.act) : -1;
  with_tile(version, [&]<class T>() { run<T>(a, act, s); });
}

}  // namespace detail
}  // namespace bs::cuda
