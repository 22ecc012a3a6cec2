// Fully connected versions v5-v9 (ops.hpp has the whole menu).
//
//   v5 stream            for small batches, where the layer is one pass over the weights (AlexNet at batch 1:
//                        234 MB, ~80 us at 3 TB/s): warps take 1 or 4 weight rows and a quarter of K, every
//                        lane keeps 4 independent 16-byte weight loads in flight (streaming, evict-first: each
//                        weight is read once), the images' inputs come through L1; up to 16 images share one
//                        read of the weights, more images take more passes
//   v6 gemm-fma          the GEMM engine (gemm_engine.cuh), FP32 FFMA, 128x128 tiles
//   v7 gemm-3xtf32       the GEMM engine, 3xTF32 tensor cores (FP32 accuracy), 128x128 tiles
//   v8 gemm-3xtf32-64    the same with 64x64 tiles, for mid-sized batches
//   v9 gemm-3xtf32-128x64  the same with 128x64 tiles (two blocks per SM)
//   v10 gemm-tf32, v11 gemm-tf32-64: --precision tf32, one TF32 product, the tiles of v7 and v8
// v6-v9 compute C (images x outputs) = X (images x K) * W^T: A = X^T, transposed into the workspace for each
// run ((Kpad, Mpad), zero-padded), B = W^T prepared once ((Kpad, Npad)); the output rows are images, so the
// epilogue's stores run along the outputs. All four fuse bias and the activation that follows.
#include <algorithm>
#include <cstdint>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/engine/epilogue.cuh"
#include "kernels/cuda/engine/gemm_launch.cuh"
#include "kernels/cuda/engine/gemm_math.cuh"
#include "kernels/cuda/engine/gemm_prep.hpp"
#include "kernels/cuda/ops/ops.hpp"
#include "kernels/cuda/impl_hooks.hpp"
#include "weights_tools/error.hpp"

