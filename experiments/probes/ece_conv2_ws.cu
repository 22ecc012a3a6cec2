// Probe: ECE 408's conv2 at FP32 accuracy on the FP16 tensor cores with the staging separated from the MMA (warp
// specialisation), to decide whether it should replace conv v57's kernel (kernels/cuda/ops/conv_tc_f16.cu: 0.243 ms at
// 10,000 images on the H100, v11 0.327). v57 takes each 4-image set through copy, max, split, MMA and stores with block
// barriers between; ncu and its instruments (experiments/ece408-gpu.md, "conv2 on 3xFP16: the outcome") put its time in
// that sequence: staging and stores alone take 0.23 ms.
//
// Here one block per SM runs 9 consumer warps (v57's MMA loop and epilogue, unchanged) and 3 producer warps. The
// producers copy set k + 2 (cp.async) into one of two raw buffers while they find set k's maxima and split it into one
// of two plane buffers; named barriers hand the planes over (FULL: producers arrive, consumers wait; EMPTY: the reverse).
// 196 KB of shared memory. Same layout and arithmetic as v57, so the same results to the bit are expected.
// Run on the H100 (2026-11-28): 0.254 ms against the first schedule's 0.270 in the same call, 0.245 with -DWREG (the
// weight fragments in registers); checks ok, racecheck, synccheck and memcheck clean. Became v57's schedule (1cf7f25).
// Build: nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 -Xptxas -v ece_conv2_ws.cu -o ece_conv2_ws
// Run: ./ece_conv2_ws [images (10000)] [reps (20)]
#include <cuda_fp16.h>
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "check.cuh"

namespace {

constexpr int C = 6, CW = C / 2, H = 22, W = 22, K = 5, M = 16, OH = H - K + 1, OW = W - K + 1, P = OH * OW;
constexpr int KD = C * K * K;                // 150
constexpr int KS = 2 * K;                    // 10 k-steps of 16: (ky, half of the ky's 16 pairs)
__host__ __device__ constexpr int step_words(int s) { return (s / 2) * W * CW + 8 * (s % 2); }
constexpr int IP = 4;                        // images per set
constexpr int kTiles = IP * P / 16, kWarps = 9, NT = kTiles / kWarps;  // kWarps: the consumers
constexpr int kImgWords = H * W * CW;        // pair words of one image's plane (1452)
constexpr int kPlaneWords = IP * kImgWords + 4;  // + zeros: the last pixel's pad pair reads one word past the set
constexpr int kRawFloats = IP * C * H * W;   // 11616
constexpr int kFragWords = KS * 2 * 2 * 32 * 2;  // [KS][hi, lo][2 filter halves][32 lanes][b0, b1]
constexpr int kCons = 9, kProd = 3, kThreadsWS = 32 * (kCons + kProd), kProdThreads = 32 * kProd;
// frag | hi, lo planes x 2 | raw x 2 | img_max[2][IP] | inv_sx[2][IP] | wscale[M]
constexpr size_t kSmemBytes = sizeof(uint32_t) * (kFragWords + 4 * kPlaneWords + 2 * kRawFloats + 4 * IP + M);
static_assert(IP * P % 16 == 0 && kTiles % kWarps == 0 && NT % 3 == 0 && kRawFloats % 4 == 0, "tiling must divide the set");

__device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4], uint2 b) {
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

template <int A>
__device__ __forceinline__ float act(float v) { return A == 1 ? tanhf(v) : A == 0 ? fmaxf(v, 0.0f) : v; }

__device__ __forceinline__ void bar_sync(int id, int count) { asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory"); }
__device__ __forceinline__ void bar_arrive(int id, int count) { asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(count) : "memory"); }
// Named barriers: 1 + b FULL[b] (set in plane buffer b is split), 3 + b EMPTY[b] (consumers left it), 5 producers only.

template <int ACT>  // 1 tanh, 0 ReLU, -1 none
__global__ void __launch_bounds__(kThreadsWS, 1)
    conv2_ws(const float* __restrict__ in, const float* __restrict__ w, const float* __restrict__ bias,
             float* __restrict__ out, int n, int images_per_block, int store) {
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
  for (int i = threadIdx.x; i < 4 * 4; i += kThreadsWS) planes[(i / 4) * kPlaneWords + IP * kImgWords + i % 4] = 0u;
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
    const int pt = threadIdx.x - 32 * kCons, pwarp = pt >> 5;
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
        const int o = img * kImgWords + pix * CW;
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
      (void)pwarp;
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
#ifdef WREG  // -DWREG: the weight fragments in registers (80 a thread), not read from shared memory at every step
  uint2 wr[KS][4];
#pragma unroll
  for (int s = 0; s < KS; ++s)
#pragma unroll
    for (int x = 0; x < 4; ++x) wr[s][x] = wf[((s * 2 + (x >> 1)) * 2 + (x & 1)) * 32];
#endif
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
          rp[j][h] = slot * kImgWords + ((p / OW) * W + p % OW) * CW + t;
        }
      float acc[3][2][4];
#pragma unroll
      for (int j = 0; j < 3; ++j)
#pragma unroll
        for (int f = 0; f < 2; ++f) acc[j][f][0] = acc[j][f][1] = acc[j][f][2] = acc[j][f][3] = 0.0f;
#pragma unroll
      for (int s = 0; s < KS; ++s) {
#ifdef WREG
        const uint2 wh0 = wr[s][0], wh1 = wr[s][1], wl0 = wr[s][2], wl1 = wr[s][3];
#else
        const uint2 wh0 = wf[((s * 2 + 0) * 2 + 0) * 32], wh1 = wf[((s * 2 + 0) * 2 + 1) * 32];
        const uint2 wl0 = wf[((s * 2 + 1) * 2 + 0) * 32], wl1 = wf[((s * 2 + 1) * 2 + 1) * 32];
#endif
#pragma unroll
        for (int j = 0; j < 3; ++j) {
          const int sw = step_words(s);
          const uint32_t ah[4] = {hip[rp[j][0] + sw], hip[rp[j][1] + sw], hip[rp[j][0] + sw + 4], hip[rp[j][1] + sw + 4]};
          const uint32_t al[4] = {lop[rp[j][0] + sw], lop[rp[j][1] + sw], lop[rp[j][0] + sw + 4], lop[rp[j][1] + sw + 4]};
          mma(acc[j][0], al, wh0);
          mma(acc[j][1], al, wh1);
          mma(acc[j][0], ah, wl0);
          mma(acc[j][1], ah, wl1);
          mma(acc[j][0], ah, wh0);
          mma(acc[j][1], ah, wh1);
        }
      }
#pragma unroll
      for (int j = 0; j < 3; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int q = 16 * (warp * NT + u0 + j) + g + 8 * h, slot = q / P;
          const long long pix = px0 + q;
          if (pix >= px_end || !store) continue;
          float is = inv_sx[0];
#pragma unroll
          for (int kk = 1; kk < IP; ++kk)
            if (slot == kk) is = inv_sx[kk];
          float* o = out + (static_cast<long long>(b0) + slot) * M * P + (q - slot * P);
#pragma unroll
          for (int f = 0; f < 2; ++f)
#pragma unroll
            for (int e = 0; e < 2; ++e)
              o[(8 * f + 2 * t + e) * P] = act<ACT>(acc[j][f][2 * h + e] * is * wi[f][e] + bv[f][e]);
        }
    }
    if (k + 2 < nsets) bar_arrive(3 + b, kThreadsWS);  // EMPTY[b], only where a producer will wait for it
  }
}

