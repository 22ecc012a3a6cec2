// Convolution versions v66-v71: the 16-bit wgmma convolutions (conv_wgmma_half.cu) with their stages brought in by the
// tensor memory accelerator (gemm_wgmma_tma.cuh) in place of the block's cp.async loaders: per stage, four im2col boxes
// of the NHWC activations (16 channels x the tile's pixels at one filter tap each: one wgmma k step) and one tiled box
// of the K-major weights, issued by one thread. The same products in the same order as the cp.async twin (each k step
// reads the same 16 values of each row), so the same sums to the bit; the same epilogue (wgmma_half_problem.cuh). The
// weights are v39's prepared words (prep layout 39), the k table unused.
//
//   v66 wgmma-half-tma-128x2    v45's tiles: 128 pixels x 128 filters, 3 stages, two blocks a multiprocessor
//   v67 wgmma-half-tma-96x2-4s  v65's: 128 x 96, 4 stages, two blocks a multiprocessor (conv1 after v38)
//   v68 wgmma-half-tma-4wg-96   v42's: 256 x 96 on four warpgroups, 4 stages
//   v69 wgmma-half-tma-128c     v61's: 128 x 128, 3 stages, split-K reduced in a cluster of up to 8
//   v70 wgmma-half-tma-96c      v60's: 128 x 96, 3 stages, split-K reduced in a cluster
//   v71 wgmma-half-tma-96       v41's: 128 x 96, 5 stages
// They need a multiple of 16 channels per group as stored (a k step's box lies within one tap), where the cp.async
// versions take 8. Where a group has a multiple of 64, A comes as one 64-channel box a stage in the 128-byte swizzle
// (with_width), else as four 16-channel boxes in the 32-byte swizzle. A box row is one TMA request: measured on the H200
// (experiments/results/h200-wgmma-tma/), the 16-channel boxes (512 requests of 32 bytes a 128-pixel stage) left the
// versions 4-12 % slower than their twins at 128-1,024 images; the 64-channel ones (128 requests of 128 bytes) took
// AlexNet's conv3-conv5 to 0.77-0.90x their twins' time at 16-1,024 images.
#include <cuda.h>

#include <algorithm>
#include <string>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/engine/gemm_wgmma_tma.cuh"
#include "kernels/cuda/engine/tma_map.hpp"
#include "kernels/cuda/half/wgmma_half_problem.cuh"
#include "kernels/cuda/impl_hooks.hpp"
#include "weights_tools/error.hpp"

namespace bs::cuda::half {
namespace {

// The issuing thread's place in the layer: the block's first pixel as the window origin of the im2col boxes, and the
// next k step's tap (kx, ky) and channel (c, within the group).
struct TmaState {
  int w0, h0, img, n0, group, c, kx, ky;
};

template <bool BF16>
struct WgHalfTmaProblem : WgHalfProblem<BF16> {
  CUtensorMap a_map;  // the input: im2col boxes of 16 channels x BM pixels (tma_map.hpp)
  CUtensorMap b_map;  // the weights (G, Mg, 2 Kw_pad) 16-bit values: boxes of 64 x BN x 1
  int cgs;            // channels a tap of a group, as the weights store them (a multiple of 16)
  int cbase;          // from one group's first channel to the next's, in the pixel
  int cstored;        // channels stored a pixel: a box there reads only zeros
  int kwid, kh, dh, dw;