namespace bs::cuda {
namespace {

using gemm::kPadK;
using gemm::kPadMN;
using gemm::pad_to;

// ---- v5: weight streaming. Each warp takes R weight rows and one of kStreamSplit slices of K; a block is
// 8 warps (8 / kStreamSplit row groups). Per step a lane loads UNROLL x R 16-byte pieces of weights (streaming,
// evict-first: each weight is read once) and, for each of up to NB images, one 16-byte piece of input (through
// L1), used for all R rows. R = 1, UNROLL = 4 for up to 4 images (4 independent weight loads in flight per lane);
// R = 4 for 8 and 16 images, so that an input load feeds 4 rows: with one row per warp, 8 images took two
// passes over the weights and the 8 input loads per weight load made L1 the limit (AlexNet fc6 at batch 16:
// 0.274 ms on the H100, about 1.1 TB/s per pass).
constexpr int kStreamSplit = 4;

template <int R, int UNROLL, int NB, bool VEC>
__global__ void __launch_bounds__(256) fc_stream_kernel(const float* __restrict__ in, int n, int k_count,
                                                        const float* __restrict__ w, const float* __restrict__ bias,
                                                        int outputs, int act, float* __restrict__ out) {
  constexpr int kGroups = 8 / kStreamSplit, kRows = kGroups * R;  // row groups and rows per block
  __shared__ float red[kRows][kStreamSplit][NB];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int rg = warp / kStreamSplit, ks = warp % kStreamSplit;
  const int o0 = blockIdx.x * kRows + rg * R;
  const int slice = ((k_count + kStreamSplit - 1) / kStreamSplit + 3) / 4 * 4;
  const int k0 = ks * slice, k1 = min(k_count, k0 + slice);
  const float* wr[R];
#pragma unroll
  for (int r = 0; r < R; ++r) wr[r] = w + static_cast<long long>(min(o0 + r, outputs - 1)) * k_count;
  for (int b0 = 0; b0 < n; b0 += NB) {
    float acc[R][NB];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int j = 0; j < NB; ++j) acc[r][j] = 0.0f;
    if (o0 < outputs) {
      if constexpr (VEC) {
        for (int k = k0 + lane * 4; k < k1; k += 128 * UNROLL) {
          float4 wv[UNROLL][R];
#pragma unroll
          for (int u = 0; u < UNROLL; ++u)
#pragma unroll
            for (int r = 0; r < R; ++r)
              wv[u][r] = k + u * 128 < k1 ? __ldcs(reinterpret_cast<const float4*>(wr[r] + k + u * 128)) : make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
          for (int u = 0; u < UNROLL; ++u) {
            if (k + u * 128 >= k1) break;
#pragma unroll
            for (int j = 0; j < NB; ++j)
              if (b0 + j < n) {
                const float4 x = __ldg(reinterpret_cast<const float4*>(in + static_cast<long long>(b0 + j) * k_count + k + u * 128));
#pragma unroll
                for (int r = 0; r < R; ++r)
                  acc[r][j] = fmaf(x.x, wv[u][r].x, fmaf(x.y, wv[u][r].y, fmaf(x.z, wv[u][r].z, fmaf(x.w, wv[u][r].w, acc[r][j]))));
              }
          }
        }
      } else {
        for (int k = k0 + lane; k < k1; k += 32) {
          float wv[R];
#pragma unroll
          for (int r = 0; r < R; ++r) wv[r] = __ldcs(wr[r] + k);
#pragma unroll
          for (int j = 0; j < NB; ++j)
            if (b0 + j < n) {
              const float x = __ldg(in + static_cast<long long>(b0 + j) * k_count + k);
#pragma unroll
              for (int r = 0; r < R; ++r) acc[r][j] = fmaf(x, wv[r], acc[r][j]);
            }
        }
      }
    }
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int j = 0; j < NB; ++j) {
        float v = acc[r][j];
        for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
        if (lane == 0) red[rg * R + r][ks][j] = v;
      }
    __syncthreads();
    for (int i = threadIdx.x; i < kRows * NB; i += blockDim.x) {
      const int r = i / NB, j = i % NB, o = blockIdx.x * kRows + r, b = b0 + j;
      if (o < outputs && b < n) {
        float v = bias ? bias[o] : 0.0f;
#pragma unroll
        for (int s = 0; s < kStreamSplit; ++s) v += red[r][s][j];
        out[static_cast<long long>(b) * outputs + o] = activate_or_keep(v, act);
      }
    }
    __syncthreads();
  }
}

template <int R, int UNROLL, int NB>
void launch_stream(const FcArgs& a, cudaStream_t s) {
  const bool vec = a.inputs % 4 == 0 && (reinterpret_cast<uintptr_t>(a.in) | reinterpret_cast<uintptr_t>(a.w)) % 16 == 0;
  constexpr int rows = 8 / kStreamSplit * R;
  const unsigned blocks = static_cast<unsigned>((a.outputs + rows - 1) / rows);
  if (vec) fc_stream_kernel<R, UNROLL, NB, true><<<blocks, 256, 0, s>>>(a.in, a.n, a.inputs, a.w, a.bias, a.outputs, a.act, a.out);
  else fc_stream_kernel<R, UNROLL, NB, false><<<blocks, 256, 0, s>>>(a.in, a.n, a.inputs, a.w, a.bias, a.outputs, a.act, a.out);
  CUDA_CHECK_LAUNCH();
}

// ---- v6-v8: the engine
struct FcProblem : gemm::DenseOperands {  // A = X^T (Kpad, Mpad), B = W^T (Kpad, Npad)
  int m, n, groups, k_tiles, splits, act;
  const float* bias;  // (outputs,) or null
  float* out;         // (images, outputs)
  float* part;        // (splits, images, outputs)
  __device__ __forceinline__ void store(int, int split, int r, int c, float v) const {
    if (r >= m || c >= n) return;
    if (splits > 1) {
      part[(static_cast<long long>(split) * m + r) * n + c] = v;
      return;
    }
    if (bias) v += bias[c];
    out[static_cast<long long>(r) * n + c] = activate_or_keep(v, act);
  }
};

