// The implicit-GEMM loaders of the wgmma convolutions (gemm_wgmma.cuh's Problem interface), shared by the TF32 versions
// over an NHWC copy of the input (conv_wgmma.cu, v26-v36) and the 16-bit versions over the 16-bit path's own NHWC
// activations (conv_wgmma_half.cu). Both operands K-major, 32-bit words: a word is one TF32 value, or a pair of 16-bit
// values (two neighbouring channels); the loaders move 16-byte chunks and never look inside them.
//   A  a row per output pixel: its window's words, gathered one 16-byte chunk (4 words) at a time from the NHWC
//      input, zero-filled outside the image. k = (ky, kx, c) over cgs words per tap; ktab has one entry per chunk of
//      k, {word offset from the window's origin, ky << 16 | kx} (build_nhwc_k_table, gemm_prep.hpp).
//   B  the weights prepared once as (G, Mg, Kpad) words in A's k order; rows past Mg read as zeros.
// Per stage each thread copies chunk column c = tid % 8 of rows tid / 8 + (THREADS / 8) i, of A and of B: one k-table
// read serves all its A rows, and the eight lanes of a row fill its 128 bytes. The per-thread offsets stay fixed
// across stages and the k table is read one stage ahead (experiments/precision-tf32.md: the loop was bound by issuing
// the loaders' address arithmetic). Each A row keeps a pointer to its window's origin, so that a copy's address is one
// multiply-add of the k-table offset onto it, and the k table is walked by a pointer; the kernel's parameters the
// loaders read are copied into the state (registers), so that the asm barriers of the K loop do not make the compiler
// read them again from the constant bank each stage. The loaders count on being called for stages kt0, kt0 + 1, ... in
// turn, as gemm_wgmma.cuh's K loop calls them.
#pragma once
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>

#include "kernels/cuda/engine/epilogue.cuh"
#include "kernels/cuda/engine/fast_div.hpp"
#include "kernels/cuda/engine/gemm_prep.hpp"
#include "kernels/cuda/engine/gemm_wgmma.cuh"
#include "kernels/cuda/ops/conv.hpp"
#include "weights_tools/error.hpp"

namespace bs::cuda::wg {

struct WeightRows {
  const float* p;     // the thread's first row and chunk at k tile 0 (the prepared weights' start where that row is past
                      // the layer: nothing is read there)
  const float* safe;  // an address inside the weights, for the rows past the layer
  long long lo;       // 3xTF32 / 3xFP16: from the hi weights to the lo ones (NhwcConvLoads::lo_w)
  int stride;         // THREADS / 8 rows, in words
  uint32_t ok, so;    // which of its rows are filters of the group; its first chunk in a stage
};
template <class T>
__host__ __device__ constexpr int weight_rows() { return (T::BN * 8 + T::THREADS - 1) / T::THREADS; }

template <class T>
__host__ __device__ constexpr int nhwc_rows() { return T::BM * 8 / T::THREADS; }

template <int R>
struct NhwcRows {
  const float* row[R];  // the input at (img, iy0, ix0, group's first channel) of the thread's R rows (any value where the
                        // row is past the last pixel: its every copy reads nothing)
  const float* safe;    // an address inside the input, for the copies that read nothing
  long long lo;         // 3xTF32 / 3xFP16: from the hi part of the input copy to the lo part (NhwcConvLoads::lo_in)
  int iy0[R], ix0[R];
  int h, w;             // the input's rows and columns
  uint32_t so;          // the first row's chunk in a stage; row i's is 16 THREADS i bytes further (same swizzle phase)
  const int2* kp;       // the k-table entry of the stage after the one in e
  int2 e;               // the k-table entry of the next stage to load (read one stage ahead)
  int k_tiles;
};

// The geometry, the operands and the loaders; a Problem adds its epilogue (store or store2).
// in: (N, H, W, cs) words, the group's words starting at group * cg of a pixel.
struct NhwcConvLoads {
  const float* in;
  const int2* ktab;
  int h, w, ow, p, sh, sw, ph, pw;
  const float* wt;  // prepared weights (G, Mg, Kpad) words
  int k_pad;
  int mg, ncols, groups, k_tiles, splits;
  int cs, cg;
  long long hwc;        // H * W * cs
  long long lo_in = 0;  // 3xTF32: where the lo part of the input copy starts, from the hi part
  long long lo_w = 0;   // 3xTF32: where the lo weights start, from the hi ones
  FastDiv p_div, ow_div;  // by p and by ow (fast_div.hpp), set with them by set_pixels

