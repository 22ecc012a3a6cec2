// The 16-bit wgmma convolutions' problem (gemm_wgmma.cuh's Problem interface): the NHWC loaders of
// wgmma_conv_loads.cuh and the 16-bit epilogue, shared by the cp.async versions (conv_wgmma_half.cu) and the TMA ones
// (conv_wgmma_tma.cu, which add their tensor maps to it).
#pragma once
#include <type_traits>

#include "kernels/cuda/engine/gemm_launch.cuh"
#include "kernels/cuda/engine/gemm_wgmma.cuh"
#include "kernels/cuda/engine/wgmma_conv_loads.cuh"
#include "kernels/cuda/half/conv_half_shared.cuh"
#include "kernels/cuda/half/half_ops.hpp"
#include "weights_tools/error.hpp"

namespace bs::cuda::half {

// The epilogue over a thread's whole accumulator (gemm_wgmma.cuh's store_tile): where every row and column pair it holds
// is inside the layer and there is no split-K, the bias of its column pairs is read once and each pair goes out as one
// word with no further checks; elsewhere pair by pair through HalfConvOut. (With K as short as conv1's after v38, 7
// stages, the per-pair path was a large part of the kernel's instructions.)
template <bool BF16>
struct WgHalfProblem : wg::NhwcConvLoads {
  HalfConvOut o;
  // Filters f, f + 1 at pixel m: the cluster split-K's reduced sums (split = gemm::kSplitsReduced).
  __device__ __forceinline__ void store2(int group, int split, long long m, int f, float v0, float v1) const {
    o.store2_as<BF16>(group, split, m, f, v0, v1);
  }
  // Filters f to f + 3 at pixel m, the same sums at once (HalfConvOut::store4_as), their biases loaded here, after the
  // cluster's barrier (gemm_wgmma.cuh's cluster_reduce says why).
  __device__ __forceinline__ void store4(int group, long long m, int f, const float4& v) const {
    o.store4_as<BF16>(group, m, f, v, [&] { return o.load_bias4(group, f); });
  }
  // sbias: where a kernel keeps the tile's biases in shared memory (the halo versions: -0 for a missing bias), this
  // thread's first column's, its others at 8 j and 8 j + 1 from it; else null, and the biases come from o.bias.
  template <class T>
  __device__ __forceinline__ void store_tile(const float (&acc)[T::MI][T::BN / 2], int group, int split, int r, int c,
                                             const float* sbias = nullptr) const {
    constexpr int J = T::BN / 8;
    const int ch0 = group * o.mg + c;
    if (o.splits > 1 || r + (T::MI - 1) * 64 + 8 >= o.ncols || c + T::BN - 7 >= o.mg || (ch0 & 1)) {
#pragma unroll
      for (int mi = 0; mi < T::MI; ++mi)
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
          for (int j = 0; j < J; ++j) o.store2_as<BF16>(group, split, r + 64 * mi + 8 * h, c + 8 * j, acc[mi][4 * j + 2 * h], acc[mi][4 * j + 2 * h + 1]);
      return;
    }
    // A missing bias adds -0, which changes no value (-0 + -0 is -0): the same bits as no add, and no branch a value.
    float b[2 * J];
#pragma unroll
    for (int j = 0; j < J; ++j) {
      if (sbias) {
        const float2 v = *reinterpret_cast<const float2*>(sbias + 8 * j);
        b[2 * j] = v.x;
        b[2 * j + 1] = v.y;
      } else {
        b[2 * j] = o.bias ? __ldg(o.bias + ch0 + 8 * j) : -0.0f;
        b[2 * j + 1] = o.bias ? __ldg(o.bias + ch0 + 8 * j + 1) : -0.0f;
      }
    }
    // fp16's range check folded into one flag, stored once: checked pair by pair, each pair went out with two
    // predicated stores of the flag (ncu, AlexNet's conv1 on v44 at 16 images: 914 of a warp's 2,705 instructions were
    // this epilogue's). The same values and the same flag. The activation is a compile-time code, chosen once for the
    // whole accumulator: taken value by value from o.act, it was a branch on the code around each value (v44's SASS:
    // about 45 instructions a stored pair, the tile's 24 pairs a thread more instructions than its 7 stages' K loop).
    // Measured alone twice (929b8da, 44aa0a0): AlexNet at 16-128 images 1-2 % faster, bf16 at 1,024 about 1 % slower,
    // not explained; with FastDiv, v65 and v38's one-wave repack faster than before at every batch measured
    // (experiments/results/h200-wgmma-half-epilogue/).
    const auto body = [&](auto code) {
      constexpr int A = decltype(code)::value;
      bool over = false;
#pragma unroll
      for (int mi = 0; mi < T::MI; ++mi)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          uint32_t* dst = reinterpret_cast<uint32_t*>(o.out + static_cast<long long>(r + 64 * mi + 8 * h) * o.ms + ch0);
#pragma unroll
          for (int j = 0; j < J; ++j) {
            const float v0 = activate16_c<A>(acc[mi][4 * j + 2 * h] + b[2 * j]), v1 = activate16_c<A>(acc[mi][4 * j + 2 * h + 1] + b[2 * j + 1]);
            if constexpr (!BF16) over |= fabsf(v0) > kFp16Max || fabsf(v1) > kFp16Max;
            dst[4 * j] = pack2<BF16>(v0, v1);
          }
        }
      return over;
    };
    bool over;
    if (o.act < 0) over = body(std::integral_constant<int, kNoAct>{});
    else if (o.act == 0) over = body(std::integral_constant<int, 0>{});
    else if (o.act == 1) over = body(std::integral_constant<int, 1>{});
    else over = body(std::integral_constant<int, 2>{});
    if (over && o.ovf) *reinterpret_cast<volatile int*>(o.ovf) = 1;
  }
};