__global__ void fc_splitk_reduce(const float* __restrict__ part, int splits, long long mn, int outputs,
                                 const float* __restrict__ bias, int act, float* __restrict__ out) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < mn;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    float v = 0.0f;
    for (int s = 0; s < splits; ++s) v += part[s * mn + i];
    if (bias) v += bias[i % outputs];
    out[i] = activate_or_keep(v, act);
  }
}

template <class F>
void with_config(int version, F&& f) {
  switch (version) {
    case 6: return f.template operator()<gemm::TileL_Fma, gemm::FmaMath<gemm::TileL_Fma>>();
    case 7: return f.template operator()<gemm::TileL_Mma, gemm::MmaTf32Math<gemm::TileL_Mma, 3>>();
    case 8: return f.template operator()<gemm::TileS_Mma, gemm::MmaTf32Math<gemm::TileS_Mma, 3, 2>>();
    case 9: return f.template operator()<gemm::TileM_Mma, gemm::MmaTf32Math<gemm::TileM_Mma, 3, 2>>();
    case 10: return f.template operator()<gemm::TileL_Mma, gemm::MmaTf32Math<gemm::TileL_Mma, 1, 0>>();  // --precision tf32
    case 11: return f.template operator()<gemm::TileS_Mma, gemm::MmaTf32Math<gemm::TileS_Mma, 1, 0>>();
    default: fail("--fc-variant", "version " + std::to_string(version) + " is not a GEMM-engine version");
  }
}

template <class T, class Math>
int splits_for(int n, int inputs, int outputs) {
  const long long blocks = static_cast<long long>((n + T::BM - 1) / T::BM) * ((outputs + T::BN - 1) / T::BN);
  return gemm::choose_splits(blocks, pad_to(inputs, kPadK) / T::BK, gemm::engine_occupancy<T, Math, FcProblem>());
}

size_t xt_floats(int n, int inputs) { return static_cast<size_t>(pad_to(inputs, kPadK)) * pad_to(n, kPadMN); }

template <class T, class Math>
void run_engine(const FcArgs& a, cudaStream_t s) {
  const int k_pad = pad_to(a.inputs, kPadK), m_pad = pad_to(a.n, kPadMN);
  FcProblem pr;
  pr.xt = a.workspace;
  pr.wt = a.prepared;
  pr.m_pad = m_pad;
  pr.n_pad = pad_to(a.outputs, kPadMN);
  pr.m = a.n;
  pr.n = a.outputs;
  pr.groups = 1;
  pr.k_tiles = k_pad / T::BK;
  pr.splits = splits_for<T, Math>(a.n, a.inputs, a.outputs);
  pr.act = a.act;
  pr.bias = a.bias;
  pr.out = a.out;
  pr.part = a.workspace + xt_floats(a.n, a.inputs);
  const size_t need = xt_floats(a.n, a.inputs) + (pr.splits > 1 ? static_cast<size_t>(pr.splits) * a.n * a.outputs : 0);
  if (a.workspace_floats < need) fail("fc v6-v9", "workspace too small (internal: fc_workspace_floats disagrees with the launch)");
  transpose_pad(a.in, 1, a.n, a.inputs, a.workspace, m_pad, k_pad, s);  // (N, K) -> (Kpad, Mpad)
  gemm::launch_engine<T, Math>(pr, a.n, a.outputs, 1, s);
  if (pr.splits > 1) {
    const long long mn = static_cast<long long>(a.n) * a.outputs;
    fc_splitk_reduce<<<static_cast<unsigned>(std::min<long long>((mn + 255) / 256, 4096)), 256, 0, s>>>(pr.part, pr.splits, mn, a.outputs,
                                                                                                       a.bias, a.act, a.out);
    CUDA_CHECK_LAUNCH();
  }
}

}  // namespace