void reference(const std::vector<float>& in, const std::vector<float>& w, const std::vector<float>& b, int img, int act_code,
               std::vector<double>& y) {
  y.assign(M * P, 0.0);
  for (int f = 0; f < M; ++f)
    for (int oy = 0; oy < OH; ++oy)
      for (int ox = 0; ox < OW; ++ox) {
        double s = b[f];
        for (int c = 0; c < C; ++c)
          for (int ky = 0; ky < K; ++ky)
            for (int kx = 0; kx < K; ++kx)
              s += static_cast<double>(in[((static_cast<size_t>(img) * C + c) * H + oy + ky) * W + ox + kx]) *
                   w[((f * C + c) * K + ky) * K + kx];
        y[f * P + oy * OW + ox] = act_code == 1 ? std::tanh(s) : act_code == 0 ? std::max(s, 0.0) : s;
      }
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 10000, reps = argc > 2 ? std::atoi(argv[2]) : 20;
  int dev = 0, sms = 0, per_sm = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CK(cudaFuncSetAttribute(conv2_ws<1>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kSmemBytes)));
  CK(cudaFuncSetAttribute(conv2_ws<-1>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kSmemBytes)));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, conv2_ws<1>, kThreadsWS, kSmemBytes));
  const int sets = (n + IP - 1) / IP, blocks = std::min(sets, sms * per_sm);
  const int images_per_block = (sets + blocks - 1) / blocks * IP;
  const int grid = (n + images_per_block - 1) / images_per_block;
  std::printf("images %d, %zu B shared, %d blocks per SM, grid %d x %d threads, %d images a block\n", n, kSmemBytes, per_sm,
              grid, kThreadsWS, images_per_block);

  std::mt19937 rng(1);
  std::vector<float> w(M * KD), b(M);
  std::normal_distribution<float> nd(0.0f, 0.1f);
  for (float& x : w) x = nd(rng);
  for (float& x : b) x = nd(rng);
  const size_t in_n = static_cast<size_t>(n) * C * H * W, out_n = static_cast<size_t>(n) * M * P;
  float *d_in, *d_w, *d_b, *d_out;
  CK(cudaMalloc(&d_in, in_n * 4));
  CK(cudaMalloc(&d_w, w.size() * 4));
  CK(cudaMalloc(&d_b, b.size() * 4));
  CK(cudaMalloc(&d_out, out_n * 4));
  CK(cudaMemcpy(d_w, w.data(), w.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_b, b.data(), b.size() * 4, cudaMemcpyHostToDevice));
  std::vector<float> in(in_n), y(out_n);
  bool ok = true;
  for (int mode = 0; mode < 3; ++mode) {
    std::uniform_real_distribution<float> u(-1.0f, 1.0f), ex(-20.0f, 20.0f);
    for (float& x : in) x = mode == 1 ? std::copysign(std::exp2(ex(rng)), u(rng)) : u(rng);
    if (mode == 2) in[static_cast<size_t>(5) * C * H * W + 7] = 1e30f;  // image 5: its own scale only
    CK(cudaMemcpy(d_in, in.data(), in_n * 4, cudaMemcpyHostToDevice));
    CK(cudaMemset(d_out, 0xff, out_n * 4));  // NaN: an output never written shows
    const int act_code = mode == 0 ? 1 : -1;  // tanh as ECE 408, else none (the values keep their range)
    if (act_code == 1) conv2_ws<1><<<grid, kThreadsWS, kSmemBytes>>>(d_in, d_w, d_b, d_out, n, images_per_block, 1);
    else conv2_ws<-1><<<grid, kThreadsWS, kSmemBytes>>>(d_in, d_w, d_b, d_out, n, images_per_block, 1);
    CK(cudaGetLastError());
    CK(cudaMemcpy(y.data(), d_out, out_n * 4, cudaMemcpyDeviceToHost));
    double num = 0, den = 0, worst = 0;
    int checked = 0;
    std::vector<double> ref;
    for (int img = 0; img < n; ++img) {
      if (!(img < 64 || img >= n - 36)) continue;
      if (mode == 2 && img == 5) continue;  // the image with 1e30 (its small values fall under FP16 after its scale)
      reference(in, w, b, img, act_code, ref);
      for (int i = 0; i < M * P; ++i) {
        const double d = y[static_cast<size_t>(img) * M * P + i] - ref[i];
        num += d * d;
        den += ref[i] * ref[i];
        if (std::fabs(ref[i]) > 1e-3) worst = std::max(worst, std::fabs(d / ref[i]));
        ok = ok && std::isfinite(y[static_cast<size_t>(img) * M * P + i]);
      }
      ++checked;
    }
    const double rel = std::sqrt(num / den);
    std::printf("input %s: %d images checked, relative L2 %.3e, largest relative error of an output over 1e-3 %.3e\n",
                mode == 0 ? "uniform [-1, 1], tanh" : mode == 1 ? "2^-20..2^20, no activation" : "uniform, 1e30 in image 4",
                checked, rel, worst);
    ok = ok && rel <= 1e-5;  // the bar every FP32 version is held to (v51-v53 measure about 4e-7 a layer)
  }

  // Timing: the tanh input, median of reps after 3 warm-ups.
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (float& x : in) x = u(rng);
  CK(cudaMemcpy(d_in, in.data(), in_n * 4, cudaMemcpyHostToDevice));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  const int store = std::getenv("PROBE_NOSTORE") ? 0 : 1;
  std::vector<float> ms;
  for (int r = 0; r < reps + 3; ++r) {
    CK(cudaEventRecord(e0));
    conv2_ws<1><<<grid, kThreadsWS, kSmemBytes>>>(d_in, d_w, d_b, d_out, n, images_per_block, store);
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float t = 0;
    CK(cudaEventElapsedTime(&t, e0, e1));
    if (r >= 3) ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  std::printf("conv2 3xFP16, %d images: median %.4f ms, min %.4f, max %.4f (%d reps); %.1f TFLOP/s of the 15.6 GFLOP\n", n,
              ms[ms.size() / 2], ms.front(), ms.back(), reps, 2.0 * n * P * M * KD / (ms[ms.size() / 2] * 1e-3) / 1e12);
  std::printf("%s\n", ok ? "checks: ok" : "checks: FAILED");
  return ok ? 0 : 1;
}