  // The output's pixels an image and its width, with their dividers (the loaders' and epilogues' divisions).
  void set_pixels(int pixels, int width) {
    p = pixels;
    ow = width;
    p_div = FastDiv(static_cast<uint32_t>(pixels));
    ow_div = FastDiv(static_cast<uint32_t>(width));
  }

  // kt0: the first k tile this block loads (its split's).
  template <class T>
  __device__ __forceinline__ NhwcRows<nhwc_rows<T>()> a_state(int group, int m0, int tid, int kt0) const {
    NhwcRows<nhwc_rows<T>()> st;
#pragma unroll
    for (int i = 0; i < nhwc_rows<T>(); ++i) {
      const int n = m0 + tid / 8 + (T::THREADS / 8) * i;
      if (n < ncols) {
        const int img = static_cast<int>(p_div.div(n)), q = n - img * p, oy = static_cast<int>(ow_div.div(q)), ox = q - oy * ow;
        st.iy0[i] = oy * sh - ph;
        st.ix0[i] = ox * sw - pw;
        st.row[i] = in + (img * hwc + (static_cast<long long>(st.iy0[i]) * w + st.ix0[i]) * cs + group * cg);
      } else {  // past the last pixel: every k reads as outside the image
        st.iy0[i] = INT_MIN / 2;
        st.ix0[i] = 0;
        st.row[i] = in;
      }
    }
    st.safe = in;
    st.lo = lo_in;
    st.h = h;
    st.w = w;
    st.so = sw_chunk(tid / 8, tid % 8);
    st.k_tiles = k_tiles;
    st.kp = ktab + kt0 * (T::BK / 4) + tid % 8;
    st.e = kt0 < k_tiles ? __ldg(st.kp) : make_int2(0, kNoRow << 16);
    st.kp += T::BK / 4;
    return st;
  }
  // Stage kt (after kt0, kt0 + 1, ..., kt - 1).
  template <class T>
  __device__ __forceinline__ void load_a(NhwcRows<nhwc_rows<T>()>& st, uint32_t dst, int kt, int tid) const {
    (void)tid;
    const int2 e = st.e;
    if (kt + 1 < st.k_tiles) st.e = __ldg(st.kp);  // for the next call
    st.kp += T::BK / 4;
    const int ky = e.y >> 16, kx = e.y & 0xffff;
#pragma unroll
    for (int i = 0; i < nhwc_rows<T>(); ++i) {
      const int iy = st.iy0[i] + ky, ix = st.ix0[i] + kx;
      const bool ok = static_cast<unsigned>(iy) < static_cast<unsigned>(st.h) && static_cast<unsigned>(ix) < static_cast<unsigned>(st.w);
      const float* src = ok ? st.row[i] + e.x : st.safe;
      cp_async16(dst + st.so + 16 * T::THREADS * i, src, ok);
      if constexpr (T::PARTS == 2)  // the lo copy of the input follows the hi copy
        cp_async16(dst + T::A_BYTES + st.so + 16 * T::THREADS * i, src + (ok ? st.lo : 0), ok);
    }
  }

