// Fully connected version v14 (half_ops.hpp): stream-half, the 16-bit layer at small batches, where it is a matrix-
// vector product bound by reading the weights once (AlexNet's fc6 streams 75.5 MB in 16 bits for 37.7 MFLOP at batch
// 1; the GEMM engine v13 reached 2.0 TB/s on it, the H100's DRAM gives 3.35).
//
// Blocks of four warps, as many as the GPU holds at once, each taking output rows in turn (o, o + grid, ...: no second
// wave, no tail of a half-empty one); for each row its 128 threads split the row's K = H * W * Cs weights (prepared once as
// 16-bit rows in the input's NHWC order, zero for a pad channel) into 16-byte chunks of 8 values, read each chunk once
// with a streaming load (no reuse: it must not evict the activations from L1), and multiply it by the same 8 values of
// each of up to NB images (the input, (N, K), stays in L1 and L2); FP32 accumulation, a shuffle and shared-memory
// reduction, bias and activation fused, the pad output (Os > O) written as zero. Batches beyond NB run in passes of NB
// images (each pass reads the weights again: auto takes it for a few images only). The weight rows are padded to a
// multiple of 8 values; where K itself is not one, the input rows are not 16-byte aligned and are read value by value.
#include <algorithm>
#include <climits>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/engine/epilogue.cuh"
#include "kernels/cuda/engine/fc_stream_mma.cuh"
#include "kernels/cuda/engine/gemm_math.cuh"
#include "kernels/cuda/half/activate16.cuh"
#include "kernels/cuda/half/half_ops.hpp"
#include "kernels/cuda/half/half_types.cuh"
#include "kernels/cuda/impl_hooks.hpp"
#include "weights_tools/error.hpp"

