// The engine's math policies (gemm_engine.cuh): how one warp turns a shared-memory stage, A[BK][SA] and
// B[BK][SB] (k-major), into products for its WM x WN warp tile, and where each accumulator belongs.
//
//   FmaMath        FP32 FFMA on the CUDA cores. Lanes form a 4 (M) x 8 (N) grid; each lane owns
//                  (WM/4) x (WN/8) outputs (8 x 8 for a 32 x 64 warp tile) as float4 pieces 16 rows / 32
//                  columns apart, so that a k step is WM/16 + WN/32 LDS.128 (A pieces broadcast to the 8
//                  lanes of a row group; B pieces in 8 consecutive 16-byte slots) for (WM/4)*(WN/8) FFMAs.
//   MmaTf32Math<P> mma.sync.m16n8k8 TF32 on the tensor cores, FP32 accumulation. P = 3 ("3xTF32"): every
//                  operand x is split into hi = x rounded to the nearest TF32 and lo = x - hi (exact in FP32;
//                  the tensor core reads its top 19 bits), and a*b is taken as a_lo*b_hi + a_hi*b_lo +
//                  a_hi*b_hi, the small terms first; the dropped a_lo*b_lo and the truncation of lo are below
//                  2^-21 of a*b and of either sign, so the result keeps FP32 accuracy (held to the same 1e-5 as
//                  every FP32 variant). P = 1: one TF32 product of operands rounded to nearest (cvt.rna): a
//                  reduced precision (~1e-3 relative), for the precision modes.
// Fragment layouts of m16n8k8 (PTX ISA): A (row) a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4);
// B (col) b0 (k=t, n=g), b1 (k=t+4, n=g); C c0 (g, 2t), c1 (g, 2t+1), c2 (g+8, 2t), c3 (g+8, 2t+1), with
// g = lane / 4 and t = lane % 4. With rows padded to 8 (mod 32) floats, the 32 lanes' reads t * S + g hit
// 32 different banks.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace bs::cuda::gemm {

template <class T>
struct FmaMath {
  static constexpr int kPromoteEvery = 0;  // FFMA rounds to nearest: nothing to promote
  static constexpr int TM = T::WM / 4, TN = T::WN / 8;
  static_assert(T::WM % 16 == 0 && T::WN % 32 == 0, "FmaMath's lanes cover 16 x 32 per piece");
  struct Acc {
    float v[TM][TN];
  };
  __device__ __forceinline__ static void zero(Acc& a) {
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j) a.v[i][j] = 0.0f;
  }
  __device__ __forceinline__ static int row(int i, int lane) { return (i / 4) * 16 + (lane / 8) * 4 + i % 4; }
  __device__ __forceinline__ static int col(int j, int lane) { return (j / 4) * 32 + (lane % 8) * 4 + j % 4; }

  __device__ __forceinline__ static void stage(Acc& acc, const float* As, const float* Bs, int wm0, int wn0, int lane) {
    const float* pa = As + wm0 + (lane / 8) * 4;
    const float* pb = Bs + wn0 + (lane % 8) * 4;
#pragma unroll
    for (int k = 0; k < T::BK; ++k) {
      float a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM / 4; ++i) {
        const float4 v = *reinterpret_cast<const float4*>(pa + k * T::SA + i * 16);
        a[4 * i] = v.x; a[4 * i + 1] = v.y; a[4 * i + 2] = v.z; a[4 * i + 3] = v.w;
      }
#pragma unroll
      for (int j = 0; j < TN / 4; ++j) {
        const float4 v = *reinterpret_cast<const float4*>(pb + k * T::SB + j * 32);
        b[4 * j] = v.x; b[4 * j + 1] = v.y; b[4 * j + 2] = v.z; b[4 * j + 3] = v.w;
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc.v[i][j] = fmaf(a[i], b[j], acc.v[i][j]);
    }
  }

  __device__ __forceinline__ static void promote(Acc&) {}

  // f(row, column, value) in the block tile; a row's columns in order, so that stores go out in runs.
  template <class F>
  __device__ __forceinline__ static void for_each(const Acc& acc, int wm0, int wn0, int lane, F&& f) {
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j) f(wm0 + row(i, lane), wn0 + col(j, lane), acc.v[i][j]);
  }
};

__device__ __forceinline__ void mma_m16n8k8_tf32(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// hi: x rounded to the nearest TF32 (add half of the dropped part's unit, clear the low 13 bits; ties away from
// zero), so that lo = x - hi (exact in FP32) is at most 2^-11 |x| and takes either sign. With hi truncated
// instead (the first version, and v11's), lo always had the sign of x, the tensor core's truncation of lo and the
// dropped lo*lo were all biased the same way, and over K = 9216 (AlexNet fc6) the error reached 1.1e-5, and 1.4e-4
// end to end; with the error terms' signs random it stays near 1e-6.
template <int PASSES>
__device__ __forceinline__ void tf32_split(float x, uint32_t& hi, uint32_t& lo) {
  if constexpr (PASSES == 3) {
    hi = (__float_as_uint(x) + 0x1000u) & 0xffffe000u;
    lo = __float_as_uint(x - __uint_as_float(hi));
  } else {
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(hi) : "f"(x));
    lo = 0;
  }
}