namespace detail {

size_t fc_engine_prepared_floats(int inputs, int outputs) {
  return static_cast<size_t>(pad_to(inputs, kPadK)) * pad_to(outputs, kPadMN);
}

size_t fc_engine_workspace_floats(int version, int n, int inputs, int outputs) {
  size_t floats = xt_floats(n, inputs);
  with_config(version, [&]<class T, class Math>() {
    const int splits = splits_for<T, Math>(n, inputs, outputs);
    if (splits > 1) floats += static_cast<size_t>(splits) * n * outputs;
  });
  return floats;
}

void fc_engine_prepare(const float* w, int inputs, int outputs, float* prepared, cudaStream_t s) {
  transpose_pad(w, 1, outputs, inputs, prepared, pad_to(outputs, kPadMN), pad_to(inputs, kPadK), s);  // (O, I) -> (Ipad, Opad)
}

void fc_stream_forward(const FcArgs& a, cudaStream_t s) {
  if (a.n <= 1) launch_stream<1, 4, 1>(a, s);
  else if (a.n <= 2) launch_stream<1, 4, 2>(a, s);
  else if (a.n <= 4) launch_stream<1, 4, 4>(a, s);
  else if (a.n <= 8) launch_stream<4, 1, 8>(a, s);
  else launch_stream<4, 1, 16>(a, s);  // more than 16 images: passes of 16
}

void fc_engine_forward(int version, const FcArgs& a, cudaStream_t s) {
  if (!a.prepared) fail("fc v" + std::to_string(version), "weights were not prepared for the GEMM engine");
  with_config(version, [&]<class T, class Math>() { run_engine<T, Math>(a, s); });
}

}  // namespace detail

void register_fc_engine(Registry& r) {
  static const ImplHooks stream{.fc_forward = [](int, const FcArgs& a, cudaStream_t s) { detail::fc_stream_forward(a, s); }};
  static const ImplHooks engine{
      .fc_prepare = [](int, const float* w, int in, int out, float* p, cudaStream_t s) { detail::fc_engine_prepare(w, in, out, p, s); },
      .fc_forward = detail::fc_engine_forward};
  Impl st = cuda_impl(LayerKind::fc, 5, "stream", "weight streaming for small batches: each weight read once, 4 16-byte loads in flight "
                                               "per lane, bias + activation fused", &stream);
  // FP32 arithmetic, and tf32's choice too for a few images: memory-bound, as fast as a tensor-core product would be.
  st.precisions = {Precision::fp32, Precision::tf32};
  st.fuses_act = true;
  r.add(std::move(st));
  auto add = [&](int v, const char* name, const char* summary, Precision p) {
    Impl i = cuda_impl(LayerKind::fc, v, name, summary, &engine);
    i.math = name_of(p);
    i.precisions = {p};
    i.fuses_act = true;
    i.prep_layout = 6;  // W^T padded, the same for v6-v11
    i.workspace_floats = [v](const Layer& l, Shape, int n, Precision) {
      return detail::fc_engine_workspace_floats(v, n, static_cast<int>(l.in.size()), std::get<FcParams>(l.op).outputs);
    };
    i.prepared_floats = [](const Layer& l, Shape, Precision) {
      return detail::fc_engine_prepared_floats(static_cast<int>(l.in.size()), std::get<FcParams>(l.op).outputs);
    };
    r.add(std::move(i));
  };
  add(6, "gemm-fma", "GEMM engine, 128x128x32 tiles, FP32 FFMA, split-K, bias + activation fused", Precision::fp32);
  add(7, "gemm-3xtf32", "GEMM engine on the tensor cores, 3xTF32 (FP32-accurate), 128x128x32 tiles", Precision::fp32);
  add(8, "gemm-3xtf32-64", "v7 with 64x64x32 tiles, for mid-sized batches", Precision::fp32);
  add(9, "gemm-3xtf32-128x64", "v7 with 128x64x32 tiles (warp 32x32), 4 stages, two blocks per SM", Precision::fp32);
  add(10, "gemm-tf32", "GEMM engine on the tensor cores, one TF32 product (--precision tf32), 128x128x32 tiles", Precision::tf32);
  add(11, "gemm-tf32-64", "v10 with 64x64x32 tiles, for mid-sized batches", Precision::tf32);
}

}  // namespace bs::cuda
