// Convolution version v57: ECE 408 conv2's shape at FP32 accuracy on the FP16 tensor cores (3xFP16).
//
// Why: v11 runs conv2 (6x22x22 -> 16x18x18, 5x5) in 0.327 ms at 10,000 images on the H100 with 3xTF32 mma.sync m16n8k8:
// 57 MMAs per 8 pixels, each input value split at each of its 25 uses. v57 is v22's conv2 layout
// (kernels/cuda/half/conv_spec_half.cu) with every operand in two FP16 parts, as conv v51-v53 split them: x = (hi + lo) / s,
// hi = fp16(s x), lo = fp16(s x - hi), s a power of two per image that puts its largest |x| under 2^14, the weights the
// same with a power of two per filter; three products hi*hi + hi*lo + lo*hi in FP32 (the dropped lo*lo is about 2^-22 of
// a product). 60 m16n8k16 MMAs per 16 pixels, 1.9x fewer tensor-core instructions than v11, and no split in the loop:
// each set of 4 images is split once, when staged, into hi and lo NHWC planes that the loop reads at compile-time
// offsets. conv1's shape runs v10's kernel, as in v11.
// Schedule: one block per SM, 222 KB of shared memory, 12 warps. 3 producer warps copy set k + 2 (cp.async) into one of
// two raw buffers while they find set k's maxima and split it into one of two plane buffers; 9 consumer warps run the
// MMA loop (the weight fragments in registers) and the stores on the other. Named barriers hand the planes over.
// Measured (H100, ECE 408 at 10,000 images): the first schedule (two blocks of 9 warps per SM, every warp through copy,
// max, split, MMA and stores with block barriers between; commit b188c78) 0.243 ms against v11's 0.327, the network's
// error against cpu-ref 2.4e-7 against v11's 2.7e-7; this one 0.222 ms against the first's 0.246 in the same call (the
// same bits), but 0.033 against 0.030 at 1024 images, where a block has 2 sets to overlap. Slower than v11 below about
// 512 images (a block per 4-image set: few blocks). The prediction was 0.10-0.14 ms; experiments/ece408-gpu.md, "conv2
// on 3xFP16: the outcome", says where the rest goes.
// Developed as a probe (its last state: commit 1acf222); experiments/probes/conv_v57_model.py checks the index arithmetic.
#include <cuda_fp16.h>
#include <cuda_pipeline.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/engine/epilogue.cuh"
#include "kernels/cuda/impl_hooks.hpp"
#include "kernels/cuda/ops/conv.hpp"

namespace bs::cuda {
namespace {

constexpr int C = 6, CW = C / 2, H = 22, W = 22, K = 5, M = 16, OH = H - K + 1, OW = W - K + 1, P = OH * OW;
constexpr int KD = C * K * K;                // 150
constexpr int KS = 2 * K;                    // 10 k-steps of 16: (ky, half of the ky's 16 pairs)
// A plane row holds its W * CW = 66 pair words in a pitch of RP = 88: a tile's 8 pixels then load from 32 different
// banks where they wrap an output row or an image. The pad words stay zero. Measured (H200, ncu): bank conflicts of
// the shared loads 5.6 M -> 0.34 M, wavefronts 23.8 M -> 18.6 M, conv2 0.2167 -> 0.2140 ms (-1.3 %): the loop is
// bound by latency, not by the banks. (The same pitch in v22's conv2 removed its conflicts and gained nothing.)
constexpr int RP = 88;
__host__ __device__ constexpr int step_words(int s) { return (s / 2) * RP + 8 * (s % 2); }
constexpr int IP = 4;                        // images per set
constexpr int kTiles = IP * P / 16, kWarps = 9, NT = kTiles / kWarps;  // kWarps: the consumer warps
constexpr int kImgWords = H * RP;            // pair words of one image's plane (1936, of which 1452 hold pairs)
constexpr int kPlaneWords = IP * kImgWords;
constexpr int kRawFloats = IP * C * H * W;   // 11616
constexpr int kFragWords = KS * 2 * 2 * 32 * 2;  // [KS][hi, lo][2 filter halves][32 lanes][b0, b1]
constexpr int kCons = kWarps, kProd = 3, kThreadsWS = 32 * (kCons + kProd), kProdThreads = 32 * kProd;
// frag | hi, lo planes x 2 | raw x 2 | img_max[2][IP] | inv_sx[2][IP] | wscale[M]: 222 KB, one block per SM
constexpr size_t kSmemBytes = sizeof(uint32_t) * (kFragWords + 4 * kPlaneWords + 2 * kRawFloats + 4 * IP + M);
static_assert(IP * P % 16 == 0 && kTiles % kWarps == 0 && NT % 3 == 0 && kRawFloats % 4 == 0, "tiling must divide the set");

__device__ __forceinline__ void mma16(float (&d)[4], const uint32_t (&a)[4], uint2 b) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b.x), "r"(b.y));
}