  __device__ __forceinline__ void prefetch_maps() const {
#ifdef BS_HAVE_WGMMA
    wg::tma_prefetch_map(&a_map);
    wg::tma_prefetch_map(&b_map);
#endif
  }
  template <class T>
  __device__ __forceinline__ TmaState tma_state(int group, int m0, int n0, int kt0) const {
    TmaState st;
    const int img = static_cast<int>(this->p_div.div(m0)), q = m0 - img * this->p, oy = static_cast<int>(this->ow_div.div(q)),
              ox = q - oy * this->ow;
    st.w0 = ox * this->sw - this->pw;
    st.h0 = oy * this->sh - this->ph;
    st.img = img;
    st.n0 = n0;
    st.group = group;
    const int k = kt0 * 64, tap = k / cgs;  // 64 values a stage
    st.c = k - tap * cgs;
    st.ky = tap / kwid;
    st.kx = tap - st.ky * kwid;
    return st;
  }
  template <class T>
  __device__ __forceinline__ void tma_issue(TmaState& st, uint32_t a, uint32_t b, uint32_t bar, int kt) const {
#ifdef BS_HAVE_WGMMA
    constexpr int BOXES = T::A_WIDE ? 1 : 4, CH = 64 / BOXES;
#pragma unroll
    for (int kk = 0; kk < BOXES; ++kk) {
      const bool in = st.ky < kh;  // past K: channels past the pixel's, zeros
      wg::tma_im2col4(a + wg::tma_a_step_bytes<T>(kk), &a_map, bar, in ? st.group * cbase + st.c : cstored, st.w0, st.h0, st.img,
                      static_cast<uint16_t>(in ? st.kx * dw : 0), static_cast<uint16_t>(in ? st.ky * dh : 0));
      st.c += CH;
      if (st.c == cgs) {
        st.c = 0;
        if (++st.kx == kwid) {
          st.kx = 0;
          ++st.ky;
        }
      }
    }
    wg::tma_tile3(b, &b_map, bar, kt * 64, st.n0, st.group);
#endif
  }
};

template <bool BF16>
constexpr int kT = kType<BF16>;

template <bool BF16, class F>
void with_tile(int version, F&& f) {
  constexpr int t = kT<BF16>;
  using wg::TmaTile;
  using wg::WgTile;
  switch (version) {
    case 66: return f.template operator()<TmaTile<WgTile<128, 3, 128, 2, 1, t>>, BF16>();
    case 67: return f.template operator()<TmaTile<WgTile<96, 4, 128, 2, 1, t>>, BF16>();
    case 68: return f.template operator()<TmaTile<WgTile<96, 4, 256, 4, 1, t>>, BF16>();
    case 69: return f.template operator()<TmaTile<WgTile<128, 3, 128, 2, 1, t, 8>>, BF16>();
    case 70: return f.template operator()<TmaTile<WgTile<96, 3, 128, 2, 1, t, 8>>, BF16>();
    case 71: return f.template operator()<TmaTile<WgTile<96, 5, 128, 2, 1, t>>, BF16>();
    default: fail("--conv-variant", "version " + std::to_string(version) + " is not a TMA wgmma version");
  }
}
template <class F>
void with_config(int version, bool bf16, F&& f) {
  if (bf16) with_tile<true>(version, f);
  else with_tile<false>(version, f);
}

// The tile as launched: the wide A boxes where a group's channels are a multiple of 64 (conv3-conv5 of AlexNet), else
// 16-channel ones; f.template operator()<Tile>().
template <class T, class F>
void with_width(const HalfConvGeometry& g, F&& f) {
  if constexpr (T::A_WIDE) {  // never listed wide: chosen here
    f.template operator()<T>();
  } else {
    if (g.cgs % 64 == 0) f.template operator()<wg::TmaTile<T, true>>();
    else f.template operator()<T>();
  }
}

template <class T, bool BF16>
int splits_for(const HalfConvGeometry& g) {
  const long long blocks = ((g.ncols + T::BM - 1) / T::BM) * ((g.mg + T::BN - 1) / T::BN) * g.groups;
  return wg::wgmma_tma_splits<T, WgHalfTmaProblem<BF16>>(blocks, g.kw_pad / T::BK);
}

wg::Im2colGeometry im2col_geometry(Shape is, const ConvParams& c, Shape os, int n, int pixels, int channels = 16) {
  return {n, is.h, is.w, stored_channels(is.c), os.h, os.w, c.ph, c.pw, c.sh, c.sw, channels, pixels};
}

template <class T, bool BF16>
void run(const HalfConvArgs& a, const HalfConvGeometry& g, cudaStream_t s) {
  const ConvParams& c = *a.p;
  WgHalfTmaProblem<BF16> pr;
  fill_wg_half_problem(pr, a, g, splits_for<T, BF16>(g));
  const wg::Im2colGeometry ig = im2col_geometry(a.is, c, a.os, a.n, T::BM, T::A_WIDE ? 64 : 16);
  if (std::string e = wg::encode_im2col_nhwc16(&pr.a_map, a.in, ig, T::A_WIDE); !e.empty()) fail("layer convolution", e);
  if (std::string e = wg::encode_rows16(&pr.b_map, a.prepared, g.groups, g.mg, 2 * g.kw_pad, T::BN); !e.empty()) fail("layer convolution", e);
  pr.cgs = g.cgs;
  pr.cbase = g.cg;
  pr.cstored = g.cs_in;
  pr.kwid = c.kw;
  pr.kh = c.kh;
  pr.dh = c.dh;
  pr.dw = c.dw;
  const size_t partials = checked_partials<T>(a, g, pr.splits);
  wg::launch_wgmma_tma<T>(pr, g.ncols, g.mg, g.groups, s);
  if (partials > 0) splitk_finish<BF16>(pr.o, s);
}

bool device_can_run() {
  static const bool ok = wg::wgmma_image_ok(wg::wgmma_tma_kernel<wg::TmaTile<wg::WgTile<128, 3, 128, 2, 1, wg::kF16>>, WgHalfTmaProblem<false>>);
  return ok;
}

}  // namespace

Support wgmma_tma_limits(int version, const Layer& layer) {
  const std::string v = "v" + std::to_string(version);
  const ConvParams& c = std::get<ConvParams>(layer.op);
  const HalfConvGeometry g = half_conv_geometry(layer.in, c, layer.out, 1);
  if (g.cgs % 16 != 0)
    return {false, v + " loads 16 channels a tap by TMA: it needs a multiple of 16 channels " +
                       (c.groups > 1 ? "per group (this layer has " + std::to_string(g.cg) + ")"
                                     : "as stored (this layer has " + std::to_string(g.cgs) + ")")};
  const int reach = std::max((c.kh - 1) * c.dh, (c.kw - 1) * c.dw);
  if (std::string e = wg::im2col_limits(im2col_geometry(layer.in, c, layer.out, 1, 128), reach); !e.empty()) return {false, v + ": " + e};
  if (!device_can_run()) return {false, v + " needs wgmma and TMA: a compute capability 9.0 GPU and a build for sm_90 (kernels/CMakeLists.txt adds sm_90a)"};
  return {};
}

size_t wgmma_tma_workspace_floats(int version, const Layer& layer, int n, bool bf16) {
  const HalfConvGeometry g = half_conv_geometry(layer.in, std::get<ConvParams>(layer.op), layer.out, n);
  size_t floats = 0;
  with_config(version, bf16, [&]<class T, bool BF16>() {
    with_width<T>(g, [&]<class W>() { floats = gemm::splitk_workspace_floats<W>(splits_for<W, BF16>(g), g.groups, g.mg, g.ncols); });
  });
  return floats;
}

void wgmma_tma_forward(int version, const HalfConvArgs& a, cudaStream_t s) {  // after wgmma_half_forward's checks
  const HalfConvGeometry g = half_conv_geometry(a.is, *a.p, a.os, a.n);
  with_config(version, a.bf16, [&]<class T, bool BF16>() { with_width<T>(g, [&]<class W>() { run<W, BF16>(a, g, s); }); });
}

}  // namespace bs::cuda::half