  template <class T>
  __device__ __forceinline__ WeightRows b_state(int group, int n0, int tid) const {
    WeightRows st;
    const int r = tid / 8;
    st.p = wt + (static_cast<long long>(group) * mg + n0 + r) * k_pad + 4 * (tid % 8);
    st.safe = wt;
    st.lo = lo_w;
    st.stride = (T::THREADS / 8) * k_pad;
    st.ok = 0;
#pragma unroll
    for (int i = 0; i < weight_rows<T>(); ++i)
      st.ok |= (r + (T::THREADS / 8) * i < mg - n0 && r + (T::THREADS / 8) * i < T::BN ? 1u : 0u) << i;
    if (!(st.ok & 1u)) st.p = wt;  // no row of this thread is a filter: its copies read nothing
    st.so = sw_chunk(r, tid % 8);
    return st;
  }
  template <class T>
  __device__ __forceinline__ void load_b(const WeightRows& st, uint32_t dst, int kt, int tid) const {
    const float* src = st.p + kt * T::BK;
#pragma unroll
    for (int i = 0; i < weight_rows<T>(); ++i) {
      if (T::BN * 8 % T::THREADS != 0 && tid / 8 + (T::THREADS / 8) * i >= T::BN) break;  // the last pass's idle rows
      const bool ok = (st.ok >> i) & 1u;
      const float* at = ok ? src + i * st.stride : st.safe;
      cp_async16(dst + st.so + 16 * T::THREADS * i, at, ok);
      if constexpr (T::PARTS == 2)  // the lo weights follow the hi weights
        cp_async16(dst + T::B_BYTES + st.so + 16 * T::THREADS * i, at + (ok ? st.lo : 0), ok);
    }
  }
};

// Stores v at p + words, a global address. Written out because the compiler, given p + words, adds a 64-bit index to
// the tensor's base (four instructions an address where this takes two), and loses that the pointer is global once
// the address is computed in assembly (a generic store).
__device__ __forceinline__ void store_global(float* p, unsigned words, float v) {
  asm volatile("{\n\t.reg .u64 a;\n\tmad.wide.u32 a, %1, 4, %0;\n\tst.global.f32 [a], %2;\n\t}" ::"l"(p), "r"(words), "f"(v));
}

// The FP32 convolutions' epilogue (conv_wgmma.cu, conv_wgmma_3xf16.cu): C's rows are pixels and its columns filters,
// stored into the NCHW output with bias and activation, or as split-K partial sums (splits, G, Mg, ncols) reduced after.
struct NchwOutConv : NhwcConvLoads {
  int m_total, act;
  const float* bias;
  float* out;   // (N, M, OH, OW)
  float* part;  // split-K partial sums

  __device__ __forceinline__ void store(int group, int split, int m, int n, float v) const {
    if (m >= ncols || n >= mg) return;
    if (splits > 1 && split != gemm::kSplitsReduced) {  // a partial sum; the reduced ones (a cluster's) are the output
      part[((static_cast<long long>(split) * groups + group) * mg + n) * ncols + m] = v;
      return;
    }
    const int img = static_cast<int>(p_div.div(m)), q = m - img * p, nn = group * mg + n;
    if (bias) v += bias[nn];
    out[(static_cast<long long>(img) * m_total + nn) * p + q] = activate_or_keep(v, act);
  }