__device__ __forceinline__ uint32_t pack(float lo_half, float hi_half) {
  const __half2 v = __floats2half2_rn(lo_half, hi_half);
  return *reinterpret_cast<const uint32_t*>(&v);
}

// hi and lo words of the pair (a, b), already scaled.
__device__ __forceinline__ void split2(float a, float b, uint32_t& hi, uint32_t& lo) {
  const __half2 h = __floats2half2_rn(a, b);
  const float2 hf = __half22float2(h);
  hi = *reinterpret_cast<const uint32_t*>(&h);
  lo = pack(a - hf.x, b - hf.y);
}

// The power of two s with max * s < 2^14: max = m 2^e with m in [0.5, 1) for a normal max (exponent field E, e = E - 126),
// s = 2^(14 - e), at most 2^127 (a subnormal max). 1 when max is 0, infinite or NaN.
__device__ __forceinline__ float scale_for(float max) {
  const int E = static_cast<int>(__float_as_uint(max) >> 23) & 0xff;
  if (!(max > 0.0f) || E == 0xff) return 1.0f;
  const int k = min(14 - (E - 126), 127);
  return __uint_as_float(static_cast<uint32_t>(127 + k) << 23);
}

// Named barriers: 1 + b FULL[b] (the set in plane buffer b is split: producers arrive, consumers wait), 3 + b
// EMPTY[b] (the consumers left buffer b: they arrive, producers wait), 5 the producers alone. bar.arrive orders the
// shared-memory writes before it for the threads that wait.
__device__ __forceinline__ void bar_sync(int id, int count) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}
__device__ __forceinline__ void bar_arrive(int id, int count) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(count) : "memory");
}

