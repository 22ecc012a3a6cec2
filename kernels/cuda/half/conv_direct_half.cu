// Convolution version v37 (half_ops.hpp): direct-half, the 16-bit convolution for the shapes the GEMM engine
// (v19-v21) cannot pair channels of: groups of an odd channel count, depthwise convolutions above all (MobileNet's,
// and the per-channel scale and shift import-onnx writes for a BatchNormalization on its own, a 1x1 depthwise
// convolution). One thread per value of the output (N, OH, OW, Ms): consecutive threads are consecutive channels of
// one pixel, so a depthwise layer's reads of the NHWC input, (N, H, W, Cs), are as contiguous as its writes. FP32
// products of the 16-bit input and the weights rounded to the 16-bit type at preparation, FP32 accumulation, bias and
// activation fused, the pad channel (Ms > M) written as zero; padding, strides and dilation as any convolution. It
// makes no use of the tensor cores: a fallback that runs, not a fast path (its FLOPs are few where it is chosen).
#include <algorithm>
#include <climits>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/engine/epilogue.cuh"
#include "kernels/cuda/half/activate16.cuh"
#include "kernels/cuda/half/half_ops.hpp"
#include "kernels/cuda/half/half_types.cuh"
#include "kernels/cuda/impl_hooks.hpp"
#include "weights_tools/error.hpp"

namespace bs::cuda::half {
namespace {

struct DirectGeometry {  // what the kernel needs of ConvParams (which holds vectors: not a kernel argument)
  int kh, kw, sh, sw, ph, pw, dh, dw, cg, mg, m, cs_in, ms;
};

DirectGeometry direct_geometry(const ConvParams& c, Shape is, Shape os) {
  return {c.kh, c.kw, c.sh, c.sw, c.ph, c.pw, c.dh, c.dw, is.c / c.groups, c.filters / c.groups, c.filters,
          stored_channels(is.c), stored_channels(os.c)};
}

// w: (M, Cg, KH, KW) as the 16-bit type's values, in FP32.
template <bool BF16>
__global__ void direct_half_kernel(const uint16_t* __restrict__ in, long long total, Shape is, Shape os, DirectGeometry g,
                                   const float* __restrict__ w, const float* __restrict__ bias, int act,
                                   uint16_t* __restrict__ out, int* ovf) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const int m = static_cast<int>(i % g.ms);
    const long long pix = i / g.ms;
    if (m >= g.m) {  // the pad channel
      out[i] = 0;
      continue;
    }
    const int ox = static_cast<int>(pix % os.w), oy = static_cast<int>((pix / os.w) % os.h);
    const long long img = pix / (static_cast<long long>(os.w) * os.h);
    const int c0 = (m / g.mg) * g.cg;
    const uint16_t* image = in + img * is.h * is.w * g.cs_in;
    const float* wm = w + static_cast<long long>(m) * g.cg * g.kh * g.kw;
    float acc = 0.0f;
    for (int ky = 0; ky < g.kh; ++ky) {
      const int y = oy * g.sh - g.ph + ky * g.dh;
      if (y < 0 || y >= is.h) continue;
      for (int kx = 0; kx < g.kw; ++kx) {
        const int x = ox * g.sw - g.pw + kx * g.dw;
        if (x < 0 || x >= is.w) continue;
        const uint16_t* at = image + (static_cast<long long>(y) * is.w + x) * g.cs_in + c0;
        for (int c = 0; c < g.cg; ++c) acc += to_float<BF16>(at[c]) * wm[(c * g.kh + ky) * g.kw + kx];
      }
    }
    if (bias) acc += bias[m];
    out[i] = store_value<BF16>(activate16_or_keep(acc, act), ovf);
  }
}

template <bool BF16>
__global__ void round_weights_kernel(const float* __restrict__ w, long long count, float* __restrict__ dst) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    dst[i] = to_float<BF16>(from_float<BF16>(w[i]));
}

long long weight_count(const Layer& layer) {
  const ConvParams& c = std::get<ConvParams>(layer.op);
  return static_cast<long long>(c.filters) * (layer.in.c / c.groups) * c.kh * c.kw;
}

Support direct_half_supports(const Layer& layer, bool pool) {
  if (pool) return {false, "v37 fuses the activation that follows, not pooling"};
  if (static_cast<long long>(layer.in.h) * layer.in.w * stored_channels(layer.in.c) >= INT_MAX)
    return {false, "v37: one image's input exceeds 2^31 values"};
  if (weight_count(layer) >= INT_MAX) return {false, "v37: the weights exceed 2^31 values"};
  return {};
}

void direct_half_prepare(int, const float* w, const Layer& layer, bool bf16, float* prepared, cudaStream_t s) {
  const long long count = weight_count(layer);
  const unsigned blocks = static_cast<unsigned>(std::min<long long>((count + 255) / 256, 4096));
  if (bf16) round_weights_kernel<true><<<blocks, 256, 0, s>>>(w, count, prepared);
  else round_weights_kernel<false><<<blocks, 256, 0, s>>>(w, count, prepared);
  CUDA_CHECK_LAUNCH();
}

void direct_half_forward(int, const HalfConvArgs& a, cudaStream_t s) {
  if (!a.prepared) fail("conv v37", "weights were not prepared");
  const DirectGeometry g = direct_geometry(*a.p, a.is, a.os);
  const long long total = static_cast<long long>(a.n) * a.os.h * a.os.w * g.ms;
  const unsigned blocks = static_cast<unsigned>(std::min<long long>((total + 255) / 256, 65535LL * 8));
  if (a.bf16) direct_half_kernel<true><<<blocks, 256, 0, s>>>(a.in, total, a.is, a.os, g, a.prepared, a.bias, a.act, a.out, a.ovf);
  else direct_half_kernel<false><<<blocks, 256, 0, s>>>(a.in, total, a.is, a.os, g, a.prepared, a.bias, a.act, a.out, a.ovf);
  CUDA_CHECK_LAUNCH();
}

}  // namespace
}  // namespace bs::cuda::half

namespace bs::cuda {

void register_conv_direct_half(Registry& r) {
  static const ImplHooks hooks{.half_conv_prepare = half::direct_half_prepare, .half_conv_forward = half::direct_half_forward};
  Impl i = cuda_impl(LayerKind::conv, 37, "direct-half",
                     "direct 16-bit convolution (--precision fp16 or bf16), one thread per output value, FP32 accumulation, "
                     "no tensor cores: for the groups of an odd channel count the GEMM engine cannot pair (depthwise "
                     "convolutions, a BatchNormalization on its own), bias + activation fused", &hooks);
  i.shapes = "any (the fallback for odd channel counts per group)";
  i.math = "fp16/bf16";
  i.precisions = {Precision::fp16, Precision::bf16};
  i.fuses_act = true;
  i.dilation = true;
  i.prep_layout = 37;  // (M, Cg, KH, KW) rounded to the 16-bit type, held as FP32
  i.supports = [](const Layer& l, const Epilogue& e) { return half::direct_half_supports(l, e.pool2x2); };
  i.prepared_floats = [](const Layer& l, Shape, Precision) { return static_cast<size_t>(half::weight_count(l)); };
  r.add(std::move(i));
}

}  // namespace bs::cuda
