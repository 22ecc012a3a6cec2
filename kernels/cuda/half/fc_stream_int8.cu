// Fully connected version v15: stream-int8, weight-only INT8 at small batches (--weights int8), in every precision.
// At one image a fully connected layer is a matrix-vector product bound by reading its weights once: AlexNet's fc6 is
// 37.7 M weights, 151 MB in FP32, 75.5 MB in 16 bits, 37.7 MB in 8 bits (11.3 us at the H100's 3.35 TB/s).
//
// The weights are prepared once from the quantised FP32 values the backend uploads (q x scale, kernels/model/
// quantize.hpp): per output row its scale again (largest magnitude / 127: the same scale up to FP32 rounding, so the
// same q), then q as signed bytes, rows padded with zeros to a multiple of 16 values; in the input's order, which on the
// 16-bit paths is the NHWC flattening (a pad channel's column is zero). Layout: (O, Kp) bytes, then O FP32 scales.
//
// The kernel is v14's schedule (half/fc_stream_half.cu) on bytes: blocks of four warps, as many as the GPU holds at
// once, each taking R rows (1, 2 or 4) in turn; the rows' 16-byte chunks of 16 weights read once with a streaming load
// and multiplied by the same 16 values of each of up to 8 images, each input chunk read once for the R rows (FP32, or 16-bit values widened); a byte becomes a float without a
// conversion instruction (placed in the mantissa of 2^23 with a byte permute, then 2^23 + 128 subtracted), the sums are
// FP32, and the row's scale, the bias and the activation are applied once after the reduction. Batches beyond 8 images
// run in passes that read the weights again: auto takes v15 for a few images only (kInt8StreamImages).
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

constexpr int kThreads = 128;  // four warps per row
constexpr int kMaxImages = 8;  // images per pass

// The input's element type: FP32 (--precision fp32 and tf32), or 16-bit words.
enum class In { f32, f16, b16 };

long long k_padded(long long k) { return (k + 15) / 16 * 16; }
size_t prepared_bytes(long long k, int outputs) { return static_cast<size_t>(k_padded(k)) * outputs + sizeof(float) * outputs; }

// 16 signed bytes -> floats, exactly: byte b ^ 0x80 is b + 128 as an unsigned byte; as the low mantissa byte of 2^23
// it reads 2^23 + b + 128.
__device__ __forceinline__ void unpack16(uint4 v, float f[16]) {
  const uint32_t w[4] = {v.x ^ 0x80808080u, v.y ^ 0x80808080u, v.z ^ 0x80808080u, v.w ^ 0x80808080u};
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int b = 0; b < 4; ++b) f[4 * i + b] = __uint_as_float(__byte_perm(w[i], 0x4b000000u, 0x7650u + b)) - 8388736.0f;
}

template <In T>
using Elem = std::conditional_t<T == In::f32, float, uint16_t>;

template <In T>
__device__ __forceinline__ float widen(Elem<T> v) {
  if constexpr (T == In::f32) return v;
  else return to_float<T == In::b16>(v);
}

// 8 16-bit input values (one 16-byte word) widened to floats.
template <In T>
__device__ __forceinline__ void widen8(uint4 a, float f[8]) {
  const uint32_t w[4] = {a.x, a.y, a.z, a.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    f[2 * i] = widen<T>(static_cast<uint16_t>(w[i] & 0xffffu));
    f[2 * i + 1] = widen<T>(static_cast<uint16_t>(w[i] >> 16));
  }
}