namespace bs::cuda::half {
namespace {

constexpr int kThreads = 128;  // four warps per row
constexpr int kMaxImages = 8;  // images per pass

long long k_values(Shape is) { return static_cast<long long>(is.h) * is.w * stored_channels(is.c); }
long long k_padded(Shape is) { return (k_values(is) + 7) / 8 * 8; }

template <bool BF16>
__device__ __forceinline__ void unpack8(uint4 v, float f[8]) {
  const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    f[2 * i] = to_float<BF16>(static_cast<uint16_t>(w[i] & 0xffffu));
    f[2 * i + 1] = to_float<BF16>(static_cast<uint16_t>(w[i] >> 16));
  }
}

// The 8 input values of chunk j of image img: one 16-byte load where the rows are aligned (XVEC), else one at a time,
// zero past K.
template <bool BF16, bool XVEC>
__device__ __forceinline__ void input8(const uint16_t* __restrict__ x, long long k, long long img, int j, float f[8]) {
  if constexpr (XVEC) {
    unpack8<BF16>(__ldg(reinterpret_cast<const uint4*>(x + img * k) + j), f);
  } else {
    const uint16_t* at = x + img * k + 8LL * j;
#pragma unroll
    for (int i = 0; i < 8; ++i) f[i] = 8LL * j + i < k ? to_float<BF16>(__ldg(at + i)) : 0.0f;
  }
}

// w: (O, Kp / 8) chunks; x: (N, K); out (N, Os). A thread walks its chunks of a row (j = t, t + 128, ...): with CH = 1 in
// one loop, unrolled by 4, whose loads the compiler issues one or two ahead of their products; with CH > 1 in batches
// of CH, the batch's CH weight loads (and, for one image on aligned rows, its CH input loads) issued before any of their
// products. Batches pay where one covers a thread's whole row (AlexNet's fc7 and fc8, 4 chunks a thread: 10.5 -> 10.0
// and 5.25 -> 5.0 us at one image on the H200); on fc6's 9 chunks, batches of 4, 8 or 12 were slower than the loop
// (20.3 us against 20.7, 24.3 and 24.1: experiments/batch1-latency.md). Either way the products are taken in the same
// order, chunk by chunk: the same sums to the bit.
template <bool BF16, int NB, bool XVEC, int CH>
__global__ void __launch_bounds__(kThreads) fc_stream_half_kernel(const uint4* __restrict__ w, const uint16_t* __restrict__ x, long long k,
                                                                   int k8, int n, int outputs, int os, const float* __restrict__ bias,
                                                                   int act, uint16_t* __restrict__ out, int* ovf) {
  constexpr bool kPreloadX = XVEC && NB == 1 && CH > 1;  // the one image's chunks loaded with the weights
  __shared__ float partial[kThreads / 32][NB];
  const int t = threadIdx.x, lane = t % 32, warp = t / 32;
  const uint4 zero = make_uint4(0u, 0u, 0u, 0u);
  for (int o = blockIdx.x; o < outputs; o += gridDim.x) {
    const uint4* row = w + static_cast<long long>(o) * k8;
    for (int n0 = 0; n0 < n; n0 += NB) {
      const int nb = min(NB, n - n0);
      float acc[NB];
#pragma unroll
      for (int b = 0; b < NB; ++b) acc[b] = 0.0f;
      if constexpr (CH == 1) {
#pragma unroll 4
        for (int j = t; j < k8; j += kThreads) {
          float wf[8];
          unpack8<BF16>(__ldcs(row + j), wf);
#pragma unroll
          for (int b = 0; b < NB; ++b) {
            if (b >= nb) break;
            float xf[8];
            input8<BF16, XVEC>(x, k, n0 + b, j, xf);
#pragma unroll
            for (int i = 0; i < 8; ++i) acc[b] = fmaf(wf[i], xf[i], acc[b]);
          }
        }
      } else {
        for (int j0 = t; j0 < k8; j0 += kThreads * CH) {
          uint4 wr[CH], xr[kPreloadX ? CH : 1];
#pragma unroll
          for (int c = 0; c < CH; ++c) wr[c] = j0 + c * kThreads < k8 ? __ldcs(row + j0 + c * kThreads) : zero;
          if constexpr (kPreloadX) {
            const uint4* xrow = reinterpret_cast<const uint4*>(x + n0 * k);
#pragma unroll
            for (int c = 0; c < CH; ++c) xr[c] = j0 + c * kThreads < k8 ? __ldg(xrow + j0 + c * kThreads) : zero;
          }
#pragma unroll
          for (int c = 0; c < CH; ++c) {
            const int j = j0 + c * kThreads;
            if (j >= k8) break;
            float wf[8];
            unpack8<BF16>(wr[c], wf);
#pragma unroll
            for (int b = 0; b < NB; ++b) {
              if (b >= nb) break;
              float xf[8];
              if constexpr (kPreloadX) unpack8<BF16>(xr[c], xf);
              else input8<BF16, XVEC>(x, k, n0 + b, j, xf);
#pragma unroll
              for (int i = 0; i < 8; ++i) acc[b] = fmaf(wf[i], xf[i], acc[b]);
            }
          }
        }
      }
#pragma unroll
      for (int b = 0; b < NB; ++b) {
        float v = acc[b];
#pragma unroll
        for (int d = 16; d > 0; d /= 2) v += __shfl_xor_sync(0xffffffffu, v, d);
        if (lane == 0) partial[warp][b] = v;
      }
      __syncthreads();
      if (t < nb) {
        float v = 0.0f;
#pragma unroll
        for (int q = 0; q < kThreads / 32; ++q) v += partial[q][t];
        if (bias) v += bias[o];
        uint16_t* dst = out + static_cast<long long>(n0 + t) * os;
        dst[o] = store_value<BF16>(activate16_or_keep(v, act), ovf);
        if (o == outputs - 1 && os > outputs) dst[outputs] = 0;  // the pad output
      }
      __syncthreads();  // partial is reused by the next pass
    }
  }
}

// ---- fc v17, stream-mma-half: the same prepared rows and the same single pass over them, the products on the tensor
// cores (mma.sync m16n8k16), for up to 16 images a pass, where v14's FMAs would need 16 times the arithmetic per weight.
// A block of kMmaWarps warps takes 8 x NT outputs; its warps split K in 64-value chunks (a 128-byte line of each row),
// taken in turn. In a chunk, lane (g = lane / 4, t = lane % 4) loads, in two loads, the 32 bytes of k = 64c + 16t ..
// 64c + 16t + 15 of output row g of each of its NT n-tiles (streaming loads) and of images g and g + 8 (read-only path):
// so each load of a warp touches every sector of its rows' lines (with 32-value chunks and lanes 16 bytes apart, as first
// built, AlexNet's fc6 at 16 images took 25.8 us, now 23.4). Each 16 bytes feed two mma steps: the first takes their
// k 0 .. 3, the second 4 .. 7. The mma's k order is so permuted against memory, but it is the same permutation for the
// images (A) and the weights (B), so each product meets its pair and the sum is the layer's.
// Images past n are zero; where K is not a multiple of 8 the image rows are not 16-byte aligned and are read value by value. The warps' FP32 partial sums are added in shared memory in warp order (the same sum on every
// run), then bias, activation and the 16-bit store, the pad output written as zero.
constexpr int kMmaWarps = 8;
constexpr int kMmaImages = 16;  // images per pass: the mma's m

// The 8 values of image img from k = 8q: one 16-byte load where the rows are aligned (XVEC), else one at a time, zero
// past K.
template <bool XVEC>
__device__ __forceinline__ uint4 input_chunk(const uint16_t* __restrict__ x, long long k, long long img, int q) {
  if constexpr (XVEC) {
    return __ldg(reinterpret_cast<const uint4*>(x + img * k) + q);
  } else {
    uint32_t v[4];
    const uint16_t* at = x + img * k + 8LL * q;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const uint32_t lo = 8LL * q + 2 * i < k ? __ldg(at + 2 * i) : 0u, hi = 8LL * q + 2 * i + 1 < k ? __ldg(at + 2 * i + 1) : 0u;
      v[i] = lo | hi << 16;
    }
    return make_uint4(v[0], v[1], v[2], v[3]);
  }
}

