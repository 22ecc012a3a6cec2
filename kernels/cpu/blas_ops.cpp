#include "kernels/cpu/blas_ops.hpp"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/cpu/ref_ops.hpp"

namespace bs::blas {

void im2col(const float* img, Shape is, const ConvParams& p, Shape os, int g, float* col) {
  const int cg = is.c / p.groups;
  const int64_t plane = int64_t{os.h} * os.w;
  for (int c = 0; c < cg; ++c) {
    const float* src = img + int64_t(g * cg + c) * is.h * is.w;
    for (int ky = 0; ky < p.kh; ++ky)
      for (int kx = 0; kx < p.kw; ++kx) {
        float* dst = col + ((int64_t{c} * p.kh + ky) * p.kw + kx) * plane;
        for (int oy = 0; oy < os.h; ++oy) {
          const int y = oy * p.sh - p.ph + ky * p.dh;
          float* row = dst + int64_t{oy} * os.w;
          if (y < 0 || y >= is.h) {
            std::fill(row, row + os.w, 0.0f);
            continue;
          }
          const float* srow = src + int64_t{y} * is.w;
          if (p.sw == 1) {  // contiguous run with zero borders
            for (int ox = 0; ox < os.w; ++ox) {
              const int x = ox - p.pw + kx * p.dw;
              row[ox] = (x >= 0 && x < is.w) ? srow[x] : 0.0f;
            }
          } else {
            for (int ox = 0; ox < os.w; ++ox) {
              const int x = ox * p.sw - p.pw + kx * p.dw;
              row[ox] = (x >= 0 && x < is.w) ? srow[x] : 0.0f;
            }
          }
        }
      }
  }
}

namespace {

// Direct convolution for layers whose GEMM would be tiny (ECE 408: 6 or 16 filters, 25 or 150 reductions):
// each step keeps VL neighbouring outputs of all M filters in registers, loads each input vector once and
// multiplies it by M broadcast weights. Compiled for AVX-512, AVX2 and baseline x86-64; the CPU picks.
constexpr int kVL = 16;

typedef float Vec __attribute__((vector_size(kVL * sizeof(float))));  // GCC vector extension

// clang (the sanitizer and fuzz build) does not multiversion templates: it compiles the baseline only.
#if defined(__clang__)
#define BS_CPU_CLONES
#else
#define BS_CPU_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif

template <int M>
BS_CPU_CLONES
void direct_image(const float* in /*(C, H, W), padded by kVL*/, int C, int H, int W, int K, const float* w /*(M, C, K, K)*/,
                  const float* bias, float* out /*(M, OH, OW)*/, int OH, int OW) {
  const int ckk = C * K * K;
  for (int oy = 0; oy < OH; ++oy)
    for (int ox0 = 0; ox0 < OW; ox0 += kVL) {
      Vec acc[M];
      for (int m = 0; m < M; ++m) acc[m] = Vec{} + (bias ? bias[m] : 0.0f);
      for (int c = 0; c < C; ++c)
        for (int ky = 0; ky < K; ++ky)
          for (int kx = 0; kx < K; ++kx) {
            Vec sv;
            std::memcpy(&sv, in + (static_cast<int64_t>(c) * H + oy + ky) * W + ox0 + kx, sizeof sv);
            const float* wk = w + (c * K + ky) * K + kx;
            for (int m = 0; m < M; ++m) acc[m] += wk[m * ckk] * sv;
          }
      const int valid = std::min(kVL, OW - ox0);
      for (int m = 0; m < M; ++m) {
        float lane[kVL];
        std::memcpy(lane, &acc[m], sizeof lane);
        std::copy_n(lane, valid, out + (static_cast<int64_t>(m) * OH + oy) * OW + ox0);
      }
    }
}

bool direct_applies(const ConvParams& p) {
  return p.groups == 1 && !p.dilated() && p.sh == 1 && p.sw == 1 && !p.padded() && p.kh == p.kw && p.kh <= 7 &&
         (p.filters == 6 || p.filters == 16);
}

}  // namespace

bool conv_is_direct(const ConvParams& p) { return direct_applies(p); }

void conv(const float* in, int n, Shape is, const ConvParams& p, Shape os, float* out, int threads, const Act* act) {
  if (direct_applies(p)) {
#pragma omp parallel num_threads(threads)
    {
      std::vector<float> img(static_cast<size_t>(is.size()) + 2 * kVL, 0.0f);  // slack for the last vector's reads
#pragma omp for schedule(static)
      for (int b = 0; b < n; ++b) {
        std::copy_n(in + int64_t{b} * is.size(), is.size(), img.data());
        const float* bias = p.bias.empty() ? nullptr : p.bias.data();
        float* dst = out + int64_t{b} * os.size();
        if (p.filters == 6) direct_image<6>(img.data(), is.c, is.h, is.w, p.kh, p.weight.data(), bias, dst, os.h, os.w);
        else direct_image<16>(img.data(), is.c, is.h, is.w, p.kh, p.weight.data(), bias, dst, os.h, os.w);
        if (act) ref::activation(dst, os.size(), *act);  // while the image's output is in cache
      }
    }
    return;
  }
  const int cg = is.c / p.groups, mg = p.filters / p.groups;
  const int kdim = cg * p.kh * p.kw;  // GEMM K
  const int64_t plane = int64_t{os.h} * os.w;  // GEMM N
  const bool direct = p.kh == 1 && p.kw == 1 && p.sh == 1 && p.sw == 1 && !p.padded();
  openblas_set_num_threads(1);  // parallel over images instead
#pragma omp parallel num_threads(threads)
  {
    std::vector<float> col(direct ? 0 : static_cast<size_t>(kdim) * plane);
#pragma omp for schedule(static)
    for (int b = 0; b < n; ++b) {
      const float* img = in + int64_t{b} * is.size();
      float* dst = out + int64_t{b} * os.size();
      for (int g = 0; g < p.groups; ++g) {
        const float* B = direct ? img + int64_t{g} * cg * plane : col.data();
        if (!direct) im2col(img, is, p, os, g, col.data());
        // out_g (M/g, OH*OW) = W_g (M/g, K) x col (K, OH*OW)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, mg, static_cast<int>(plane), kdim, 1.0f,
                    p.weight.data() + int64_t{g} * mg * kdim, kdim, B, static_cast<int>(plane), 0.0f,
                    dst + int64_t{g} * mg * plane, static_cast<int>(plane));
      }
      if (!p.bias.empty())
        for (int m = 0; m < p.filters; ++m) {
          float* o = dst + m * plane;
          const float bv = p.bias[m];
          for (int64_t i = 0; i < plane; ++i) o[i] += bv;
        }
      if (act) ref::activation(dst, os.size(), *act);  // while the image's output is in cache
    }
  }
}

void fc(const float* in, int n, int64_t inputs, const FcParams& p, float* out, int threads, const Act* act) {
  // Waking OpenBLAS's thread pool costs milliseconds; below ~50 M multiply-adds one thread is faster
  // (measured: ECE 408 fc0 at batch 8 took 7.6 ms on two threads).
  const double macs = static_cast<double>(n) * p.outputs * inputs;
  openblas_set_num_threads(macs > 5e7 ? threads : 1);
  // out (N, O) = in (N, I) x W^T (I, O)
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, p.outputs, static_cast<int>(inputs), 1.0f, in,
              static_cast<int>(inputs), p.weight.data(), static_cast<int>(inputs), 0.0f, out, p.outputs);
  if (!p.bias.empty())
    for (int b = 0; b < n; ++b)
      for (int o = 0; o < p.outputs; ++o) out[int64_t{b} * p.outputs + o] += p.bias[o];
  if (act) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int b = 0; b < n; ++b) ref::activation(out + int64_t{b} * p.outputs, p.outputs, *act);
  }
}

}  // namespace bs::blas