// The 16 input values of chunk j of image img: vector loads where K is a multiple of 16 (XVEC: every chunk lies inside
// its row, and the rows are 16-byte aligned), else one value at a time, zero past K.
template <In T, bool XVEC>
__device__ __forceinline__ void input16(const Elem<T>* __restrict__ x, long long k, long long img, int j, float f[16]) {
  const Elem<T>* at = x + img * k + 16LL * j;
  if constexpr (XVEC) {
    const uint4* v = reinterpret_cast<const uint4*>(at);
    if constexpr (T == In::f32) {
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const float4 a = __ldg(reinterpret_cast<const float4*>(v) + q);
        f[4 * q] = a.x; f[4 * q + 1] = a.y; f[4 * q + 2] = a.z; f[4 * q + 3] = a.w;
      }
    } else {
#pragma unroll
      for (int q = 0; q < 2; ++q) widen8<T>(__ldg(v + q), f + 8 * q);
    }
  } else {
#pragma unroll
    for (int i = 0; i < 16; ++i) f[i] = 16LL * j + i < k ? widen<T>(__ldg(at + i)) : 0.0f;
  }
}

// w: (O, Kp / 16) chunks, then the O scales; x: (N, K); out: (N, os), FP32 or 16-bit. A block takes R rows at a time:
// each input chunk read from L1 serves R rows (with one row per turn, FP32 inputs cost 4 bytes of L1 traffic per
// weight byte and image, which capped v15's first form at 1.6 TB/s on fc6 at one image and 0.8 TB/s at two). A thread
// walks its chunks of the rows (j = t, t + 128, ...): with CH = 0 in one loop, unrolled by 2, which issues R loads, then R
// more only after their products; with CH > 0 in batches of CH, the batch's R x CH weight loads (and, for one image on
// aligned rows, its input loads) issued before any of their products. Either way the products are taken in the same
// order, chunk by chunk: the same sums to the bit.
template <In T, int NB, int R, bool XVEC, int CH>
__global__ void __launch_bounds__(kThreads) fc_stream_int8_kernel(const uint4* __restrict__ w, const float* __restrict__ scales,
                                                                   const Elem<T>* __restrict__ x, long long k, int k16, int n,
                                                                   int outputs, int os, const float* __restrict__ bias, int act,
                                                                   Elem<T>* __restrict__ out, int* ovf) {
  static_assert(CH == 0 || T != In::f32, "the batched loads are for 16-bit inputs");
  constexpr bool kPreloadX = XVEC && NB == 1 && CH > 0;  // the one image's chunks (two 16-byte words each) loaded with the weights
  __shared__ float partial[kThreads / 32][R][NB];
  const int t = threadIdx.x, lane = t % 32, warp = t / 32;
  const uint4 zero = make_uint4(0u, 0u, 0u, 0u);
  for (int o0 = blockIdx.x * R; o0 < outputs; o0 += gridDim.x * R) {
    const uint4* row[R];
#pragma unroll
    for (int r = 0; r < R; ++r) row[r] = w + static_cast<long long>(min(o0 + r, outputs - 1)) * k16;  // past the end: read, unused
    for (int n0 = 0; n0 < n; n0 += NB) {
      const int nb = min(NB, n - n0);
      float acc[R][NB];
#pragma unroll
      for (int r = 0; r < R; ++r)
#pragma unroll
        for (int b = 0; b < NB; ++b) acc[r][b] = 0.0f;
      if constexpr (CH == 0) {
#pragma unroll 2
        for (int j = t; j < k16; j += kThreads) {
          uint4 raw[R];
#pragma unroll
          for (int r = 0; r < R; ++r) raw[r] = __ldcs(row[r] + j);
          float wf[R][16];
#pragma unroll
          for (int r = 0; r < R; ++r) unpack16(raw[r], wf[r]);
#pragma unroll
          for (int b = 0; b < NB; ++b) {
            if (b >= nb) break;
            float xf[16];
            input16<T, XVEC>(x, k, n0 + b, j, xf);
#pragma unroll
            for (int r = 0; r < R; ++r)
#pragma unroll
              for (int i = 0; i < 16; ++i) acc[r][b] = fmaf(wf[r][i], xf[i], acc[r][b]);
          }
        }
      } else {
        for (int j0 = t; j0 < k16; j0 += kThreads * CH) {
          uint4 raw[CH][R], xr[kPreloadX ? CH : 1][2];
#pragma unroll
          for (int c = 0; c < CH; ++c)
#pragma unroll
            for (int r = 0; r < R; ++r) raw[c][r] = j0 + c * kThreads < k16 ? __ldcs(row[r] + j0 + c * kThreads) : zero;
          if constexpr (kPreloadX) {
            const uint4* xrow = reinterpret_cast<const uint4*>(x + n0 * k);
#pragma unroll
            for (int c = 0; c < CH; ++c)
#pragma unroll
              for (int q = 0; q < 2; ++q) xr[c][q] = j0 + c * kThreads < k16 ? __ldg(xrow + (j0 + c * kThreads) * 2 + q) : zero;
          }
#pragma unroll
          for (int c = 0; c < CH; ++c) {
            const int j = j0 + c * kThreads;
            if (j >= k16) break;
            float wf[R][16];
#pragma unroll
            for (int r = 0; r < R; ++r) unpack16(raw[c][r], wf[r]);
#pragma unroll
            for (int b = 0; b < NB; ++b) {
              if (b >= nb) break;
              float xf[16];
              if constexpr (kPreloadX) {
                widen8<T>(xr[c][0], xf);
                widen8<T>(xr[c][1], xf + 8);
              } else {
                input16<T, XVEC>(x, k, n0 + b, j, xf);
              }
#pragma unroll
              for (int r = 0; r < R; ++r)
#pragma unroll
                for (int i = 0; i < 16; ++i) acc[r][b] = fmaf(wf[r][i], xf[i], acc[r][b]);
            }
          }
        }
      }
#pragma unroll
      for (int r = 0; r < R; ++r)
#pragma unroll
        for (int b = 0; b < NB; ++b) {
          float v = acc[r][b];
#pragma unroll
          for (int d = 16; d > 0; d /= 2) v += __shfl_xor_sync(0xffffffffu, v, d);
          if (lane == 0) partial[warp][r][b] = v;
        }
      __syncthreads();
      const int r = t / NB, b = t % NB, o = o0 + r;
      if (t < R * NB && b < nb && o < outputs) {
        float v = 0.0f;
#pragma unroll
        for (int q = 0; q < kThreads / 32; ++q) v += partial[q][r][b];
        v *= scales[o];
        if (bias) v += bias[o];
        v = T == In::f32 ? activate_or_keep(v, act) : activate16_or_keep(v, act);  // FP32 output: tanhf, expf
        Elem<T>* dst = out + static_cast<long long>(n0 + b) * os;
        if constexpr (T == In::f32) {
          dst[o] = v;
        } else {
          dst[o] = store_value<T == In::b16>(v, ovf);
          if (o == outputs - 1 && os > outputs) dst[outputs] = 0;  // the pad output
        }
      }
      __syncthreads();  // partial is reused by the next pass
    }
  }
}