// Accumulation: the tensor cores' FP32 accumulation rounds toward zero (Fasi et al., "Numerical behavior of
// NVIDIA tensor cores", PeerJ CS 2021; H100 modelled the same way by Khattak and Mikaitis, 2025), so every MMA
// that adds into a running sum shrinks it by up to an ulp of the sum, always the same way. Chained over a whole
// K loop (AlexNet fc6 without split-K: 3456 MMAs into one accumulator) that bias reached 1e-5 relative per layer
// and 1.2e-4 end to end. So the MMAs of PROMOTE k-tiles (3 passes x BK/8 steps) go into a tensor-core tile t
// that starts at zero, and t is then added to the FP32 accumulators v with FADD (round to nearest): the
// truncations act on short partial sums and their signs vary, like an SGEMM's rounding. The price is t's
// registers (as many as v) and one FADD per accumulator per promotion.
template <class T, int PASSES, int PROMOTE = 1>
struct MmaTf32Math {
  static_assert(PASSES == 1 || PASSES == 3, "one TF32 product, or three (3xTF32)");
  static constexpr int kPromoteEvery = PROMOTE;
  static constexpr int MI = T::WM / 16, NI = T::WN / 8;
  static_assert(T::WM % 16 == 0 && T::WN % 8 == 0, "warp tile in m16n8 pieces");
  struct Acc {
    float v[MI][NI][4];  // FP32 sums (round to nearest)
    float t[MI][NI][4];  // the tensor cores' partial sums since the last promotion
  };
  __device__ __forceinline__ static void zero(Acc& a) {
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int j = 0; j < NI; ++j)
#pragma unroll
        for (int r = 0; r < 4; ++r) a.v[i][j][r] = a.t[i][j][r] = 0.0f;
  }
  __device__ __forceinline__ static void promote(Acc& a) {
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int j = 0; j < NI; ++j)
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          a.v[i][j][r] += a.t[i][j][r];
          a.t[i][j][r] = 0.0f;
        }
  }

  __device__ __forceinline__ static void stage(Acc& acc, const float* As, const float* Bs, int wm0, int wn0, int lane) {
    const int g = lane / 4, t = lane % 4;
    const float* pa = As + t * T::SA + wm0 + g;
    const float* pb = Bs + t * T::SB + wn0 + g;
#pragma unroll
    for (int ks = 0; ks < T::BK; ks += 8) {
      uint32_t ahi[MI][4], alo[MI][4];
      if constexpr (T::A_FRAGS) {  // the fragments as prepared: chunk (ks / 8, row piece), hi quads then lo quads
        static_assert(PASSES == 3, "the prepared parts are 3xTF32's");
#pragma unroll
        for (int i = 0; i < MI; ++i) {
          const float* c = As + ks * T::SA + (wm0 / 16 + i) * 256 + 4 * lane;  // 8 k rows of SA = 2 BM floats a chunk row
          const uint4 h = *reinterpret_cast<const uint4*>(c), l = *reinterpret_cast<const uint4*>(c + 128);
          ahi[i][0] = h.x; ahi[i][1] = h.y; ahi[i][2] = h.z; ahi[i][3] = h.w;
          alo[i][0] = l.x; alo[i][1] = l.y; alo[i][2] = l.z; alo[i][3] = l.w;
        }
      } else {
#pragma unroll
        for (int i = 0; i < MI; ++i) {
          const float* p = pa + ks * T::SA + i * 16;
          tf32_split<PASSES>(p[0], ahi[i][0], alo[i][0]);
          tf32_split<PASSES>(p[8], ahi[i][1], alo[i][1]);
          tf32_split<PASSES>(p[4 * T::SA], ahi[i][2], alo[i][2]);
          tf32_split<PASSES>(p[4 * T::SA + 8], ahi[i][3], alo[i][3]);
        }
      }
      // One B fragment at a time (registers: the 128x128 tile runs two blocks per SM at 128 per thread); its
      // products pass by pass over the MI row pieces, so that MI independent products separate two that
      // share an accumulator, the small terms first.
#pragma unroll
      for (int j = 0; j < NI; ++j) {
        const float* p = pb + ks * T::SB + j * 8;
        uint32_t bhi[2], blo[2];
        tf32_split<PASSES>(p[0], bhi[0], blo[0]);
        tf32_split<PASSES>(p[4 * T::SB], bhi[1], blo[1]);
        if constexpr (PASSES == 3) {
#pragma unroll
          for (int i = 0; i < MI; ++i) mma_m16n8k8_tf32(acc.t[i][j], alo[i], bhi[0], bhi[1]);
#pragma unroll
          for (int i = 0; i < MI; ++i) mma_m16n8k8_tf32(acc.t[i][j], ahi[i], blo[0], blo[1]);
        }
#pragma unroll
        for (int i = 0; i < MI; ++i) mma_m16n8k8_tf32(acc.t[i][j], ahi[i], bhi[0], bhi[1]);
      }
    }
  }

  template <class F>
  __device__ __forceinline__ static void for_each(const Acc& acc, int wm0, int wn0, int lane, F&& f) {
    const int g = lane / 4, t = lane % 4;
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int j = 0; j < NI; ++j) {
          const int r = wm0 + i * 16 + g + 8 * h, c = wn0 + j * 8 + 2 * t;
          f(r, c, acc.v[i][j][2 * h] + acc.t[i][j][2 * h]);  // t: what the last promotion did not take
          f(r, c + 1, acc.v[i][j][2 * h + 1] + acc.t[i][j][2 * h + 1]);
        }
  }
};

