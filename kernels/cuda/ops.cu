#include <cfloat>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/gemm_core.cuh"
#include "kernels/cuda/ops.hpp"
#include "weights_tools/error.hpp"

namespace bs::cuda {
namespace {

unsigned blocks_for(long long n, int threads) {
  return static_cast<unsigned>(std::min<long long>((n + threads - 1) / threads, 1 << 24));
}

__global__ void activation_kernel(float* x, long long count, int act) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const float v = x[i];
    x[i] = act == 0 ? fmaxf(v, 0.0f) : act == 1 ? tanhf(v) : 1.0f / (1.0f + expf(-v));
  }
}

// One thread per output; max ignores padding, avg divides by the window clipped to the padded input (Caffe).
__global__ void pool_kernel(const float* __restrict__ in, int n, Shape is, PoolParams p, Shape os,
                            float* __restrict__ out) {
  const long long total = static_cast<long long>(n) * os.c * os.h * os.w;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const int ox = i % os.w, oy = (i / os.w) % os.h;
    const long long bc = i / (static_cast<long long>(os.w) * os.h);  // image * C + channel
    int y0 = oy * p.sh - p.ph, x0 = ox * p.sw - p.pw;
    int y1 = min(y0 + p.kh, is.h + p.ph), x1 = min(x0 + p.kw, is.w + p.pw);
    const int window = (y1 - y0) * (x1 - x0);
    y0 = max(y0, 0); x0 = max(x0, 0); y1 = min(y1, is.h); x1 = min(x1, is.w);
    const float* src = in + bc * is.h * is.w;
    float acc = p.kind == PoolKind::max ? -FLT_MAX : 0.0f;
    for (int y = y0; y < y1; ++y)
      for (int x = x0; x < x1; ++x) acc = p.kind == PoolKind::max ? fmaxf(acc, src[y * is.w + x]) : acc + src[y * is.w + x];
    out[i] = p.kind == PoolKind::max ? acc : acc / window;
  }
}

__global__ void lrn_kernel(const float* __restrict__ in, int n, Shape s, LrnParams p, float* __restrict__ out) {
  const long long plane = static_cast<long long>(s.h) * s.w;
  const long long total = static_cast<long long>(n) * s.c * plane;
  const int half = p.size / 2;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long px = i % plane;
    const int c = (i / plane) % s.c;
    const long long base = (i / (plane * s.c)) * s.c * plane + px;
    float sum = 0.0f;
    for (int j = max(0, c - half); j <= min(s.c - 1, c + half); ++j) {
      const float v = in[base + j * plane];
      sum = fmaf(v, v, sum);
    }
    out[i] = in[i] * powf(p.k + p.alpha / p.size * sum, -p.beta);
  }
}

// One block per image: max, sum of exponentials, normalise.
__global__ void softmax_kernel(const float* __restrict__ in, int features, float* __restrict__ out) {
  __shared__ float red[32];
  const float* x = in + static_cast<long long>(blockIdx.x) * features;
  float* y = out + static_cast<long long>(blockIdx.x) * features;
  auto block_reduce = [&](float v, bool is_max) {
    for (int o = 16; o > 0; o >>= 1) {
      const float other = __shfl_xor_sync(0xffffffffu, v, o);
      v = is_max ? fmaxf(v, other) : v + other;
    }
    if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
      v = threadIdx.x < blockDim.x / 32 ? red[threadIdx.x] : (is_max ? -FLT_MAX : 0.0f);
      for (int o = 16; o > 0; o >>= 1) {
        const float other = __shfl_xor_sync(0xffffffffu, v, o);
        v = is_max ? fmaxf(v, other) : v + other;
      }
      if (threadIdx.x == 0) red[0] = v;
    }
    __syncthreads();
    const float r = red[0];
    __syncthreads();
    return r;
  };
  float mx = -FLT_MAX;
  for (int i = threadIdx.x; i < features; i += blockDim.x) mx = fmaxf(mx, x[i]);
  mx = block_reduce(mx, true);
  float sum = 0.0f;
  for (int i = threadIdx.x; i < features; i += blockDim.x) sum += expf(x[i] - mx);
  sum = block_reduce(sum, false);
  for (int i = threadIdx.x; i < features; i += blockDim.x) y[i] = expf(x[i] - mx) / sum;
}

