// Fully connected versions v12-v13 (half_ops.hpp): the GEMM engine on FP16 / BF16 operands; and v16, the layer run
// as a convolution by the wgmma engine (v39-v47, at the end of this file).
//
// C (images x outputs) = X (images x K) * W^T, K = H * W * Cs of the layer's NHWC input. A = X^T as words
// (Kw_pad, M_pad) (word (kw, img) = X[img][2kw, 2kw + 1]), transposed into the workspace for each run; B = W^T
// prepared once as words (Kw_pad, N_pad), its rows permuted from the model's NCHW flattening to the NHWC one (and
// zero for a pad channel). The epilogue adds bias, applies the activation and stores output pairs as 32-bit
// words of (images, Os); with split-K, FP32 partial sums and a reduction.
#include <algorithm>
#include <climits>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/engine/epilogue.cuh"
#include "kernels/cuda/engine/gemm_launch.cuh"
#include "kernels/cuda/engine/gemm_math.cuh"
#include "kernels/cuda/engine/gemm_prep.hpp"
#include "kernels/cuda/half/activate16.cuh"
#include "kernels/cuda/half/conv_half_shared.cuh"
#include "kernels/cuda/half/half_ops.hpp"
#include "kernels/cuda/half/half_types.cuh"
#include "kernels/cuda/impl_hooks.hpp"
#include "kernels/plan/plan.hpp"
#include "weights_tools/error.hpp"

namespace bs::cuda::half {
namespace {

using gemm::kPadK;
using gemm::kPadMN;
using gemm::pad_to;

int k_words(Shape is) { return is.h * is.w * stored_channels(is.c) / 2; }

template <bool BF16>
struct FcHalfProblem : gemm::DenseOperands {  // A = X^T words (Kw_pad, M_pad), B = W^T words (Kw_pad, N_pad)
  static constexpr bool kPairs = true;
  int m, n, os, groups, k_tiles, splits, act;
  const float* bias;
  uint16_t* out;  // (images, Os)
  float* part;    // (splits, images, outputs)
  int* ovf;
  __device__ __forceinline__ void store2(int, int split, int r, int c, float v0, float v1) const {
    if (r >= m || c >= n) return;
    const bool two = c + 1 < n;
    if (splits > 1) {
      float* dst = part + (static_cast<long long>(split) * m + r) * n + c;
      dst[0] = v0;
      if (two) dst[1] = v1;
      return;
    }
    v0 = activate16_or_keep(bias ? v0 + bias[c] : v0, act);
    v1 = two ? activate16_or_keep(bias ? v1 + bias[c + 1] : v1, act) : 0.0f;  // c + 1 == n: the pad output (os > n)
    check_range<BF16>(v0, ovf);
    check_range<BF16>(v1, ovf);
    if (two || os > n) *reinterpret_cast<uint32_t*>(out + static_cast<long long>(r) * os + c) = pack2<BF16>(v0, v1);
  }
};

template <bool BF16>
__global__ void splitk_reduce(const float* __restrict__ part, int splits, int m, int n, int os, const float* __restrict__ bias, int act,
                              uint16_t* __restrict__ out, int* ovf) {
  const long long total = static_cast<long long>(m) * os, mn = static_cast<long long>(m) * n;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long r = i / os;
    const int c = static_cast<int>(i - r * os);
    if (c >= n) {
      out[i] = 0;
      continue;
    }
    float v = 0.0f;
    for (int s = 0; s < splits; ++s) v += part[s * mn + r * n + c];
    if (bias) v += bias[c];
    out[i] = store_value<BF16>(activate16_or_keep(v, act), ovf);
  }
}

// W (O, C*H*W) FP32 -> words of k = 2kw, 2kw + 1 in NHWC order, (y, x, c) = (k / (W * Cs), k / Cs % W, k % Cs), zero for
// a pad channel or k past the input: W^T (Kw_pad, N_pad), word (kw, o), for v12-v13; K-major (O, Kw_pad), word (o, kw),
// for v16.
template <bool BF16, bool KMAJOR>
__global__ void prepare_weights(const float* __restrict__ w, Shape is, int cs, int outputs, int kw_pad, int n_pad, uint32_t* __restrict__ dst) {
  const long long total = static_cast<long long>(kw_pad) * n_pad;
  const int k_count = is.h * is.w * cs;
  const long long k_model = static_cast<long long>(is.c) * is.h * is.w;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const int o = static_cast<int>(KMAJOR ? i / kw_pad : i % n_pad), kw = static_cast<int>(KMAJOR ? i % kw_pad : i / n_pad);
    float v[2] = {0.0f, 0.0f};
    for (int h = 0; h < 2; ++h) {
      const int k = 2 * kw + h;
      if (k >= k_count || o >= outputs) continue;
      if (const long long at = nhwc_to_nchw(k, is, cs); at >= 0) v[h] = w[o * k_model + at];
    }
    dst[i] = pack2<BF16>(v[0], v[1]);
  }
}
template <bool KMAJOR>
void launch_prepare(const float* w, Shape is, int outputs, int kw_pad, int n_pad, bool bf16, uint32_t* dst, cudaStream_t s) {
  const long long words = static_cast<long long>(kw_pad) * n_pad;
  const unsigned blocks = static_cast<unsigned>(std::min<long long>((words + 255) / 256, 8192));
  const int cs = stored_channels(is.c);
  if (bf16) prepare_weights<true, KMAJOR><<<blocks, 256, 0, s>>>(w, is, cs, outputs, kw_pad, n_pad, dst);
  else prepare_weights<false, KMAJOR><<<blocks, 256, 0, s>>>(w, is, cs, outputs, kw_pad, n_pad, dst);
  CUDA_CHECK_LAUNCH();
}