template <int ACT>  // 1 tanh, 0 ReLU, -1 none
__global__ void __launch_bounds__(kThreadsWS, 1)
    conv2_3xf16_kernel(const float* __restrict__ in, const float* __restrict__ w, const float* __restrict__ bias,
                       float* __restrict__ out, int n, int images_per_block) {
  extern __shared__ __align__(16) uint32_t smem[];
  uint32_t* frag = smem;                    // [KS][hi, lo][2][32][2]
  uint32_t* planes = frag + kFragWords;     // [2 buffers][hi, lo][kPlaneWords]
  float* raws = reinterpret_cast<float*>(planes + 4 * kPlaneWords);  // [2][IP][C][H][W]
  unsigned* img_max = reinterpret_cast<unsigned*>(raws + 2 * kRawFloats);  // [2][IP]
  float* inv_sx_s = reinterpret_cast<float*>(img_max + 2 * IP);           // [2][IP]
  float* wscale = inv_sx_s + 2 * IP;                                       // [M]
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  constexpr int kAll = kCons + kProd;

  for (int f = warp; f < M; f += kAll) {
    float m = 0.0f;
    for (int i = lane; i < KD; i += 32) m = fmaxf(m, fabsf(w[f * KD + i]));
    for (int o = 16; o; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    if (lane == 0) wscale[f] = scale_for(m);
  }
  for (int i = threadIdx.x; i < 4 * kPlaneWords; i += kThreadsWS) planes[i] = 0u;  // the rows' pads stay zero
  __syncthreads();
  for (int i = threadIdx.x; i < kFragWords / 2; i += kThreadsWS) {
    const int j = i % 2, l = (i / 2) % 32, half = (i / 64) % 2, s = i / 128;
    const int q = 8 * (s % 2) + l % 4 + 4 * j, f = 8 * half + l / 4;
    float v0 = 0.0f, v1 = 0.0f;
    if (q < K * CW) {
      const int c = 2 * (q % CW), ky = s / 2, kx = q / CW;
      v0 = w[((f * C + c) * K + ky) * K + kx] * wscale[f];
      v1 = w[((f * C + c + 1) * K + ky) * K + kx] * wscale[f];
    }
    uint32_t hi, lo;
    split2(v0, v1, hi, lo);
    frag[((s * 2 + 0) * 2 + half) * 64 + l * 2 + j] = hi;
    frag[((s * 2 + 1) * 2 + half) * 64 + l * 2 + j] = lo;
  }
  __syncthreads();
  if (threadIdx.x < M) wscale[threadIdx.x] = 1.0f / wscale[threadIdx.x];
  __syncthreads();

  const int first = blockIdx.x * images_per_block, last = min(n, first + images_per_block);
  const int nsets = last > first ? (last - first + IP - 1) / IP : 0;
  if (warp >= kCons) {
    // Producers: copy two sets ahead; per set: wait for its copy, its maxima, wait for the plane buffer, split, refill.
    const int pt = threadIdx.x - 32 * kCons;
    auto fetch = [&](int k) {
      const int b0 = first + IP * k, count = max(0, min(IP, last - b0));
      const float* src = in + static_cast<long long>(b0) * C * H * W;
      float* dst = raws + (k & 1) * kRawFloats;
      for (int i = pt; i < count * C * H * W / 4; i += kProdThreads) __pipeline_memcpy_async(dst + 4 * i, src + 4 * i, 16);
      __pipeline_commit();  // a group per set, empty past the end: the wait below counts groups
    };
    fetch(0);
    fetch(1);
    for (int k = 0; k < nsets; ++k) {
      const int b = k & 1, count = min(IP, last - (first + IP * k));
      const float* raw = raws + b * kRawFloats;
      unsigned* mx = img_max + b * IP;
      __pipeline_wait_prior(1);  // set k's group (set k + 1's may still be in flight)
      if (pt < IP) mx[pt] = 0u;
      bar_sync(5, kProdThreads);
      for (int im = 0; im < count; ++im) {
        float m = 0.0f;
        for (int i = pt; i < C * H * W / 4; i += kProdThreads) {
          const float4 v = reinterpret_cast<const float4*>(raw + im * C * H * W)[i];
          m = fmaxf(m, fmaxf(fmaxf(fabsf(v.x), fabsf(v.y)), fmaxf(fabsf(v.z), fabsf(v.w))));
        }
        for (int o = 16; o; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
        if (lane == 0 && m > 0.0f) atomicMax(mx + im, __float_as_uint(m));
      }
      bar_sync(5, kProdThreads);
      float sx[IP];
#pragma unroll
      for (int kk = 0; kk < IP; ++kk) sx[kk] = scale_for(__uint_as_float(mx[kk]));
      if (k >= 2) bar_sync(3 + b, kThreadsWS);  // EMPTY[b]: the consumers left set k - 2's planes and scales
      if (pt < IP) inv_sx_s[b * IP + pt] = 1.0f / scale_for(__uint_as_float(mx[pt]));
      uint32_t* hip = planes + 2 * b * kPlaneWords;
      uint32_t* lop = hip + kPlaneWords;
      for (int i = pt; i < IP * H * W; i += kProdThreads) {
        const int img = i / (H * W), pix = i - img * (H * W);
        float sc = sx[0];
#pragma unroll
        for (int kk = 1; kk < IP; ++kk)
          if (img == kk) sc = sx[kk];
        const float* r = raw + img * C * H * W + pix;
        const int o = img * kImgWords + (pix / W) * RP + (pix % W) * CW;
#pragma unroll
        for (int cp = 0; cp < CW; ++cp) {
          uint32_t hi = 0u, lo = 0u;
          if (img < count) split2(r[2 * cp * H * W] * sc, r[(2 * cp + 1) * H * W] * sc, hi, lo);
          hip[o + cp] = hi;
          lop[o + cp] = lo;
        }
      }
      bar_sync(5, kProdThreads);  // every producer has read raw[b]: refill it
      fetch(k + 2);
      bar_arrive(1 + b, kThreadsWS);  // FULL[b]
    }
    return;
  }

  // Consumers: v57's MMA loop and epilogue on plane buffer k % 2.
  float bv[2][2], wi[2][2];
#pragma unroll
  for (int h = 0; h < 2; ++h)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      bv[h][e] = bias ? bias[8 * h + 2 * t + e] : 0.0f;
      wi[h][e] = wscale[8 * h + 2 * t + e];
    }
  const uint2* wf = reinterpret_cast<const uint2*>(frag) + lane;
  // The weight fragments in registers (80 a thread: a block of 12 warps per SM affords 168), not read at every step.
  uint2 wr[KS][4];
#pragma unroll
  for (int s = 0; s < KS; ++s)
#pragma unroll
    for (int x = 0; x < 4; ++x) wr[s][x] = wf[((s * 2 + (x >> 1)) * 2 + (x & 1)) * 32];
  for (int k = 0; k < nsets; ++k) {
    const int b = k & 1, b0 = first + IP * k;
    bar_sync(1 + b, kThreadsWS);  // FULL[b]
    const uint32_t* hip = planes + 2 * b * kPlaneWords;
    const uint32_t* lop = hip + kPlaneWords;
    float inv_sx[IP];
#pragma unroll
    for (int kk = 0; kk < IP; ++kk) inv_sx[kk] = inv_sx_s[b * IP + kk];
    const long long px0 = static_cast<long long>(b0) * P, px_end = static_cast<long long>(last) * P;
#pragma unroll 1
    for (int u0 = 0; u0 < NT; u0 += 3) {
      int rp[3][2];
#pragma unroll
      for (int j = 0; j < 3; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int q = 16 * (warp * NT + u0 + j) + g + 8 * h, slot = q / P, p = q % P;
          rp[j][h] = slot * kImgWords + (p / OW) * RP + (p % OW) * CW + t;
        }
      float acc[3][2][4];
#pragma unroll
      for (int j = 0; j < 3; ++j)
#pragma unroll
        for (int f = 0; f < 2; ++f) acc[j][f][0] = acc[j][f][1] = acc[j][f][2] = acc[j][f][3] = 0.0f;
#pragma unroll
      for (int s = 0; s < KS; ++s) {
        const uint2 wh0 = wr[s][0], wh1 = wr[s][1], wl0 = wr[s][2], wl1 = wr[s][3];
#pragma unroll
        for (int j = 0; j < 3; ++j) {
          const int sw = step_words(s);
          const uint32_t ah[4] = {hip[rp[j][0] + sw], hip[rp[j][1] + sw], hip[rp[j][0] + sw + 4], hip[rp[j][1] + sw + 4]};
          const uint32_t al[4] = {lop[rp[j][0] + sw], lop[rp[j][1] + sw], lop[rp[j][0] + sw + 4], lop[rp[j][1] + sw + 4]};
          mma16(acc[j][0], al, wh0);
          mma16(acc[j][1], al, wh1);
          mma16(acc[j][0], ah, wl0);
          mma16(acc[j][1], ah, wl1);
          mma16(acc[j][0], ah, wh0);
          mma16(acc[j][1], ah, wh1);
        }
      }
#pragma unroll
      for (int j = 0; j < 3; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int q = 16 * (warp * NT + u0 + j) + g + 8 * h, slot = q / P;
          const long long pix = px0 + q;
          if (pix >= px_end) continue;
          float is = inv_sx[0];
#pragma unroll
          for (int kk = 1; kk < IP; ++kk)
            if (slot == kk) is = inv_sx[kk];
          float* o = out + (static_cast<long long>(b0) + slot) * M * P + (q - slot * P);
#pragma unroll
          for (int f = 0; f < 2; ++f)
#pragma unroll
            for (int e = 0; e < 2; ++e)
              o[(8 * f + 2 * t + e) * P] = activate_c<ACT>(acc[j][f][2 * h + e] * is * wi[f][e] + bv[f][e]);
        }
    }
    if (k + 2 < nsets) bar_arrive(3 + b, kThreadsWS);  // EMPTY[b], only where a producer will wait for it
  }
}

void launch(const ConvArgs& a, cudaStream_t s) {
  dispatch_act(a.epi.has_act, a.epi.act, [&](auto code) {
    constexpr int A = decltype(code)::value;
    static const int resident = resident_blocks(conv2_3xf16_kernel<A>, kThreadsWS, kSmemBytes);
    const PersistentGrid g = persistent_grid(a.n, IP, resident);
    conv2_3xf16_kernel<A><<<g.blocks, kThreadsWS, kSmemBytes, s>>>(a.in, a.w, a.bias, a.out, a.n, g.images_per_block);
  });
  CUDA_CHECK_LAUNCH();
}

// The device holds a block of 222 KB (compute capability 9.0 allows 227 KB; 8.0 163 KB) and the build has an image for
// it. Without a GPU, false: the menus then say why, and auto keeps v11.
bool device_fits() {
  static const bool ok = [] {
    int dev = 0, optin = 0;
    cudaFuncAttributes attr{};
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess ||
        cudaFuncGetAttributes(&attr, conv2_3xf16_kernel<1>) != cudaSuccess) {
      (void)cudaGetLastError();
      return false;
    }
    return static_cast<size_t>(optin) >= kSmemBytes;
  }();
  return ok;
}

}  // namespace