// SPLIT: K split over the `splits` blocks of a cluster (fc_stream_mma.cuh), rank blockIdx.z.
template <bool BF16, int NT, bool XVEC, bool SPLIT>
__global__ void __launch_bounds__(kMmaWarps * 32) fc_stream_mma_kernel(const uint4* __restrict__ w, const uint16_t* __restrict__ x,
                                                                       long long k, int k8, int n, int outputs, int os, const float* __restrict__ bias,
                                                                       int act, uint16_t* __restrict__ out, int* ovf, int splits) {
  __shared__ float partial[kMmaWarps][NT * 8][kMmaImages];
  __shared__ float block_sum[SPLIT ? NT * 8 * kMmaImages : 1];  // the cluster's sum
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4;
  const int o0 = blockIdx.x * NT * 8;
  // the warp's place among the cluster's warps, and their count
  const int cwarp = SPLIT ? static_cast<int>(blockIdx.z) * kMmaWarps + warp : warp, cwarps = SPLIT ? splits * kMmaWarps : kMmaWarps;
  // 64-value chunks (8 uint4, one 128-byte line of each row; k8 uint4 per row, the last chunk may be short)
  const int chunks = (k8 + 7) / 8;
  const uint4* rows[NT];
#pragma unroll
  for (int j = 0; j < NT; ++j) rows[j] = w + static_cast<long long>(min(o0 + 8 * j + g, outputs - 1)) * k8;
  for (int n0 = 0; n0 < n; n0 += kMmaImages) {
    const int nb = min(kMmaImages, n - n0);
    const bool has_a = g < nb, has_b = g + 8 < nb;
    float acc[NT][4];
#pragma unroll
    for (int j = 0; j < NT; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;
    // Two stages of a chunk each, in registers: while one stage's products run, the other's loads are in flight (a
    // single stage left each warp waiting out its loads' latency: fc6 at 2.1 TB/s, call 5). Lane (g, t) takes the
    // uint4 2t and 2t + 1 of the chunk's line (its U = 2 loads): the first brings all four sectors of each line the
    // warp reads, where 4 lanes 16 bytes apart brought two (ncu: 2.3 times v14's L2 requests for the same bytes).
    constexpr int U = 2;
    struct Stage {
      uint4 w[U][NT], a[U], b[U];
    };
    auto load = [&](Stage& st, int c0) {
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int q = 8 * c0 + 2 * t + u;  // this lane's uint4 of the chunk
        const bool in = c0 < chunks && q < k8;
        const uint4 zero = make_uint4(0u, 0u, 0u, 0u);
#pragma unroll
        for (int j = 0; j < NT; ++j) st.w[u][j] = in ? __ldcs(rows[j] + q) : zero;
        st.a[u] = in && has_a ? input_chunk<XVEC>(x, k, n0 + g, q) : zero;
        st.b[u] = in && has_b ? input_chunk<XVEC>(x, k, n0 + g + 8, q) : zero;
      }
    };
    auto multiply = [&](const Stage& st) {
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const uint32_t a1[4] = {st.a[u].x, st.b[u].x, st.a[u].y, st.b[u].y}, a2[4] = {st.a[u].z, st.b[u].z, st.a[u].w, st.b[u].w};
#pragma unroll
        for (int j = 0; j < NT; ++j) {
          gemm::mma_m16n8k16(acc[j], a1, st.w[u][j].x, st.w[u][j].y, BF16);
          gemm::mma_m16n8k16(acc[j], a2, st.w[u][j].z, st.w[u][j].w, BF16);
        }
      }
    };
    // chunks past the end load as zeros; a split layer of up to 4 chunks a warp loads them all first (fc8 at 2-16 images)
    if (!(SPLIT && stream_mma::all_chunks_first<4, Stage>(cwarp, chunks, cwarps, load, multiply)))
      stream_mma::two_stages<Stage>(cwarp, chunks, cwarps, load, multiply);
    // acc[j]: (image g, outputs 2t, 2t + 1) and (image g + 8, the same outputs) of n-tile j.
    stream_mma::store_tiles<NT>(partial[warp], acc, g, t);
    __syncthreads();
    const auto store = [&](int img, int o, float v) {
      uint16_t* dst = out + static_cast<long long>(n0 + img) * os;
      dst[o] = store_value<BF16>(activate16_or_keep(v, act), ovf);
      if (o == outputs - 1 && os > outputs) dst[outputs] = 0;  // the pad output
    };
    if constexpr (SPLIT) stream_mma::sum_cluster<NT, kMmaImages, kMmaWarps>(partial, block_sum, splits, o0, nb, outputs, bias, store);
    else stream_mma::sum_warps<NT, kMmaImages, kMmaWarps>(partial, o0, nb, outputs, bias, store);
    __syncthreads();  // partial is reused by the next pass
  }
}