template <bool BF16, class F>
void with_config_t(int version, F&& f) {
  switch (version) {
    case 12: return f.template operator()<gemm::TileL_Mma, gemm::MmaHalfMath<gemm::TileL_Mma, BF16>, BF16>();
    case 13: return f.template operator()<gemm::TileS_Mma, gemm::MmaHalfMath<gemm::TileS_Mma, BF16>, BF16>();
    default: fail("--fc-variant", "version " + std::to_string(version) + " is not a half-precision GEMM-engine version");
  }
}
template <class F>
void with_config(int version, bool bf16, F&& f) {
  if (bf16) with_config_t<true>(version, f);
  else with_config_t<false>(version, f);
}

template <class T, class Math, bool BF16>
int splits_for(int n, Shape is, int outputs) {
  const long long blocks = static_cast<long long>((n + T::BM - 1) / T::BM) * ((outputs + T::BN - 1) / T::BN);
  return gemm::choose_splits(blocks, pad_to(k_words(is), kPadK) / T::BK, gemm::engine_occupancy<T, Math, FcHalfProblem<BF16>>());
}

size_t xt_floats(int n, Shape is) { return static_cast<size_t>(pad_to(k_words(is), kPadK)) * pad_to(n, kPadMN); }

template <class T, class Math, bool BF16>
void run(const HalfFcArgs& a, cudaStream_t s) {
  const int kw = k_words(a.is), kw_pad = pad_to(kw, kPadK), m_pad = pad_to(a.n, kPadMN);
  FcHalfProblem<BF16> pr;
  pr.xt = a.workspace;
  pr.wt = a.prepared;
  pr.m_pad = m_pad;
  pr.n_pad = pad_to(a.outputs, kPadMN);
  pr.m = a.n;
  pr.n = a.outputs;
  pr.os = stored_channels(a.outputs);
  pr.groups = 1;
  pr.k_tiles = kw_pad / T::BK;
  pr.splits = splits_for<T, Math, BF16>(a.n, a.is, a.outputs);
  pr.act = a.act;
  pr.bias = a.bias;
  pr.out = a.out;
  pr.part = a.workspace + xt_floats(a.n, a.is);
  pr.ovf = a.ovf;
  const size_t need = xt_floats(a.n, a.is) + (pr.splits > 1 ? static_cast<size_t>(pr.splits) * a.n * a.outputs : 0);
  if (a.workspace_floats < need) fail("fc v12-v13", "workspace too small (internal: fc_half_workspace_floats disagrees with the launch)");
  // X (N, Kw) words -> X^T (Kw_pad, M_pad): transpose_pad moves the 32-bit words unchanged (pairs of 16-bit values).
  transpose_pad(reinterpret_cast<const float*>(a.in), 1, a.n, kw, a.workspace, m_pad, kw_pad, s);
  gemm::launch_engine<T, Math>(pr, a.n, a.outputs, 1, s);
  if (pr.splits > 1) {
    const long long total = static_cast<long long>(a.n) * pr.os;
    splitk_reduce<BF16><<<static_cast<unsigned>(std::min<long long>((total + 255) / 256, 4096)), 256, 0, s>>>(
        pr.part, pr.splits, a.n, a.outputs, pr.os, a.bias, a.act, a.out, a.ovf);
    CUDA_CHECK_LAUNCH();
  }
}

}  // namespace

