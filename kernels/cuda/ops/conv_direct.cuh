// The direct convolution shared by v1 (weights in global memory), v3 (constant memory) and v4 (texture):
// one thread per output element, the weight read through a WeightSource policy.
#pragma once
#include <cuda_runtime.h>

namespace bs::cuda {

struct DirectConvGeom {
  int n, c, h, w;           // input (N, C, H, W)
  int m, oh, ow;            // output (N, M, OH, OW)
  int kh, kw, sh, sw, ph, pw, groups;
  int m_begin, m_count;     // the filters this launch computes (v3 runs chunks)
};

template <class WeightSource>
__global__ void direct_conv_kernel(const float* __restrict__ in,   // (N, C, H, W)
                                   WeightSource wsrc,               // (M, C/groups, KH, KW), chunk-relative
                                   const float* __restrict__ bias,  // (M,) or null
                                   float* __restrict__ out,         // (N, M, OH, OW)
                                   DirectConvGeom g) {
  const long long total = static_cast<long long>(g.n) * g.m_count * g.oh * g.ow;
  const long long idx = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= total) return;
  const int ox = idx % g.ow;
  const int oy = (idx / g.ow) % g.oh;
  const int mc = (idx / (static_cast<long long>(g.ow) * g.oh)) % g.m_count;
  const int b = idx / (static_cast<long long>(g.ow) * g.oh * g.m_count);
  const int m = g.m_begin + mc;
  const int cg = g.c / g.groups, mg = g.m / g.groups, grp = m / mg;
  float acc = bias ? bias[m] : 0.0f;
  for (int c = 0; c < cg; ++c) {
    const float* src = in + (static_cast<long long>(b) * g.c + grp * cg + c) * g.h * g.w;
    for (int ky = 0; ky < g.kh; ++ky) {
      const int y = oy * g.sh - g.ph + ky;
      if (y < 0 || y >= g.h) continue;
      for (int kx = 0; kx < g.kw; ++kx) {
        const int x = ox * g.sw - g.pw + kx;
        if (x < 0 || x >= g.w) continue;
        acc = fmaf(src[y * g.w + x], wsrc(((mc * cg + c) * g.kh + ky) * g.kw + kx), acc);
      }
    }
  }
  out[((static_cast<long long>(b) * g.m + m) * g.oh + oy) * g.ow + ox] = acc;
}

inline DirectConvGeom direct_geom(const ConvArgs& a, int m_begin, int m_count) {
  const ConvParams& p = *a.p;
  return {a.n, a.is.c, a.is.h, a.is.w, a.os.c, a.os.h, a.os.w, p.kh, p.kw, p.sh, p.sw, p.ph, p.pw, p.groups,
          m_begin, m_count};
}

template <class WeightSource>
void launch_direct_conv(const ConvArgs& a, WeightSource wsrc, int m_begin, int m_count, cudaStream_t s) {
  DirectConvGeom g = direct_geom(a, m_begin, m_count);
  const long long total = static_cast<long long>(g.n) * m_count * g.oh * g.ow;
  const int threads = 256;
  direct_conv_kernel<<<static_cast<unsigned>((total + threads - 1) / threads), threads, 0, s>>>(a.in, wsrc, a.bias,
                                                                                                 a.out, g);
}

}  // namespace bs::cuda