// W (O, C*H*W) FP32 in the model's NCHW flattening -> (O, Kp) 16-bit in the input's NHWC one, K = H * W * Cs: value
// (o, k) is input (y, x, c) = (k / (W * Cs), k / Cs % W, k % Cs), zero for the pad channel and for K <= k < Kp.
template <bool BF16>
__global__ void prepare_rows(const float* __restrict__ w, Shape is, int cs, long long kp, int outputs, uint16_t* __restrict__ dst) {
  const long long k_count = static_cast<long long>(is.h) * is.w * cs, total = kp * outputs;
  const long long k_model = static_cast<long long>(is.c) * is.h * is.w;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long o = i / kp, k = i - o * kp, at = k < k_count ? nhwc_to_nchw(k, is, cs) : -1;
    dst[i] = from_float<BF16>(at >= 0 ? w[o * k_model + at] : 0.0f);
  }
}

template <bool BF16>
void launch(const HalfFcArgs& a, cudaStream_t s) {
  const long long k = k_values(a.is);
  const int k8 = static_cast<int>(k_padded(a.is) / 8), os = stored_channels(a.outputs);
  const auto* w = reinterpret_cast<const uint4*>(a.prepared);
  const int nb = std::min(a.n, kMaxImages);
  auto go = [&](auto images, auto chunks) {
    constexpr int NB = decltype(images)::value, CH = decltype(chunks)::value;
    auto run = [&](auto kernel) {
      static const int resident = resident_blocks(kernel, kThreads, 0);  // of this instantiation, the GPU at once
      kernel<<<std::min(a.outputs, resident), kThreads, 0, s>>>(w, a.in, k, k8, a.n, a.outputs, os, a.bias, a.act, a.out, a.ovf);
    };
    if (k % 8 == 0) run(fc_stream_half_kernel<BF16, NB, true, CH>);
    else run(fc_stream_half_kernel<BF16, NB, false, CH>);
  };
  using C1 = std::integral_constant<int, 1>;
  // One image: a batch of 4 where that covers a thread's chunks of a row (K up to 4,096 values), else the loop.
  if (nb <= 1 && k8 <= 4 * kThreads) go(C1{}, std::integral_constant<int, 4>{});
  else if (nb <= 1) go(C1{}, C1{});
  else if (nb <= 2) go(std::integral_constant<int, 2>{}, C1{});
  else if (nb <= 4) go(std::integral_constant<int, 4>{}, C1{});
  else go(std::integral_constant<int, kMaxImages>{}, C1{});
  CUDA_CHECK_LAUNCH();
}

