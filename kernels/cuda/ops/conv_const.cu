// Convolution versions that read weights from __constant__ memory: v3 (chunked direct convolution),
// v7 (shape-specialised) and v8 (v7 with a fused bias/activation/2x2 max-pool epilogue).
// This translation unit owns the 64 KiB constant bank; each launch first copies its weights into the bank
// in stream order, so the copy is part of the layer's time and shows in the profile.
#include <algorithm>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/ops/conv.hpp"
#include "kernels/cuda/ops/conv_direct.cuh"
#include "kernels/cuda/engine/epilogue.cuh"
#include "kernels/cuda/impl_hooks.hpp"

namespace bs::cuda {
namespace {

constexpr int kBankFloats = 16384;  // 64 KiB
__constant__ float c_weights[kBankFloats];

struct ConstWeights {
  __device__ float operator()(int i) const { return c_weights[i]; }
};

void upload_bank(const float* dev_w, size_t floats, cudaStream_t s) {
  CUDA_CHECK(cudaMemcpyToSymbolAsync(c_weights, dev_w, floats * sizeof(float), 0, cudaMemcpyDeviceToDevice, s));
}

// v7/v8: one block per (image, band of BR output rows); every thread computes TY x 2 neighbouring outputs
// for all M filters. The input rows the band needs, all C channels, sit in shared memory; the weights are
// compile-time offsets into the constant bank, so each multiply-add reads its weight as an FFMA operand.
// Layouts: in (N, C, H, W); weights (M, C, K, K) in c_weights; out (N, M, OH, OW) or pooled (N, M, OH/2, OW/2).
template <int C, int H, int W, int K, int M, int BR, int TY>
__global__ void __launch_bounds__((BR / TY) * ((W - K + 1) / 2))
    spec_conv_kernel(const float* __restrict__ in, const float* __restrict__ bias, float* __restrict__ out,
                     bool has_act, int act, bool pool) {
  constexpr int OH = H - K + 1, OW = W - K + 1, TX = OW / 2, IR = BR + K - 1;
  static_assert(OW % 2 == 0, "two outputs per thread along x");
  __shared__ float tile[C][IR][W];
  const int b = blockIdx.x, oy0 = blockIdx.y * BR;
  const float* src = in + static_cast<long long>(b) * C * H * W;
  for (int i = threadIdx.x; i < C * IR * W; i += blockDim.x) {
    const int c = i / (IR * W), r = (i / W) % IR, x = i % W, y = oy0 + r;
    tile[c][r][x] = y < H ? src[(c * H + y) * W + x] : 0.0f;
  }
  __syncthreads();
  const int ox = (threadIdx.x % TX) * 2, ly = (threadIdx.x / TX) * TY;  // first output: (oy0 + ly, ox)
  float acc[TY][2][M];
#pragma unroll
  for (int t = 0; t < TY; ++t)
#pragma unroll
    for (int m = 0; m < M; ++m) acc[t][0][m] = acc[t][1][m] = 0.0f;
#pragma unroll
  for (int c = 0; c < C; ++c)
#pragma unroll
    for (int r = 0; r < TY + K - 1; ++r) {  // input row ly + r feeds output row t with ky = r - t
      float v[K + 1];
#pragma unroll
      for (int x = 0; x <= K; ++x) v[x] = tile[c][ly + r][ox + x];
#pragma unroll
      for (int t = 0; t < TY; ++t) {
        const int ky = r - t;
        if (ky < 0 || ky >= K) continue;  // resolved at compile time
#pragma unroll
        for (int kx = 0; kx < K; ++kx)
#pragma unroll
          for (int m = 0; m < M; ++m) {
            const float wv = c_weights[((m * C + c) * K + ky) * K + kx];
            acc[t][0][m] = fmaf(v[kx], wv, acc[t][0][m]);
            acc[t][1][m] = fmaf(v[kx + 1], wv, acc[t][1][m]);
          }
      }
    }
  const int oy = oy0 + ly;
#pragma unroll
  for (int m = 0; m < M; ++m) {
    const float bv = bias ? bias[m] : 0.0f;
    float o[TY][2];
#pragma unroll
    for (int t = 0; t < TY; ++t)
#pragma unroll
      for (int j = 0; j < 2; ++j) o[t][j] = has_act ? activate(acc[t][j][m] + bv, act) : acc[t][j][m] + bv;
    if (TY == 2 && pool) {
      if (oy + 1 < OH) {
        const float p = fmaxf(fmaxf(o[0][0], o[0][1]), fmaxf(o[TY - 1][0], o[TY - 1][1]));
        out[((static_cast<long long>(b) * M + m) * (OH / 2) + oy / 2) * (OW / 2) + ox / 2] = p;
      }
    } else {
#pragma unroll
      for (int t = 0; t < TY; ++t)
        if (oy + t < OH)
          *reinterpret_cast<float2*>(&out[((static_cast<long long>(b) * M + m) * OH + oy + t) * OW + ox]) =
              make_float2(o[t][0], o[t][1]);
    }
  }
}

// The shapes v7/v8 are compiled for: (C, H, W, K, M) and the band heights for v7 (TY 1) and v8 (TY 2).
struct SpecShape {
  int c, h, w, k, m;
};
template <int C, int H, int W, int K, int M, int BR7, int BR8>
struct Spec {
  static constexpr SpecShape shape{C, H, W, K, M};
  static void launch(int version, const ConvArgs& a, bool has_act, int act, bool pool, cudaStream_t s) {
    constexpr int OH = H - K + 1, TX = (W - K + 1) / 2;
    if (version == 7) {
      spec_conv_kernel<C, H, W, K, M, BR7, 1><<<dim3(a.n, (OH + BR7 - 1) / BR7), (BR7 / 1) * TX, 0, s>>>(a.in, a.bias, a.out, has_act, act, pool);
    } else {
      spec_conv_kernel<C, H, W, K, M, BR8, 2><<<dim3(a.n, (OH + BR8 - 1) / BR8), (BR8 / 2) * TX, 0, s>>>(a.in, a.bias, a.out, has_act, act, pool);
    }
  }
};

// ECE 408 conv1 (1x48x48, 6 filters 5x5) and conv2 (6x22x22, 16 filters 5x5).
using Ece408Conv1 = Spec<1, 48, 48, 5, 6, 11, 22>;
using Ece408Conv2 = Spec<6, 22, 22, 5, 16, 18, 18>;

template <class S>
bool matches(Shape in, const ConvParams& p) {
  return in.c == S::shape.c && in.h == S::shape.h && in.w == S::shape.w && p.kh == S::shape.k && p.kw == S::shape.k &&
         p.filters == S::shape.m;
}

std::string spec_list() {
  auto one = [](SpecShape s) {
    return "(" + std::to_string(s.c) + "x" + std::to_string(s.h) + "x" + std::to_string(s.w) + ", " +
           std::to_string(s.m) + " filters " + std::to_string(s.k) + "x" + std::to_string(s.k) + ")";
  };
  return one(Ece408Conv1::shape) + ", " + one(Ece408Conv2::shape);
}

}  // namespace

namespace detail {

Support const_supports(int version, const Layer& layer, const Epilogue& epi) {
  const ConvParams& p = std::get<ConvParams>(layer.op);
  const size_t per_filter = static_cast<size_t>(layer.in.c / p.groups) * p.kh * p.kw;
  if (version == 3) {
    if (epi.has_act || epi.pool2x2) return {false, "v3 has no fused epilogue"};
    if (per_filter > static_cast<size_t>(kBankFloats))
      return {false, "one filter's weights (" + std::to_string(per_filter * 4) + " bytes) exceed 64 KiB of constant memory"};
    return {};
  }
  if (p.sh != 1 || p.sw != 1 || p.padded() || p.groups != 1)
    return {false, "v" + std::to_string(version) + " is compiled for stride 1, no padding, one group"};
  if (!matches<Ece408Conv1>(layer.in, p) && !matches<Ece408Conv2>(layer.in, p))
    return {false, "v" + std::to_string(version) + " is compiled only for the shapes " + spec_list()};
  if (version == 7 && (epi.has_act || epi.pool2x2)) return {false, "v7 has no fused epilogue (v8 has)"};
  if (epi.pool2x2 && (layer.out.h % 2 || layer.out.w % 2)) return {false, "fused 2x2 pooling needs an even output size"};
  return {};
}

void const_forward(int version, const ConvArgs& a, cudaStream_t s) {
  const ConvParams& p = *a.p;
  const int per_filter = (a.is.c / p.groups) * p.kh * p.kw;
  if (version == 3) {
    const int chunk = kBankFloats / per_filter;  // filters per upload
    for (int m0 = 0; m0 < a.os.c; m0 += chunk) {
      const int mc = std::min(chunk, a.os.c - m0);
      upload_bank(a.w + static_cast<long long>(m0) * per_filter, static_cast<size_t>(mc) * per_filter, s);
      launch_direct_conv(a, ConstWeights{}, m0, mc, s);
      CUDA_CHECK_LAUNCH();
    }
    return;
  }
  upload_bank(a.w, static_cast<size_t>(p.filters) * per_filter, s);
  const int act = act_code(a.epi.act);
  if (matches<Ece408Conv1>(a.is, p)) Ece408Conv1::launch(version, a, a.epi.has_act, act, a.epi.pool2x2, s);
  else Ece408Conv2::launch(version, a, a.epi.has_act, act, a.epi.pool2x2, s);
  CUDA_CHECK_LAUNCH();
}

}  // namespace detail

void register_conv_const(Registry& r) {
  static const ImplHooks hooks{.conv_forward = detail::const_forward};
  auto add = [&](int v, const char* name, const char* summary, const char* shapes, bool epilogue) {
    Impl i = cuda_impl(LayerKind::conv, v, name, summary, &hooks);
    i.shapes = shapes;
    i.fuses_act = i.fuses_pool2x2 = epilogue;
    i.supports = [v](const Layer& l, const Epilogue& e) { return detail::const_supports(v, l, e); };
    i.constant_bank = [v](const Layer& l) {
      return std::string("c_weights") + (v == 3 && l.weight_count() > kBankFloats ? " in chunks" : "");
    };
    r.add(std::move(i));
  };
  add(3, "constant", "weights in __constant__ memory, chunks of filters when over 64 KiB", "any", false);
  add(7, "specialised", "compile-time shapes, weights as constant-memory FFMA operands", "ECE 408 conv1, conv2", false);
  add(8, "fused", "v7 + bias + activation + 2x2 max pool in one kernel", "ECE 408 conv1, conv2", true);
}

}  // namespace bs::cuda