// W (O, C*H*W) FP32 in the model's flattening -> (O, Kp) bytes in the input's (NHWC when cs > 0: value k is input (y, x,
// c) = (k / (W * Cs), k / Cs % W, k % Cs), zero for the pad channel), zero for K <= k < Kp; one block per row in turn.
__global__ void prepare_rows(const float* __restrict__ w, long long k_model, Shape is, int cs, long long kp, int outputs,
                             int8_t* __restrict__ dst, float* __restrict__ scales) {
  __shared__ float red[256 / 32];
  __shared__ float row_scale;
  const long long k_count = cs > 0 ? static_cast<long long>(is.h) * is.w * cs : k_model;
  for (int o = blockIdx.x; o < outputs; o += gridDim.x) {
    const float* row = w + static_cast<long long>(o) * k_model;
    float m = 0.0f;
    for (long long i = threadIdx.x; i < k_model; i += blockDim.x) m = fmaxf(m, fabsf(row[i]));
    for (int d = 16; d > 0; d /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, d));
    if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = m;
    __syncthreads();
    if (threadIdx.x == 0) {
      for (int q = 1; q < static_cast<int>(blockDim.x / 32); ++q) m = fmaxf(m, red[q]);
      row_scale = m / 127.0f;
      scales[o] = row_scale;
    }
    __syncthreads();
    const float s = row_scale;
    for (long long k = threadIdx.x; k < kp; k += blockDim.x) {
      const long long at = k >= k_count ? -1 : cs > 0 ? nhwc_to_nchw(k, is, cs) : k;
      const float q = at >= 0 && s > 0.0f ? rintf(row[at] / s) : 0.0f;
      dst[o * kp + k] = static_cast<int8_t>(fminf(fmaxf(q, -127.0f), 127.0f));
    }
    __syncthreads();  // row_scale and red are reused by the next row
  }
}