namespace detail {
void tc3_conv2_forward(const ConvArgs& a, cudaStream_t s) { launch(a, s); }
bool tc3_conv2_fits() { return device_fits(); }
}  // namespace detail

std::string tiled_bank(const Layer& l);  // conv_tiled_spec.cu: conv1's shape runs v10's kernel

void register_conv_tc_f16(Registry& r) {
  static const ImplHooks hooks{.conv_forward = [](int, const ConvArgs& a, cudaStream_t s) {
    if (detail::tc_is_conv2(a.is, *a.p)) launch(a, s);
    else detail::tiled_forward(10, a, s);
  }};
  Impl i = cuda_impl(LayerKind::conv, 57, "tc-3xf16",
                     "v10, with conv2's shape on the FP16 tensor cores: 3xFP16 implicit GEMM, a power of two per image and "
                     "per filter (FP32-accurate)", &hooks);
  i.shapes = "ECE 408 conv1, conv2";
  i.fuses_act = i.fuses_pool2x2 = true;
  i.supports = [](const Layer& l, const Epilogue& e) -> Support {  // v11's shapes and reasons, and room for the block
    Support s = detail::tc_supports(57, l, e);
    if (s.ok && detail::tc_is_conv2(l.in, std::get<ConvParams>(l.op)) && !device_fits())
      return {false, "v57's conv2 kernel needs a GPU that gives a block 222 KB of shared memory (compute capability 9.0) "
                     "and a build for it"};
    return s;
  };
  i.constant_bank = tiled_bank;
  r.add(std::move(i));
}

}  // namespace bs::cuda