__global__ void fc_naive_kernel(const float* __restrict__ in, int n, int inputs, const float* __restrict__ w,
                                const float* __restrict__ bias, int outputs, float* __restrict__ out) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<long long>(n) * outputs) return;
  const int o = i % outputs, b = i / outputs;
  const float* x = in + static_cast<long long>(b) * inputs;
  const float* wr = w + static_cast<long long>(o) * inputs;
  float acc = bias ? bias[o] : 0.0f;
  for (int k = 0; k < inputs; ++k) acc = fmaf(x[k], wr[k], acc);
  out[i] = acc;
}

__global__ void fc_texture_kernel(const float* __restrict__ in, int n, int inputs, cudaTextureObject_t wtex,
                                  const float* __restrict__ bias, int outputs, float* __restrict__ out) {
  const long long warp = (blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (warp >= static_cast<long long>(n) * outputs) return;
  const int o = warp % outputs, b = warp / outputs;
  const float* x = in + static_cast<long long>(b) * inputs;
  float acc = 0.0f;
  for (int k = lane; k < inputs; k += 32) acc = fmaf(x[k], tex1Dfetch<float>(wtex, static_cast<int>(o) * inputs + k), acc);
  for (int off = 16; off > 0; off >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, off);
  if (lane == 0) out[warp] = acc + (bias ? bias[o] : 0.0f);
}

struct FcGemm {  // C(b, o) = in(b, k) x W(o, k)^T + bias(o)
  static constexpr bool b_k_fastest = true;
  int M, N, K;
  const float* in;
  const float* w;
  const float* bias;
  float* out;
  __device__ float a(int, int m, int k) const { return in[static_cast<long long>(m) * K + k]; }
  __device__ float b(int, int k, int n) const { return w[static_cast<long long>(n) * K + k]; }
  __device__ void store(int, int m, int n, float v) const {
    out[static_cast<long long>(m) * N + n] = v + (bias ? bias[n] : 0.0f);
  }
};

}  // namespace

void activation_forward(float* x, long long count, Act act, cudaStream_t s) {
  const int a = act == Act::relu ? 0 : act == Act::tanh ? 1 : 2;
  activation_kernel<<<blocks_for(count, 256), 256, 0, s>>>(x, count, a);
  CUDA_CHECK_LAUNCH();
}

void pool_forward(const float* in, int n, Shape is, const PoolParams& p, Shape os, float* out, cudaStream_t s) {
  pool_kernel<<<blocks_for(static_cast<long long>(n) * os.size(), 256), 256, 0, s>>>(in, n, is, p, os, out);
  CUDA_CHECK_LAUNCH();
}

void lrn_forward(const float* in, int n, Shape sh, const LrnParams& p, float* out, cudaStream_t s) {
  lrn_kernel<<<blocks_for(static_cast<long long>(n) * sh.size(), 256), 256, 0, s>>>(in, n, sh, p, out);
  CUDA_CHECK_LAUNCH();
}

void softmax_forward(const float* in, int n, int features, float* out, cudaStream_t s) {
  softmax_kernel<<<n, 256, 0, s>>>(in, features, out);
  CUDA_CHECK_LAUNCH();
}

const std::vector<FcVersion>& fc_versions() {
  static const std::vector<FcVersion> v = {{1, "naive"}, {2, "tiled"}, {3, "texture"}};
  return v;
}

int parse_fc_variant(const std::string& text) {
  std::string t = text;
  if (!t.empty() && (t[0] == 'v' || t[0] == 'V')) t = t.substr(1);
  for (const FcVersion& v : fc_versions())
    if (t == std::to_string(v.number) || text == v.name) return v.number;
  fail("--fc-variant", "unknown variant '" + text + "' (choose one of: 1 naive, 2 tiled, 3 texture)");
}

void fc_forward(int version, const float* in, int n, int inputs, const float* w, cudaTextureObject_t wtex,
                const float* bias, int outputs, float* out, cudaStream_t s) {
  const long long total = static_cast<long long>(n) * outputs;
  if (version == 1) {
    fc_naive_kernel<<<blocks_for(total, 256), 256, 0, s>>>(in, n, inputs, w, bias, outputs, out);
  } else if (version == 3) {
    fc_texture_kernel<<<blocks_for(total * 32, 256), 256, 0, s>>>(in, n, inputs, wtex, bias, outputs, out);
  } else {
    launch_gemm_auto(FcGemm{n, outputs, inputs, in, w, bias, out}, 1, s);
  }
  CUDA_CHECK_LAUNCH();
}

}  // namespace bs::cuda