// ---- MmaHalfMath<T, BF16>: mma.sync.m16n8k16 with FP16 (BF16 = false) or BF16 operands and FP32 accumulation,
// for --precision fp16 / bf16. Shared memory holds 32-bit words, each a pair of consecutive k (the smaller k in
// the low half, as the fragments want): a stage of BK words is 2 x BK values of k. Word (kw, m) of A and (kw, n)
// of B then sit where m16n8k8's TF32 fragments find them: A a0 = (kw t, row g), a1 = (t, g + 8), a2 = (t + 4, g),
// a3 = (t + 4, g + 8); B b0 = (t, col g), b1 = (t + 4, g), so the bank pattern is the TF32 one. The tensor
// cores' round-toward-zero accumulation over a whole K (1e-5 relative, see above) is far below the 1e-3 of a
// half-precision operand, so nothing is promoted.
__device__ __forceinline__ void mma_m16n8k16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1, bool bf16) {
  if (bf16)
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  else
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

template <class T, bool BF16>
struct MmaHalfMath {
  static constexpr int kPromoteEvery = 0;
  static constexpr int MI = T::WM / 16, NI = T::WN / 8;
  static_assert(T::WM % 16 == 0 && T::WN % 8 == 0, "warp tile in m16n8 pieces");
  struct Acc {
    float v[MI][NI][4];
  };
  __device__ __forceinline__ static void zero(Acc& a) {
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int j = 0; j < NI; ++j)
#pragma unroll
        for (int r = 0; r < 4; ++r) a.v[i][j][r] = 0.0f;
  }
  __device__ __forceinline__ static void promote(Acc&) {}

  __device__ __forceinline__ static void stage(Acc& acc, const float* As, const float* Bs, int wm0, int wn0, int lane) {
    const int g = lane / 4, t = lane % 4;
    const uint32_t* pa = reinterpret_cast<const uint32_t*>(As) + t * T::SA + wm0 + g;
    const uint32_t* pa_row = reinterpret_cast<const uint32_t*>(As) + (wm0 + g) * T::SA + t;
    const uint32_t* pb = reinterpret_cast<const uint32_t*>(Bs) + t * T::SB + wn0 + g;
#pragma unroll
    for (int ks = 0; ks < T::BK; ks += 8) {
      uint32_t a[MI][4];
#pragma unroll
      for (int i = 0; i < MI; ++i) {
        if constexpr (T::A_ROW) {  // A[m][k]: row g (+ 8), k word t (+ 4)
          const uint32_t* p = pa_row + i * 16 * T::SA + ks;
          a[i][0] = p[0];
          a[i][1] = p[8 * T::SA];
          a[i][2] = p[4];
          a[i][3] = p[8 * T::SA + 4];
        } else {
          const uint32_t* p = pa + ks * T::SA + i * 16;
          a[i][0] = p[0];
          a[i][1] = p[8];
          a[i][2] = p[4 * T::SA];
          a[i][3] = p[4 * T::SA + 8];
        }
      }
#pragma unroll
      for (int j = 0; j < NI; ++j) {
        const uint32_t* p = pb + ks * T::SB + j * 8;
        const uint32_t b0 = p[0], b1 = p[4 * T::SB];
#pragma unroll
        for (int i = 0; i < MI; ++i) mma_m16n8k16(acc.v[i][j], a[i], b0, b1, BF16);
      }
    }
  }

  // f(row, column, C(row, column), C(row, column + 1)) in the block tile: the pairs each lane holds.
  template <class F>
  __device__ __forceinline__ static void for_each_pair(const Acc& acc, int wm0, int wn0, int lane, F&& f) {
    const int g = lane / 4, t = lane % 4;
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int j = 0; j < NI; ++j) f(wm0 + i * 16 + g + 8 * h, wn0 + j * 8 + 2 * t, acc.v[i][j][2 * h], acc.v[i][j][2 * h + 1]);
  }
};

}  // namespace bs::cuda::gemm