  // The thread's whole accumulator (gemm_wgmma.cuh's store_tile: rows r + 64 mi + 8 h, column pairs c + 8 j), each value
  // first multiplied by rowf[mi][h] * colf[column] where SCALED (conv_wgmma_3xf16.cu's powers of two; colf indexed by
  // the group's filter). Where all its rows are pixels of the layer, each row's place in the output (or in the split-K
  // partial sums, whose filters are planes of ncols values) is found once: one division where store() has one per
  // value. Each column's bias and factor are read once, ReLU is taken without a branch, and each value goes out after
  // one check of its column. store()'s per-value checks, division, 64-bit index, bias load (reloaded after every
  // store, since out may alias it) and branch on the activation made the epilogue the largest cost of short-K layers
  // (AlexNet's conv1: 7 stages), as the 16-bit versions found (conv_wgmma_half.cu). Rows past the layer go value by
  // value through store(). The values are the same bits either way: the same product, then bias + value (a missing
  // bias adds -0, which changes nothing), then the activation.
  template <class T, bool SCALED>
  __device__ __forceinline__ void store_tile_nchw(const float (&acc)[T::MI][T::BN / 2], int group, int split, int r, int c,
                                                  const float (&rowf)[T::MI][2], const float* colf) const {
    constexpr int J = T::BN / 8;
    const auto value = [&](int mi, int h, int j, int q, float f) {
      const float a = acc[mi][4 * j + 2 * h + q];
      if constexpr (SCALED) return a * (rowf[mi][h] * f);
      else return a;
    };
    const bool partial = splits > 1;
    const int plane = partial ? ncols : p;  // from one filter's values to the next's
    if (r + 64 * (T::MI - 1) + 8 >= ncols || static_cast<long long>(mg) * plane >= INT_MAX) {
#pragma unroll
      for (int j = 0; j < J; ++j)
#pragma unroll
        for (int q = 0; q < 2; ++q) {
          const int n = c + 8 * j + q;
          if (n >= mg) continue;
          const float f = SCALED ? __ldg(colf + n) : 1.0f;
#pragma unroll
          for (int mi = 0; mi < T::MI; ++mi)
#pragma unroll
            for (int h = 0; h < 2; ++h) store(group, split, r + 64 * mi + 8 * h, n, value(mi, h, j, q, f));
        }
      return;
    }
    float* row[T::MI][2];  // the row's value of the group's first filter
#pragma unroll
    for (int mi = 0; mi < T::MI; ++mi)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int m = r + 64 * mi + 8 * h, img = static_cast<int>(p_div.div(m)), q = m - img * p;
        row[mi][h] = partial ? part + (static_cast<long long>(split) * groups + group) * mg * ncols + m
                             : out + (static_cast<long long>(img) * m_total + group * mg) * p + q;
      }
    // the thread's columns' bias and factors at fixed offsets from one address each (no branch per column: a column past
    // the layer loads and stores nothing); partial sums take neither bias nor activation
    const float* bc = bias && !partial ? bias + group * mg + c : nullptr;
    const float* fc = SCALED ? colf + c : nullptr;
    const auto body = [&](auto activation) {
#pragma unroll
      for (int j = 0; j < J; ++j)
#pragma unroll
        for (int q = 0; q < 2; ++q) {
          const int n = c + 8 * j + q;
          const bool in = n < mg;
          const float b = bc && in ? __ldg(bc + 8 * j + q) : -0.0f;
          const float f = SCALED && in ? __ldg(fc + 8 * j + q) : 1.0f;
          const unsigned col = static_cast<unsigned>(n) * static_cast<unsigned>(plane);
#pragma unroll
          for (int mi = 0; mi < T::MI; ++mi)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              const float v = activation(value(mi, h, j, q, f) + b);
              if (in) store_global(row[mi][h], col, v);
            }
        }
    };
    if (partial || act < 0) body([](float v) { return activate_c<kNoAct>(v); });
    else if (act == 0) body([](float v) { return activate_c<0>(v); });  // ReLU
    else body([this](float v) { return activate(v, act); });
  }
  template <class T>
  __device__ __forceinline__ void store_tile(const float (&acc)[T::MI][T::BN / 2], int group, int split, int r, int c) const {
    const float unscaled[T::MI][2] = {};
    store_tile_nchw<T, false>(acc, group, split, r, c, unscaled, nullptr);
  }
};

// Launches an FP32 convolution problem (NchwOutConv's epilogue) over the layer of a, whose workspace must hold need
// floats, and reduces its split-K partial sums (pr.part) into a.out with bias and activation.
template <class T, class Problem>
void launch_fp32_conv(const Problem& pr, const ConvArgs& a, size_t need, int act, cudaStream_t s) {
  if (a.workspace_floats < need)
    fail("layer convolution", "wgmma workspace too small (internal: workspace_floats disagrees with the launch)");
  launch_wgmma<T>(pr, pr.ncols, pr.mg, pr.groups, s);
  if (pr.splits > 1 && T::CLUSTER == 0) {  // else the splits were reduced inside their cluster
    ConvArgs red = a;
    red.workspace = pr.part;
    detail::conv_splitk_finish(red, pr.splits, pr.groups, pr.mg, pr.ncols, pr.p, act, s);
  }
}

}  // namespace bs::cuda::wg