size_t fc_half_prepared_floats(Shape is, int outputs) {
  return static_cast<size_t>(pad_to(k_words(is), kPadK)) * pad_to(outputs, kPadMN);
}

size_t fc_half_workspace_floats(int version, int n, Shape is, int outputs, bool bf16) {
  size_t floats = xt_floats(n, is);
  with_config(version, bf16, [&]<class T, class Math, bool BF16>() {
    const int splits = splits_for<T, Math, BF16>(n, is, outputs);
    if (splits > 1) floats += static_cast<size_t>(splits) * n * outputs;
  });
  return floats;
}

void fc_half_prepare(const float* w, Shape is, int outputs, bool bf16, float* prepared, cudaStream_t s) {
  launch_prepare<false>(w, is, outputs, pad_to(k_words(is), kPadK), pad_to(outputs, kPadMN), bf16, reinterpret_cast<uint32_t*>(prepared), s);
}

void fc_half_forward(int version, const HalfFcArgs& a, cudaStream_t s) {
  if (!a.prepared) fail("fc v" + std::to_string(version), "weights were not prepared for the GEMM engine");
  with_config(version, a.bf16, [&]<class T, class Math, bool BF16>() { run<T, Math, BF16>(a, s); });
}

// v16: the layer as a 1x1 convolution over a one-pixel input of K = H x W x Cs channels (the layer's NHWC input as
// stored, flattened), the outputs as filters, run by the wgmma engine unchanged (K-major weights, 16-byte gathers,
// split-K, the fused epilogue). Its weights are v12's permutation to the NHWC flattening, K-major, then conv v39-v47's k
// table. The convolution's version is auto's for it where that is a wgmma one (the TMA twins v66-v71 included: the
// inputs are a multiple of 64 channels wherever the layer's are), else v41 (128 x 96, for small grids); the
// cluster versions v60 / v61 from 128 images only (AlexNet's fc6-fc8 in fp16 on the H200, v61 against v41, ms: 64 images
// 0.0829 against 0.0774, 128 0.0857 / 0.0920, 256 0.1219 / 0.1466, 512 0.1656 / 0.2602; experiments/batch1-latency.md,
// "Split-K in a cluster on wgmma").
// K as stored is a multiple of 8 wherever C x H x W is (C even: the same; C odd: then H x W is).
namespace {

constexpr int kFcClusterImages = 128;

struct AsConv {
  Layer layer;
  int version;
  AsConv(Shape stored, int outputs, int n) {
    ConvParams p;
    p.filters = outputs;
    p.kh = p.kw = 1;
    layer = {"", p, {stored.h * stored.w * stored_channels(stored.c), 1, 1}, {outputs, 1, 1}};
    const int v = n > 0 ? heuristic_version(layer, n, Precision::fp16, sm_count())->number : 41;
    const int tiles = cp_async_twin(v);  // the cluster tiles (v60 / v61, or their TMA twins v70 / v69)
    version = is_wgmma_half(v) && (n >= kFcClusterImages || (tiles != 60 && tiles != 61)) ? v : 41;
  }
  int kw_pad() const {  // the convolution's K in words, padded as the wgmma versions read their weights
    return half_conv_geometry(layer.in, std::get<ConvParams>(layer.op), layer.out, 1).kw_pad;
  }
};

}  // namespace

Support fc_wgmma_supports(const Layer& l) {
  const long long k = l.in.size();
  if (k % 8 != 0)
    return {false, "v16 reads 8 channels (16 bytes) at a time: it needs the layer's input to hold a multiple of 8 values (this one has " +
                       std::to_string(k) + ")"};
  if (k >= INT_MAX) return {false, "v16: one image's input exceeds 2^31 values"};
  const Support s = wgmma_half_supports(41, AsConv({static_cast<int>(k), 1, 1}, std::get<FcParams>(l.op).outputs, 0).layer);
  if (s.ok) return s;
  return {false, "v16 runs the layer on conv v41: " + s.reason};
}