template <bool BF16>
constexpr int kType = BF16 ? wg::kBf16 : wg::kF16;

// The problem's geometry, operands and epilogue for a layer of a (splits: how many ways K is split).
template <bool BF16>
void fill_wg_half_problem(WgHalfProblem<BF16>& pr, const HalfConvArgs& a, const HalfConvGeometry& g, int splits) {
  const ConvParams& c = *a.p;
  pr.in = reinterpret_cast<const float*>(a.in);  // words
  pr.ktab = reinterpret_cast<const int2*>(a.prepared + static_cast<size_t>(g.groups) * g.mg * g.kw_pad);
  pr.h = a.is.h; pr.w = a.is.w;
  pr.set_pixels(g.p, a.os.w);
  pr.sh = c.sh; pr.sw = c.sw; pr.ph = c.ph; pr.pw = c.pw;
  pr.wt = a.prepared;
  pr.k_pad = g.kw_pad;
  pr.mg = g.mg;
  pr.ncols = static_cast<int>(g.ncols);
  pr.groups = g.groups;
  pr.k_tiles = g.kw_pad / 32;  // WgTile::BK words a stage
  pr.splits = splits;
  pr.cs = g.cs_in / 2;
  pr.cg = g.cg / 2;
  pr.hwc = static_cast<long long>(a.is.h) * a.is.w * pr.cs;
  HalfConvOut& o = pr.o;
  o.mg = g.mg;
  o.groups = g.groups;
  o.m_total = c.filters;
  o.ms = g.ms;
  o.splits = splits;
  o.act = a.act;
  o.ncols = g.ncols;
  o.bias = a.bias;
  o.out = a.out;
  o.part = a.workspace;
  o.ovf = a.ovf;
}

// The split-K workspace a launch of T needs (none where the splits are reduced inside their cluster), checked against a's.
template <class T>
size_t checked_partials(const HalfConvArgs& a, const HalfConvGeometry& g, int splits) {
  const size_t partials = gemm::splitk_workspace_floats<T>(splits, g.groups, g.mg, g.ncols);
  if (a.workspace_floats < partials)
    fail("layer convolution", "split-K workspace too small (internal: workspace_floats disagrees with the launch)");
  return partials;
}

}  // namespace bs::cuda::half