// n-tiles of 8 outputs a block: the most that still give every multiprocessor a block (fewer blocks, each reading
// the images once for more outputs), down to 1.
template <bool BF16>
void launch_mma(const HalfFcArgs& a, cudaStream_t s) {
  const long long k = k_values(a.is);
  const int k8 = static_cast<int>(k_padded(a.is) / 8), os = stored_channels(a.outputs);
  const auto* w = reinterpret_cast<const uint4*>(a.prepared);
  const int nt = stream_mma::tiles_for(a.outputs, sm_count());
  const int rounds = (k8 + 7) / 8 / kMmaWarps;  // register stages a warp, in one block
  auto go = [&](auto tiles) {
    constexpr int NT = decltype(tiles)::value;
    const int blocks = (a.outputs + 8 * NT - 1) / (8 * NT);
    auto run = [&](auto xvec) {
      constexpr bool XV = decltype(xvec)::value;
      if constexpr (NT == 1)  // only 8-output tiles split (fc_stream_mma.cuh)
        if (stream_mma::launch_split<&fc_stream_mma_kernel<BF16, 1, XV, true>>(blocks, sm_count(), kMmaWarps * 32, rounds, s, w, a.in, k, k8,
                                                                                a.n, a.outputs, os, a.bias, a.act, a.out, a.ovf))
          return;
      fc_stream_mma_kernel<BF16, NT, XV, false><<<blocks, kMmaWarps * 32, 0, s>>>(w, a.in, k, k8, a.n, a.outputs, os, a.bias, a.act, a.out, a.ovf, 1);
    };
    if (k % 8 == 0) run(std::true_type{});
    else run(std::false_type{});
  };
  if (nt == 4) go(std::integral_constant<int, 4>{});
  else if (nt == 2) go(std::integral_constant<int, 2>{});
  else go(std::integral_constant<int, 1>{});
  CUDA_CHECK_LAUNCH();
}

Support stream_mma_supports(const Layer& l) {
  if (l.in.size() >= (1LL << 33)) return {false, "v17: the input exceeds 2^33 values per image"};  // K / 8 chunks fit an int
  return {};
}

