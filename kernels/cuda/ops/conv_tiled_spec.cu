// Convolution versions v9 (register-tiled specialised) and v10 (v9 + fused epilogue).
//
// Why they exist: v7 keeps the weights in __constant__ memory and reads them as FFMA operands. That is ideal
// while a layer's weights fit the per-SM constant cache (ECE 408 conv1: 600 bytes), but conv2's 9.6 KB
// thrash it: measured on an H200, v7 ran conv2 at 8.2 TFLOP/s, an eighth of the FP32 peak. v9 instead
// stages the weights in shared memory as (C, K, K, M), and gives each thread a PX x MQ register tile
// (PX neighbouring outputs along x, MQ filters), so each shared-memory load feeds several FMAs: per input
// row segment (PX+K-1 values) and K weight vectors, K*PX*MQ multiply-adds.
//
// conv1's 600 bytes of weights do fit the constant cache, so its tiles read them from __constant__ (CW),
// copied into the bank when the layer first runs on a device, not on every pass (const_bank.hpp).
// Each block is persistent over a range of images (sized from the occupancy calculator so that one wave
// fills the GPU) and double-buffers them: while it computes image b from shared memory, image b+1 is on
// its way in with cp.async, so the load latency hides behind the arithmetic.
//
// Layouts: in (N, C, H, W); w (M, C, K, K) in global memory, restaged in shared memory as (C, K, K, M);
// out (N, M, OH, OW), or (N, M, OH/2, OW/2) when v10 pools.
#include <cuda_pipeline.h>

#include <algorithm>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/ops/const_bank.hpp"
#include "kernels/cuda/ops/conv.hpp"
#include "kernels/cuda/engine/epilogue.cuh"
#include "kernels/cuda/impl_hooks.hpp"