// k_model: the row length in the model; cs > 0: the input is 16-bit NHWC over cs stored channels of `is`.
void prepare(const float* w, long long k_model, Shape is, int cs, long long k, int outputs, float* prepared, cudaStream_t s) {
  const long long kp = k_padded(k);
  auto* dst = reinterpret_cast<int8_t*>(prepared);
  auto* scales = reinterpret_cast<float*>(dst + kp * outputs);  // kp * outputs is a multiple of 16 bytes
  prepare_rows<<<std::min(outputs, 8192), 256, 0, s>>>(w, k_model, is, cs, kp, outputs, dst, scales);
  CUDA_CHECK_LAUNCH();
}

template <In T>
void launch(const uint16_t* in16, const float* in32, long long k, int n, int outputs, int os, const float* bias, int act,
            const float* prepared, void* out, int* ovf, cudaStream_t s) {
  const int k16 = static_cast<int>(k_padded(k) / 16);
  const auto* w = reinterpret_cast<const uint4*>(prepared);
  const auto* scales = reinterpret_cast<const float*>(reinterpret_cast<const int8_t*>(prepared) + k_padded(k) * outputs);
  const Elem<T>* x;
  if constexpr (T == In::f32) x = in32;
  else x = in16;
  auto* y = static_cast<Elem<T>*>(out);
  const int nb = std::min(n, kMaxImages);
  // Rows per turn: 4 where that leaves at least 4 turns per multiprocessor (AlexNet's fc6 and fc7: 7.8 on the H100), else
  // 2 where that leaves 2 (fc8: 3.8), else 1.
  const int sms = sm_count(), rows = outputs >= 16 * sms ? 4 : outputs >= 4 * sms ? 2 : 1;
  // One image of 16-bit values, 4 rows a turn, aligned rows (AlexNet's fc6 and fc7): the batched loads, 2 chunks a batch
  // where that covers a thread's chunks of the rows (K up to 4,096 values: fc7), else 1 (4 loads). On the H200 fc6
  // 13.6 -> 13.1 us, fc7 7.2 -> 6.9 (in two calls of three). Everywhere else the loop of before (CH = 0): with FP32
  // inputs and with 2 rows a turn (fc8) the batched forms were 0.1-0.2 us slower (experiments/batch1-latency.md).
  const int per_thread = (k16 + kThreads - 1) / kThreads;
  auto go = [&](auto images, auto per_turn) {
    constexpr int NB = decltype(images)::value, R = decltype(per_turn)::value;
    auto run = [&](auto kernel) {
      static const int resident = resident_blocks(kernel, kThreads, 0);  // of this instantiation, the GPU at once
      kernel<<<std::min((outputs + R - 1) / R, resident), kThreads, 0, s>>>(w, scales, x, k, k16, n, outputs, os, bias, act, y, ovf);
    };
    if constexpr (NB == 1 && R == 4 && T != In::f32)
      if (k % 16 == 0) {
        if (per_thread <= 2) run(fc_stream_int8_kernel<T, 1, 4, true, 2>);
        else run(fc_stream_int8_kernel<T, 1, 4, true, 1>);
        return;
      }
    if (k % 16 == 0) run(fc_stream_int8_kernel<T, NB, R, true, 0>);  // whole chunks of 16 values, each row 16-byte aligned
    else run(fc_stream_int8_kernel<T, NB, R, false, 0>);
  };
  auto per_rows = [&](auto images) {
    if (rows == 4) go(images, std::integral_constant<int, 4>{});
    else if (rows == 2) go(images, std::integral_constant<int, 2>{});
    else go(images, std::integral_constant<int, 1>{});
  };
  if (nb <= 1) per_rows(std::integral_constant<int, 1>{});
  else if (nb <= 2) per_rows(std::integral_constant<int, 2>{});
  else if (nb <= 4) per_rows(std::integral_constant<int, 4>{});
  else per_rows(std::integral_constant<int, kMaxImages>{});
  CUDA_CHECK_LAUNCH();
}