void stream_mma_forward(int, const HalfFcArgs& a, cudaStream_t s) {
  if (!a.prepared) fail("fc v17", "weights were not prepared");
  if (a.bf16) launch_mma<true>(a, s);
  else launch_mma<false>(a, s);
}

Support stream_supports(const Layer& l) {
  if (l.in.size() >= (1LL << 33)) return {false, "v14: the input exceeds 2^33 values per image"};  // K / 8 chunks fit an int
  if (std::get<FcParams>(l.op).outputs >= INT_MAX / 2) return {false, "v14: too many outputs"};
  return {};
}

void stream_prepare(const float* w, Shape is, int outputs, bool bf16, float* prepared, cudaStream_t s) {
  const long long kp = k_padded(is), total = kp * outputs;
  const unsigned blocks = static_cast<unsigned>(std::min<long long>((total + 255) / 256, 8192));
  auto* dst = reinterpret_cast<uint16_t*>(prepared);
  if (bf16) prepare_rows<true><<<blocks, 256, 0, s>>>(w, is, stored_channels(is.c), kp, outputs, dst);
  else prepare_rows<false><<<blocks, 256, 0, s>>>(w, is, stored_channels(is.c), kp, outputs, dst);
  CUDA_CHECK_LAUNCH();
}

void stream_forward(int, const HalfFcArgs& a, cudaStream_t s) {
  if (!a.prepared) fail("fc v14", "weights were not prepared");
  if (a.bf16) launch<true>(a, s);
  else launch<false>(a, s);
}

}  // namespace
}  // namespace bs::cuda::half

namespace bs::cuda {

namespace {
// v14 and v17: the same prepared rows (v14's layout), made by the same function.
Impl stream_rows_impl(int number, const char* name, const char* description, const ImplHooks* hooks, const char* math,
                      Support (*supports)(const Layer&)) {
  Impl i = cuda_impl(LayerKind::fc, number, name, description, hooks);
  i.math = math;
  i.precisions = {Precision::fp16, Precision::bf16};
  i.fuses_act = true;
  i.prep_layout = 14;  // (O, K) 16-bit rows in the NHWC flattening
  i.supports = [supports](const Layer& l, const Epilogue&) { return supports(l); };
  i.prepared_floats = [](const Layer& l, Shape stored, Precision) {
    return static_cast<size_t>(half::k_padded(stored) * std::get<FcParams>(l.op).outputs / 2);
  };
  return i;
}
}  // namespace

void register_fc_stream_half(Registry& r) {
  static const ImplHooks hooks{.half_fc_prepare = half::stream_prepare, .half_fc_forward = half::stream_forward};
  r.add(stream_rows_impl(14, "stream-half",
                         "16-bit weights streamed once per pass of up to 8 images (--precision fp16 or bf16): a block of four "
                         "warps per output, 16-byte streaming loads, FP32 accumulation, bias + activation fused; for small batches",
                         &hooks, "fp16/bf16", half::stream_supports));
}

void register_fc_stream_mma_half(Registry& r) {
  static const ImplHooks hooks{.half_fc_prepare = half::stream_prepare, .half_fc_forward = half::stream_mma_forward};
  r.add(stream_rows_impl(17, "stream-mma-half",
                         "v14's 16-bit weight rows streamed once per pass of up to 16 images, the products on the tensor cores "
                         "(mma.sync m16n8k16): blocks of 8 warps splitting K over 8 to 32 outputs (and over the blocks of a cluster where "
                         "the outputs leave SMs without a block), two register stages of loads (a split warp's chunks all at once where they are "
                         "at most 4), FP32 accumulation, bias + activation "
                         "fused; for 2-16 images",
                         &hooks, "fp16/bf16 tensor cores", half::stream_mma_supports));
}

}  // namespace bs::cuda