namespace bs::cuda {
namespace {

// One image's tile geometry; a block runs IP images side by side so that its warps are full.
template <int C, int H, int W, int K, int M, int MQ, int PX, int TY, int IP>
struct TiledShape {
  static constexpr int OH = H - K + 1, OW = W - K + 1;
  static constexpr int GX = OW / PX, GY = OH / TY, GM = M / MQ;
  static constexpr int kPerImage = GX * GY * GM, kThreads = kPerImage * IP;
  static_assert(OW % PX == 0 && OH % TY == 0 && M % MQ == 0 && MQ % 2 == 0, "tile must divide the output");
};

// Weights for the CW (constant-weights) form: (M, C, K, K), read as FFMA operands when every index is a
// compile-time constant (one filter group per thread, GM == 1). Separate from conv_const.cu's bank.
__constant__ float c_tiled_w[16384];

// ACT: the activation code of the epilogue (kNoAct: none); POOL: 2x2 max pool it (TY == 2). Both compile-time,
// so that the epilogue has no branches: with them as kernel arguments, conv1's fused kernel spent ~30
// instructions per output on the tests and calls around tanhf.
template <int C, int H, int W, int K, int M, int MQ, int PX, int TY, int IP, bool CW, int MINB, int ACT, bool POOL>
__global__ void __launch_bounds__(TiledShape<C, H, W, K, M, MQ, PX, TY, IP>::kThreads, MINB)
    tiled_spec_kernel(const float* __restrict__ in, const float* __restrict__ w, const float* __restrict__ bias,
                      float* __restrict__ out, int n, int images_per_block) {
  using S = TiledShape<C, H, W, K, M, MQ, PX, TY, IP>;
  static_assert(!POOL || TY == 2, "the pooling epilogue pools the thread's own two rows");
  constexpr int OH = S::OH, OW = S::OW, CHW = C * H * W;
  static_assert(CHW % 4 == 0, "images are copied in 16-byte pieces");
  static_assert(!CW || S::GM == 1, "constant weights need compile-time filter indices");
  extern __shared__ __align__(16) float smem[];
  float* ws = smem;                                   // (C, K, K, M), unless CW
  float* xs = smem + (CW ? 0 : C * K * K * M);        // [2][IP][C, H, W]: computing one set, loading the next
  if constexpr (!CW)
    for (int i = threadIdx.x; i < C * K * K * M; i += S::kThreads) {
      const int m = i % M, k = i / M;  // k = (c * K + ky) * K + kx
      ws[i] = w[m * C * K * K + k];
    }
  const int slot = threadIdx.x / S::kPerImage, rem = threadIdx.x % S::kPerImage;
  // gx fastest so that neighbouring threads store neighbouring outputs
  const int gx = rem % S::GX, gy = (rem / S::GX) % S::GY, gm = rem / (S::GX * S::GY);
  const int ox = gx * PX, oy = gy * TY, m0 = CW ? 0 : gm * MQ;
  const int first = blockIdx.x * images_per_block, last = min(n, first + images_per_block);
  auto fetch = [&](int b, float* dst) {
    copy_pieces_async<S::kThreads, IP * CHW / 4>(dst, in + static_cast<long long>(b) * CHW, min(IP, last - b) * (CHW / 4));
    __pipeline_commit();
  };
  // conv1 (CW) reads the bias of its filters once, not again for every image; conv2's 8 filters a thread would cost it 24
  // registers (167 -> 191), and its bias loads are a sliver of its body.
  float bias_once[MQ];
#pragma unroll
  for (int q = 0; q < MQ; ++q) bias_once[q] = CW && bias ? bias[m0 + q] : 0.0f;
  if (first < last) fetch(first, xs);
  for (int b0 = first, step = 0; b0 < last; b0 += IP, ++step) {
    if (b0 + IP < last) {
      fetch(b0 + IP, xs + ((step + 1) & 1) * IP * CHW);
      __pipeline_wait_prior(1);  // this set has landed; the next may still be in flight
    } else {
      __pipeline_wait_prior(0);
    }
    __syncthreads();  // everyone's pieces of this set (and, the first time, ws) are visible
    const int b = b0 + slot;
    if (b < last) {
      const float* x = xs + ((step & 1) * IP + slot) * CHW;
      float acc[TY][PX][MQ];
#pragma unroll
      for (int t = 0; t < TY; ++t)
#pragma unroll
        for (int p = 0; p < PX; ++p)
#pragma unroll
          for (int q = 0; q < MQ; ++q) acc[t][p][q] = 0.0f;
#pragma unroll 1
      for (int c = 0; c < C; ++c) {
#pragma unroll
        for (int r = 0; r < TY + K - 1; ++r) {  // input row oy + r feeds output row t with ky = r - t
          float v[PX + K - 1];
          const float* row = x + (c * H + oy + r) * W + ox;
#pragma unroll
          for (int i = 0; i < PX + K - 1; ++i) v[i] = row[i];
#pragma unroll
          for (int t = 0; t < TY; ++t) {
            const int ky = r - t;
            if (ky < 0 || ky >= K) continue;  // resolved at compile time
#pragma unroll
            for (int kx = 0; kx < K; ++kx) {
              float wv[MQ];
              if constexpr (CW) {
#pragma unroll
                for (int q = 0; q < MQ; ++q) wv[q] = c_tiled_w[((q * C + c) * K + ky) * K + kx];
              } else if constexpr (MQ % 4 == 0 && M % 4 == 0) {
                const float* wp = ws + ((c * K + ky) * K + kx) * M + m0;
#pragma unroll
                for (int q = 0; q < MQ; q += 4) {
                  const float4 f = *reinterpret_cast<const float4*>(wp + q);
                  wv[q] = f.x; wv[q + 1] = f.y; wv[q + 2] = f.z; wv[q + 3] = f.w;
                }
              } else {
                const float* wp = ws + ((c * K + ky) * K + kx) * M + m0;
#pragma unroll
                for (int q = 0; q < MQ; q += 2) {
                  const float2 f = *reinterpret_cast<const float2*>(wp + q);
                  wv[q] = f.x; wv[q + 1] = f.y;
                }
              }
#pragma unroll
              for (int p = 0; p < PX; ++p)
#pragma unroll
                for (int q = 0; q < MQ; ++q) acc[t][p][q] = fmaf(v[kx + p], wv[q], acc[t][p][q]);
            }
          }
        }
      }
#pragma unroll
      for (int q = 0; q < MQ; ++q) {
        const int m = m0 + q;
        const float bv = CW ? bias_once[q] : bias ? bias[m] : 0.0f;
        if constexpr (POOL) {
          // Pool first, then add the bias and activate once. ReLU, tanh and sigmoid are non-decreasing and the
          // bias is one constant per filter, so act(max(a, b) + bias) == max(act(a + bias), act(b + bias)) (in
          // floating point too, as far as the activation's implementation is monotone), for a quarter of the
          // activations: per pooled output, 4 x 25 FMAs and one tanhf instead of four.
          float* dst = out + ((static_cast<long long>(b) * M + m) * (OH / 2) + oy / 2) * (OW / 2) + ox / 2;
#pragma unroll
          for (int p = 0; p < PX / 2; ++p) {
            const float v = fmaxf(fmaxf(acc[0][2 * p][q], acc[0][2 * p + 1][q]), fmaxf(acc[TY - 1][2 * p][q], acc[TY - 1][2 * p + 1][q])) + bv;
            dst[p] = activate_c<ACT>(v);
          }
        } else {
#pragma unroll
          for (int t = 0; t < TY; ++t)
#pragma unroll
            for (int p = 0; p < PX; ++p) {
              acc[t][p][q] = activate_c<ACT>(acc[t][p][q] + bv);
            }
#pragma unroll
          for (int t = 0; t < TY; ++t) {
            float* dst = out + ((static_cast<long long>(b) * M + m) * OH + oy + t) * OW + ox;
            if constexpr (PX % 4 == 0 && OW % 4 == 0) {
#pragma unroll
              for (int p = 0; p < PX; p += 4)
                *reinterpret_cast<float4*>(dst + p) = make_float4(acc[t][p][q], acc[t][p + 1][q], acc[t][p + 2][q], acc[t][p + 3][q]);
            } else if constexpr (PX % 2 == 0 && OW % 2 == 0) {
#pragma unroll
              for (int p = 0; p < PX; p += 2) *reinterpret_cast<float2*>(dst + p) = make_float2(acc[t][p][q], acc[t][p + 1][q]);
            } else {
#pragma unroll
              for (int p = 0; p < PX; ++p) dst[p] = acc[t][p][q];
            }
          }
        }
      }
    }
    __syncthreads();  // all reads of this buffer are done before the next fetch overwrites it
  }
}

// Copies the weights into c_tiled_w unless it already holds them (const_bank.hpp).
void ensure_bank(const ConvArgs& a, size_t floats, cudaStream_t s) {
  static BankContents held;
  if (held.holds(a.weights_id)) return;
  CUDA_CHECK(cudaMemcpyToSymbolAsync(c_tiled_w, a.w, sizeof(float) * floats, 0, cudaMemcpyDeviceToDevice, s));
  held.set(a.weights_id);
}

// One wave of persistent blocks: as many as fit on the GPU at once, each taking a contiguous run of images.
template <int C, int H, int W, int K, int M, int MQ, int PX, int TY, int IP, bool CW, int MINB, int ACT, bool POOL>
void launch_tiled(const ConvArgs& a, cudaStream_t s) {
  using S = TiledShape<C, H, W, K, M, MQ, PX, TY, IP>;
  auto kernel = tiled_spec_kernel<C, H, W, K, M, MQ, PX, TY, IP, CW, MINB, ACT, POOL>;
  constexpr size_t smem = sizeof(float) * ((CW ? 0 : C * K * K * M) + 2 * IP * C * H * W);
  static const int resident = resident_blocks(kernel, S::kThreads, smem);
  if (CW) ensure_bank(a, static_cast<size_t>(M) * C * K * K, s);
  const PersistentGrid g = persistent_grid(a.n, IP, resident);
  kernel<<<g.blocks, S::kThreads, smem, s>>>(a.in, a.w, a.bias, a.out, a.n, g.images_per_block);
}

struct Shape5 {
  int c, h, w, k, m;
  bool matches(Shape in, const ConvParams& p) const {
    return in.c == c && in.h == h && in.w == w && p.kh == k && p.kw == k && p.filters == m;
  }
};
// The compiled shapes: ECE 408 conv1 (1x48x48, 6 filters 5x5) and conv2 (6x22x22, 16 filters 5x5).
constexpr Shape5 kConv1{1, 48, 48, 5, 6}, kConv2{6, 22, 22, 5, 16};

}  // namespace

namespace detail {

Support tiled_supports(int version, const Layer& layer, const Epilogue& epi) {
  const ConvParams& p = std::get<ConvParams>(layer.op);
  const std::string v = "v" + std::to_string(version);
  if (p.sh != 1 || p.sw != 1 || p.padded() || p.groups != 1) return {false, v + " is compiled for stride 1, no padding, one group"};
  if (!kConv1.matches(layer.in, p) && !kConv2.matches(layer.in, p))
    return {false, v + " is compiled only for the shapes (1x48x48, 6 filters 5x5), (6x22x22, 16 filters 5x5)"};
  if (version == 9 && (epi.has_act || epi.pool2x2)) return {false, "v9 has no fused epilogue (v10 has)"};
  if (epi.pool2x2 && (layer.out.h % 2 || layer.out.w % 2)) return {false, "fused 2x2 pooling needs an even output size"};
  return {};
}

void tiled_forward(int version, const ConvArgs& a, cudaStream_t s) {
  const bool has_act = version == 10 && a.epi.has_act, pool = version == 10 && a.epi.pool2x2;
  const bool conv1 = kConv1.matches(a.is, *a.p);
  dispatch_act(has_act, a.epi.act, [&](auto code) {
    constexpr int A = decltype(code)::value;
    if (conv1) {
      // 44x44 outputs. Its 600 bytes of weights fit the constant cache, so they are FFMA operands (CW).
      // Plain: 4 pixels x 6 filters per thread (484 threads). Pooling: 2x2 pixels x 6 filters (484 threads).
      if (pool) launch_tiled<1, 48, 48, 5, 6, 6, 2, 2, 1, true, 1, A, true>(a, s);
      else launch_tiled<1, 48, 48, 5, 6, 6, 4, 1, 1, true, 1, A, false>(a, s);
    } else {
      // 18x18 outputs: 6 pixels x 4 filters per thread, 216 threads per image, two images per block (72
      // registers). Measured against 6x8 (0.410 ms), 9x4 (0.502), 18x4 (0.466), 6x2 (0.476), 6x16 (0.469),
      // 3x8 (0.457) and 2-row tiles (0.437): 0.376 ms (experiments/ece408-gpu.md).
      if (pool) launch_tiled<6, 22, 22, 5, 16, 8, 6, 2, 2, false, 1, A, true>(a, s);
      else launch_tiled<6, 22, 22, 5, 16, 4, 6, 1, 2, false, 1, A, false>(a, s);
    }
  });
  CUDA_CHECK_LAUNCH();
}

}  // namespace detail

// v9-v11 copy conv1's weights (one input channel) into c_tiled_w; conv2's stay in shared memory.
std::string tiled_bank(const Layer& l) { return l.in.c == 1 ? "c_tiled_w" : ""; }

void register_conv_tiled(Registry& r) {
  static const ImplHooks hooks{.conv_forward = detail::tiled_forward};
  auto add = [&](int v, const char* name, const char* summary, bool epilogue) {
    Impl i = cuda_impl(LayerKind::conv, v, name, summary, &hooks);
    i.shapes = "ECE 408 conv1, conv2";
    i.fuses_act = i.fuses_pool2x2 = epilogue;
    i.supports = [v](const Layer& l, const Epilogue& e) { return detail::tiled_supports(v, l, e); };
    i.constant_bank = tiled_bank;
    r.add(std::move(i));
  };
  add(9, "tiled-spec", "compile-time shapes, weights in shared memory, PX x MQ register tile per thread", false);
  add(10, "tiled-fused", "v9 + bias + activation + 2x2 max pool in one kernel", true);
}

}  // namespace bs::cuda