long long half_k(Shape is) { return static_cast<long long>(is.h) * is.w * stored_channels(is.c); }

Support int8_supports(const Layer& l) {
  if (l.in.size() >= (1LL << 34)) return {false, "v15: the input exceeds 2^34 values per image"};  // K / 16 chunks fit an int
  if (std::get<FcParams>(l.op).outputs >= INT_MAX / 2) return {false, "v15: too many outputs"};
  return {};
}

void fp32_prepare(int, const float* w, int inputs, int outputs, float* prepared, cudaStream_t s) {
  prepare(w, inputs, Shape{}, 0, inputs, outputs, prepared, s);
}

void fp32_forward(int, const FcArgs& a, cudaStream_t s) {
  if (!a.prepared) fail("fc v15", "weights were not prepared");
  launch<In::f32>(nullptr, a.in, a.inputs, a.n, a.outputs, a.outputs, a.bias, a.act, a.prepared, a.out, nullptr, s);
}

void half_prepare(const float* w, Shape is, int outputs, bool, float* prepared, cudaStream_t s) {
  prepare(w, static_cast<long long>(is.c) * is.h * is.w, is, stored_channels(is.c), half_k(is), outputs, prepared, s);
}

void half_forward(int, const HalfFcArgs& a, cudaStream_t s) {
  if (!a.prepared) fail("fc v15", "weights were not prepared");
  const int os = stored_channels(a.outputs);
  if (a.bf16) launch<In::b16>(a.in, nullptr, half_k(a.is), a.n, a.outputs, os, a.bias, a.act, a.prepared, a.out, a.ovf, s);
  else launch<In::f16>(a.in, nullptr, half_k(a.is), a.n, a.outputs, os, a.bias, a.act, a.prepared, a.out, a.ovf, s);
}

}  // namespace
}  // namespace bs::cuda::half

namespace bs::cuda {

void register_fc_stream_int8(Registry& r) {
  static const ImplHooks hooks{.fc_prepare = half::fp32_prepare, .fc_forward = half::fp32_forward,
                               .half_fc_prepare = half::half_prepare, .half_fc_forward = half::half_forward};
  Impl i = cuda_impl(LayerKind::fc, 15, "stream-int8",
                     "weight-only INT8 (--weights int8), any --precision: 8-bit rows and a scale per output streamed once per "
                     "pass of up to 8 images, FP32 (or widened 16-bit) activations, FP32 sums, bias + activation fused; for "
                     "small batches",
                     &hooks);
  i.math = "int8 weights";
  i.precisions = {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16};
  i.int8_weights = true;
  i.fuses_act = true;
  i.prep_layout = 15;  // (O, Kp) bytes in the input's order, then O scales
  i.supports = [](const Layer& l, const Epilogue&) { return half::int8_supports(l); };
  i.prepared_floats = [](const Layer& l, Shape stored, Precision p) {
    const int outputs = std::get<FcParams>(l.op).outputs;
    const long long k = is_half(p) ? half::half_k(stored) : l.in.size();
    return (half::prepared_bytes(k, outputs) + sizeof(float) - 1) / sizeof(float);
  };
  r.add(std::move(i));
}

}  // namespace bs::cuda
