// Convolution versions v1, v2, v4, v5, v6, the dispatcher and the auto heuristic (conv.hpp has the menu).
#include <algorithm>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/ops/ops.hpp"
#include "kernels/cuda/ops/conv.hpp"
#include "kernels/cuda/ops/conv_direct.cuh"
#include "kernels/cuda/engine/gemm_core.cuh"
#include "kernels/cuda/impl_hooks.hpp"
#include "weights_tools/error.hpp"

namespace bs::cuda {

namespace {

// ---- v1 / v4: weight sources for the direct kernel
struct GlobalWeights {
  const float* w;
  __device__ float operator()(int i) const { return w[i]; }
};
struct TextureWeights {
  cudaTextureObject_t t;
  __device__ float operator()(int i) const { return tex1Dfetch<float>(t, i); }
};

// ---- v2: one block per 16x16 output tile of one (image, filter); input tile in shared memory
constexpr int kTile = 16;

__global__ void smem_tile_conv_kernel(const float* __restrict__ in, const float* __restrict__ w,
                                      const float* __restrict__ bias, float* __restrict__ out, DirectConvGeom g,
                                      int tiles_x) {
  extern __shared__ float tile[];  // (tile_h, tile_w) for one input channel
  const int tile_w = (kTile - 1) * g.sw + g.kw, tile_h = (kTile - 1) * g.sh + g.kh;
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * kTile + tx;
  const int ox0 = (blockIdx.x % tiles_x) * kTile, oy0 = (blockIdx.x / tiles_x) * kTile;
  const int m = blockIdx.y, b = blockIdx.z;
  const int cg = g.c / g.groups, mg = g.m / g.groups, grp = m / mg;
  const int ix0 = ox0 * g.sw - g.pw, iy0 = oy0 * g.sh - g.ph;
  const int ox = ox0 + tx, oy = oy0 + ty;
  float acc = bias ? bias[m] : 0.0f;
  for (int c = 0; c < cg; ++c) {
    const float* src = in + (static_cast<long long>(b) * g.c + grp * cg + c) * g.h * g.w;
    for (int i = tid; i < tile_w * tile_h; i += kTile * kTile) {
      const int y = iy0 + i / tile_w, x = ix0 + i % tile_w;
      tile[i] = (y >= 0 && y < g.h && x >= 0 && x < g.w) ? src[y * g.w + x] : 0.0f;  // zero padding
    }
    __syncthreads();
    const float* wf = w + (static_cast<long long>(m) * cg + c) * g.kh * g.kw;
    for (int ky = 0; ky < g.kh; ++ky)
      for (int kx = 0; kx < g.kw; ++kx)
        acc = fmaf(tile[(ty * g.sh + ky) * tile_w + tx * g.sw + kx], wf[ky * g.kw + kx], acc);
    __syncthreads();
  }
  if (ox < g.ow && oy < g.oh) out[((static_cast<long long>(b) * g.m + m) * g.oh + oy) * g.ow + ox] = acc;
}

// ---- v5: im2col of a chunk of images, then the tiled GEMM per (image, group)
__global__ void im2col_kernel(const float* __restrict__ in, float* __restrict__ col, DirectConvGeom g, int images) {
  // col layout: (image, group, Cg*KH*KW, OH*OW)
  const int cg = g.c / g.groups;
  const long long plane = static_cast<long long>(g.oh) * g.ow;
  const long long kd = static_cast<long long>(cg) * g.kh * g.kw;
  const long long total = static_cast<long long>(images) * g.groups * kd * plane;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long p = i % plane;
    const long long k = (i / plane) % kd;
    const long long ig = i / (plane * kd);  // image * groups + group
    const int grp = ig % g.groups, b = static_cast<int>(ig / g.groups);
    const int kx = k % g.kw, ky = (k / g.kw) % g.kh, c = static_cast<int>(k / (g.kw * g.kh));
    const int y = static_cast<int>(p / g.ow) * g.sh - g.ph + ky, x = static_cast<int>(p % g.ow) * g.sw - g.pw + kx;
    col[i] = (y >= 0 && y < g.h && x >= 0 && x < g.w)
                 ? in[((static_cast<long long>(b) * g.c + grp * cg + c) * g.h + y) * g.w + x]
                 : 0.0f;
  }
}

struct UnrolledConvGemm {  // z = image * groups + group; C(m, p) = W_g(m, k) x col(k, p)
  static constexpr bool b_k_fastest = false;
  int M, N, K;             // filters per group, OH*OW, Cg*KH*KW
  int groups, m_total;
  const float* w;
  const float* col;
  const float* bias;
  float* out;  // (chunk images, M, OH, OW)
  __device__ float a(int z, int m, int k) const { return w[(static_cast<long long>(z % groups) * M + m) * K + k]; }
  __device__ float b(int z, int k, int n) const { return col[(static_cast<long long>(z) * K + k) * N + n]; }
  __device__ void store(int z, int m, int n, float v) const {
    const int mm = (z % groups) * M + m;
    out[(static_cast<long long>(z / groups) * m_total + mm) * N + n] = v + (bias ? bias[mm] : 0.0f);
  }
};

// ---- v6: the same GEMM with B computed from the input on the fly; columns span images x pixels
struct ImplicitConvGemm {  // z = group; C(m, n) with n = image * OH*OW + pixel
  static constexpr bool b_k_fastest = false;
  int M, N, K;
  DirectConvGeom g;
  const float* w;
  const float* in;
  const float* bias;
  float* out;
  __device__ float a(int z, int m, int k) const { return w[(static_cast<long long>(z) * M + m) * K + k]; }
  __device__ float b(int z, int k, int n) const {
    const int plane = g.oh * g.ow, cg = g.c / g.groups;
    const int img = n / plane, p = n % plane;
    const int kx = k % g.kw, ky = (k / g.kw) % g.kh, c = k / (g.kw * g.kh);
    const int y = (p / g.ow) * g.sh - g.ph + ky, x = (p % g.ow) * g.sw - g.pw + kx;
    if (y < 0 || y >= g.h || x < 0 || x >= g.w) return 0.0f;
    return in[((static_cast<long long>(img) * g.c + z * cg + c) * g.h + y) * g.w + x];
  }
  __device__ void store(int z, int m, int n, float v) const {
    const int plane = g.oh * g.ow, mm = z * M + m;
    out[(static_cast<long long>(n / plane) * g.m + mm) * plane + n % plane] = v + (bias ? bias[mm] : 0.0f);
  }
};

constexpr size_t kWorkspaceCap = size_t{64} << 20;  // floats (256 MiB) for v5's im2col chunk

size_t im2col_floats_per_image(Shape is, const ConvParams& p, Shape os) {
  return static_cast<size_t>(is.c) * p.kh * p.kw * os.h * os.w;  // all groups
}

}  // namespace