size_t fc_wgmma_prepared_floats(Shape is, int outputs) { return wgmma_half_prepared_floats(AsConv(is, outputs, 0).layer); }

size_t fc_wgmma_workspace_floats(int n, Shape is, int outputs, bool bf16) {
  const AsConv c(is, outputs, n);
  return wgmma_half_workspace_floats(c.version, c.layer, n, bf16);
}

void fc_wgmma_prepare(const float* w, Shape is, int outputs, bool bf16, float* prepared, cudaStream_t s) {
  const AsConv c(is, outputs, 0);
  launch_prepare<true>(w, is, outputs, c.kw_pad(), outputs, bf16, reinterpret_cast<uint32_t*>(prepared), s);
  wgmma_half_prepare_table(c.layer, prepared, s);
}

void fc_wgmma_forward(int, const HalfFcArgs& a, cudaStream_t s) {
  if (!a.prepared) fail("fc v16", "weights were not prepared for the wgmma engine");
  const AsConv c(a.is, a.outputs, a.n);
  HalfConvArgs b;
  b.in = a.in;
  b.bias = a.bias;
  b.prepared = a.prepared;
  b.out = a.out;
  b.n = a.n;
  b.is = c.layer.in;
  b.os = c.layer.out;
  b.p = &std::get<ConvParams>(c.layer.op);
  b.act = a.act;
  b.workspace = a.workspace;
  b.workspace_floats = a.workspace_floats;
  b.ovf = a.ovf;
  b.bf16 = a.bf16;
  wgmma_half_forward(c.version, b, s);
}

}  // namespace bs::cuda::half

namespace bs::cuda {

void register_fc_half(Registry& r) {
  static const ImplHooks hooks{.half_fc_prepare = half::fc_half_prepare, .half_fc_forward = half::fc_half_forward};
  auto add = [&](int v, const char* name, const char* summary) {
    Impl i = cuda_impl(LayerKind::fc, v, name, summary, &hooks);
    i.math = "fp16/bf16";
    i.precisions = {Precision::fp16, Precision::bf16};
    i.fuses_act = true;
    i.prep_layout = 12;
    i.workspace_floats = [v](const Layer& l, Shape stored, int n, Precision p) {
      return half::fc_half_workspace_floats(v, n, stored, std::get<FcParams>(l.op).outputs, p == Precision::bf16);
    };
    i.prepared_floats = [](const Layer& l, Shape stored, Precision) { return half::fc_half_prepared_floats(stored, std::get<FcParams>(l.op).outputs); };
    r.add(std::move(i));
  };
  add(12, "gemm-half", "GEMM engine on FP16/BF16 tensor cores (--precision fp16 or bf16), weights permuted to the NHWC "
                       "flattening once, 128x128 tiles, split-K, bias + activation fused");
  add(13, "gemm-half-64", "v12 with 64x64 tiles, for small and mid-sized batches");

  static const ImplHooks wgmma{.half_fc_prepare = half::fc_wgmma_prepare, .half_fc_forward = half::fc_wgmma_forward};
  Impl i = cuda_impl(LayerKind::fc, 16, "wgmma-half",
                     "the layer as a 1x1 convolution over its NHWC input flattened as stored, run by the 16-bit wgmma "
                     "engine (conv v39-v47, auto's tile for it, v60 / v61 from 128 images; --precision fp16 or bf16): K-major weights, 16-byte "
                     "gathers, split-K, bias + activation fused; for large batches",
                     &wgmma);
  i.shapes = "a multiple of 8 input values (compute capability 9.0, sm_90a build)";
  i.math = "fp16/bf16";
  i.precisions = {Precision::fp16, Precision::bf16};
  i.fuses_act = true;
  i.prep_layout = 16;  // conv v39-v47's K-major words and k table, for the convolution the layer is
  i.supports = [](const Layer& l, const Epilogue&) { return half::fc_wgmma_supports(l); };
  i.workspace_floats = [](const Layer& l, Shape stored, int n, Precision p) {
    return half::fc_wgmma_workspace_floats(n, stored, std::get<FcParams>(l.op).outputs, p == Precision::bf16);
  };
  i.prepared_floats = [](const Layer& l, Shape stored, Precision) { return half::fc_wgmma_prepared_floats(stored, std::get<FcParams>(l.op).outputs); };
  r.add(std::move(i));
}

}  // namespace bs::cuda