namespace detail {

size_t basic_workspace_floats(int version, const Layer& layer, int n) {
  if (version != 5) return 0;
  const size_t per = im2col_floats_per_image(layer.in, std::get<ConvParams>(layer.op), layer.out);
  return std::min(per * static_cast<size_t>(n), std::max(per, kWorkspaceCap));
}

Support basic_supports(int version, const Layer& layer, const Epilogue& epi) {
  if (epi.has_act || epi.pool2x2) return {false, "v" + std::to_string(version) + " has no fused epilogue"};
  const ConvParams& p = std::get<ConvParams>(layer.op);
  if (version == 2 && (kTile - 1) * p.sh + p.kh > 96) return {false, "v2's input tile exceeds its shared-memory budget"};
  if (version == 4 && p.weight.size() > (size_t{1} << 27)) return {false, "weights exceed the 1-D texture limit"};
  if (version == 5 && im2col_floats_per_image(layer.in, p, layer.out) > kWorkspaceCap) return {false, "one image's im2col exceeds the workspace"};
  return {};
}

void basic_forward(int version, const ConvArgs& a, cudaStream_t s) {
  const ConvParams& p = *a.p;
  const DirectConvGeom g = direct_geom(a, 0, a.os.c);
  switch (version) {
    case 1:
      launch_direct_conv(a, GlobalWeights{a.w}, 0, a.os.c, s);
      break;
    case 4:
      launch_direct_conv(a, TextureWeights{a.wtex}, 0, a.os.c, s);
      break;
    case 2: {
      const int tiles_x = (a.os.w + kTile - 1) / kTile, tiles_y = (a.os.h + kTile - 1) / kTile;
      const size_t smem = sizeof(float) * ((kTile - 1) * p.sw + p.kw) * ((kTile - 1) * p.sh + p.kh);
      if (smem > 48 * 1024) CUDA_CHECK(cudaFuncSetAttribute(smem_tile_conv_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
      for (int b0 = 0; b0 < a.n; b0 += 65535) {  // grid z limit
        const int nb = std::min(65535, a.n - b0);
        smem_tile_conv_kernel<<<dim3(tiles_x * tiles_y, a.os.c, nb), dim3(kTile, kTile), smem, s>>>(
            a.in + static_cast<long long>(b0) * a.is.size(), a.w, a.bias, a.out + static_cast<long long>(b0) * a.os.size(), g, tiles_x);
        CUDA_CHECK_LAUNCH();
      }
      return;
    }
    case 5: {
      const size_t per = im2col_floats_per_image(a.is, p, a.os);
      const int chunk = static_cast<int>(std::max<size_t>(1, a.workspace_floats / per));
      for (int b0 = 0; b0 < a.n; b0 += chunk) {
        const int nb = std::min(chunk, a.n - b0);
        DirectConvGeom gc = g;
        gc.n = nb;
        const float* in = a.in + static_cast<long long>(b0) * a.is.size();
        const long long total = static_cast<long long>(nb) * per;
        im2col_kernel<<<static_cast<unsigned>(std::min<long long>((total + 255) / 256, 1 << 20)), 256, 0, s>>>(in, a.workspace, gc, nb);
        CUDA_CHECK_LAUNCH();
        UnrolledConvGemm pr{a.os.c / p.groups, a.os.h * a.os.w, (a.is.c / p.groups) * p.kh * p.kw, p.groups, a.os.c,
                            a.w, a.workspace, a.bias, a.out + static_cast<long long>(b0) * a.os.size()};
        const int zstep = (65535 / p.groups) * p.groups;  // grid z limit, whole images per launch
        for (int z0 = 0; z0 < nb * p.groups; z0 += zstep) {
          UnrolledConvGemm part = pr;
          const int nz = std::min(zstep, nb * p.groups - z0);
          part.col = pr.col + static_cast<long long>(z0) * pr.K * pr.N;
          part.out = pr.out + static_cast<long long>(z0 / p.groups) * a.os.size();
          launch_gemm_auto(part, nz, s);
          CUDA_CHECK_LAUNCH();
        }
      }
      return;
    }
    case 6: {
      ImplicitConvGemm pr{a.os.c / p.groups, a.n * a.os.h * a.os.w, (a.is.c / p.groups) * p.kh * p.kw, g, a.w, a.in, a.bias, a.out};
      launch_gemm_auto(pr, p.groups, s);
      break;
    }
    default:
      fail("--conv-variant", "v" + std::to_string(version) + " is not one of conv_basic.cu's versions (internal)");
  }
  CUDA_CHECK_LAUNCH();
}

}  // namespace detail

void register_conv_basic(Registry& r) {
  static const ImplHooks hooks{.conv_forward = detail::basic_forward};
  auto add = [&](int v, const char* name, const char* summary, const char* shapes, bool texture = false) {
    Impl i = cuda_impl(LayerKind::conv, v, name, summary, &hooks);
    i.shapes = shapes;
    i.texture = texture;
    i.supports = [v](const Layer& l, const Epilogue& e) { return detail::basic_supports(v, l, e); };
    if (v == 5) i.workspace_floats = [](const Layer& l, Shape, int n, Precision) { return detail::basic_workspace_floats(5, l, n); };
    r.add(std::move(i));
  };
  add(1, "direct", "one thread per output, weights in global memory", "any");
  add(2, "smem-tile", "16x16 output tile per block, input tile staged in shared memory", "any (input tile <= 96 rows)");
  add(4, "texture", "weights through a texture object (read-only cache)", "any (weights < 2^27)", true);
  add(5, "unroll-gemm", "im2col kernel + tiled shared-memory SGEMM", "any");
  add(6, "implicit-gemm", "unroll fused into a register-tiled SGEMM (64x64 tiles, 4x4 per thread)", "any");
}

}  // namespace bs::cuda
