// Convolution versions v72 / v73 (wgmma-half-halo, wgmma-half-halo-128): the 16-bit wgmma convolution for short K
// (conv1 after v38's space-to-depth rewrite: 3 x 3 taps over 48 channels, K = 432) with the input read once a tile
// instead of once a tap, and the weights read once a block.
//
// Why: the im2col versions (v65, v67) copy every pixel's whole window into shared memory for every output pixel: 128 x 432
// values a 128-pixel tile, where the tile's input is its few input rows (a 3 x 3 window reads each input pixel 9 times).
// On AlexNet's conv1 at 1,024 images v65 ran at 31 % of the tensor pipe, its copies (lg_throttle) the first stall
// (experiments/precision-half.md, "The 16-bit wgmma epilogue, FastDiv, v65"; "TMA loads ...").
//
// What: a persistent block holds its filters' weights for the whole of K in shared memory (B: K-major words, the
// 128-byte swizzle, one 64-value block of k after another: the stages of the other versions laid end to end), loaded
// once. Per tile of BM consecutive output pixels it copies the input rows the tile's windows cover into shared memory,
// whole rows of the padded image (the halo, zeros outside the image), 16 bytes a cp.async, while the tile before is
// being multiplied; and A reaches the tensor cores from registers: each warp's 16 rows x 16 k of a k step come by one
// ldmatrix.x4 whose lanes give the rows' addresses in the halo (a pixel's place plus the tap's offset), which is the
// im2col gather done by the address, for free. wgmma m64n96k16 with A from registers, B by descriptor.
// The k steps are v39's in v39's order (k = (ky, kx, c), 16 values a step), with no step past K: the same sums as v65
// to the bit wherever v65 does not split K (its padding steps add zero products). The epilogue is the other versions'
// (wgmma_half_problem.cuh).
//   v72 wgmma-half-halo      256 pixels x 96 filters on four warpgroups (512 threads), one block a multiprocessor
//   v73 wgmma-half-halo-128  128 pixels x 96 filters on two warpgroups (for grids of few tiles)
// They need a multiple of 16 channels per group as stored (a k step within one tap) and the weights of 96 filters for
// the whole of K, with two halos, in one block's shared memory: K up to about 600 (wgmma_halo_limits says so in one line).
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <map>
#include <mutex>
#include <string>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/engine/fast_div.hpp"
#include "kernels/cuda/engine/gemm_wgmma.cuh"
#include "kernels/cuda/half/wgmma_half_problem.cuh"
#include "kernels/cuda/impl_hooks.hpp"
#include "weights_tools/error.hpp"

namespace bs::cuda::half {
namespace {

constexpr int kHaloBN = 96;
constexpr size_t kMaxSmem = 232448;  // a block's dynamic shared memory on compute capability 9.0 (227 KB)

// The halo's geometry: a tile's windows read virtual rows V = img * hv + oy sh + ky dh of the images' padded windows
// (row iy = V - img hv - ph of image img) and virtual columns u = ox sw + kx dw (ix = u - pw).
struct HaloGeometry {
  int hv, wv;           // virtual rows and columns of one image's padded window
  int span;             // the most virtual rows a tile's windows cover (the halo's rows)
  int pstride;          // bytes a pixel in the halo: its channels, plus 16 where that makes an even count of 16-byte
                        // chunks (so that ldmatrix's 8 rows of consecutive pixels fall in 8 different bank groups)
  int chunks;           // 16-byte chunks a pixel: cgs / 8
  size_t halo_bytes;    // one halo buffer
  size_t b_bytes;       // the block's weights: kw_pad / 32 blocks of 96 rows x 128 bytes
  int steps_words;      // the step table: a word a k step, rounded up to 4
  size_t smem;          // both halos, the weights, the step table, 96 biases, and 1 KB to align the first swizzle atom
};

HaloGeometry halo_geometry(const ConvParams& c, Shape os, const HalfConvGeometry& g, int bm) {
  HaloGeometry h;
  h.hv = (os.h - 1) * c.sh + (c.kh - 1) * c.dh + 1;
  h.wv = (os.w - 1) * c.sw + (c.kw - 1) * c.dw + 1;
  // BM consecutive pixels touch at most `rows` output rows; each image boundary inside the tile adds the rows between
  // one image's last window and the next one's first.
  const int rows = (bm - 1 + os.w - 1) / os.w + 1;
  const int p = os.h * os.w, bounds = (bm - 2) / p + 1;
  const int extra = std::max(0, (c.kh - 1) * c.dh + 1 - c.sh);
  h.span = (rows - 1) * c.sh + (c.kh - 1) * c.dh + 1 + bounds * extra;
  h.chunks = g.cgs / 8;
  h.pstride = 16 * (h.chunks + (h.chunks % 2 == 0 ? 1 : 0));
  h.halo_bytes = (static_cast<size_t>(h.span) * h.wv * h.pstride + 127) / 128 * 128;
  h.b_bytes = static_cast<size_t>(g.kw_pad / 32) * kHaloBN * 128;
  h.steps_words = (c.kh * c.kw * (g.cgs / 16) + 3) / 4 * 4;
  h.smem = 1024 + h.b_bytes + 2 * h.halo_bytes + 4 * static_cast<size_t>(h.steps_words) + 4 * kHaloBN;
  return h;
}

template <bool BF16>
struct HaloProblem : WgHalfProblem<BF16> {
  int n_img;                 // images
  int kh, kwid, dh, dw;
  int hv, wv, pstride, chunks;
  int cpt, ksteps, kblocks;  // k steps a tap (cgs / 16), in K, and 64-value blocks of k (kw_pad / 32)
  int halo_bytes, b_bytes, steps_words;  // shared memory: the halo, the weights, the step table (a multiple of 4 words)
  int tiles;                 // BM-pixel tiles over the batch
  FastDiv wv_div, hv_div;
};

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
__device__ __forceinline__ void ldmatrix4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
// Keeps the compiler from giving the registers of an A fragment a wgmma still reads to anything else before this point.
__device__ __forceinline__ void keep(uint32_t (&r)[4]) {
#pragma unroll
  for (int i = 0; i < 4; ++i) asm volatile("" : "+r"(r[i])::"memory");
}
#endif

// The first virtual row of pixel m's window.
template <bool BF16>
__device__ __forceinline__ int halo_first_row(const HaloProblem<BF16>& pr, long long m) {
  const int img = static_cast<int>(pr.p_div.div(static_cast<uint32_t>(m))), q = static_cast<int>(m) - img * pr.p;
  const int oy = static_cast<int>(pr.ow_div.div(static_cast<uint32_t>(q)));
  return img * pr.hv + oy * pr.sh;
}

// The virtual rows of tile t's windows into the halo at dst, 16 bytes a copy (zeros outside the images): thread tid
// copies chunk c = tid % chunks of pixels pix0 = tid / chunks, pix0 + THREADS / chunks, ... (the last THREADS % chunks
// threads idle), so that a copy's address takes two divisions.
template <class T, bool BF16>
__device__ __forceinline__ void load_halo(const HaloProblem<BF16>& pr, int t, uint32_t dst, const float* in, int pix0, int c) {
  const long long m0 = static_cast<long long>(t) * T::BM, m1 = min(m0 + T::BM, static_cast<long long>(pr.ncols)) - 1;
  const int va = halo_first_row(pr, m0), pixels = (halo_first_row(pr, m1) + (pr.kh - 1) * pr.dh - va + 1) * pr.wv;
  const int pix_step = T::THREADS / pr.chunks;
  for (int pix = pix0; pix < pixels; pix += pix_step) {
    const int vr = static_cast<int>(pr.wv_div.div(static_cast<uint32_t>(pix))), u = pix - vr * pr.wv;
    const int v = va + vr, img = static_cast<int>(pr.hv_div.div(static_cast<uint32_t>(v)));
    const int iy = v - img * pr.hv - pr.ph, ix = u - pr.pw;
    const bool ok = img < pr.n_img && static_cast<unsigned>(iy) < static_cast<unsigned>(pr.h) && static_cast<unsigned>(ix) < static_cast<unsigned>(pr.w);
    const float* src = ok ? in + (static_cast<long long>(img) * pr.hwc + (static_cast<long long>(iy) * pr.w + ix) * pr.cs + 4 * c) : pr.in;
    wg::cp_async16(dst + static_cast<uint32_t>(pix * pr.pstride + 16 * c), src, ok);
  }
}

template <class T, bool BF16>
__global__ void __launch_bounds__(T::THREADS, 1) halo_kernel(const __grid_constant__ HaloProblem<BF16> pr) {
#ifdef BS_HAVE_WGMMA
  extern __shared__ __align__(1024) uint8_t smem[];
  uint8_t* const aligned = smem + (((gemm::smem_u32(smem) + 1023u) & ~1023u) - gemm::smem_u32(smem));
  const uint32_t b_base = gemm::smem_u32(aligned), halo0 = b_base + static_cast<uint32_t>(pr.b_bytes);
  const uint32_t halo_bytes = static_cast<uint32_t>(pr.halo_bytes);
  const auto halo = [&](int b) { return halo0 + static_cast<uint32_t>(b) * halo_bytes; };
  // After the halos: each k step's A offset from a pixel's place (its tap's rows and columns, its 16-channel slice),
  // then the block's 96 biases (-0 where there is none).
  uint32_t* const steps = reinterpret_cast<uint32_t*>(aligned + pr.b_bytes + 2 * pr.halo_bytes);
  float* const sbias = reinterpret_cast<float*>(steps + pr.steps_words);
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32, wgi = warp / 4;
  const int group = blockIdx.z, n0 = blockIdx.y * kHaloBN;
  int t = blockIdx.x;
  if (t >= pr.tiles) return;
  const int ksteps = pr.ksteps;
  for (int s = tid; s < ksteps; s += T::THREADS) {
    const int tap = s / pr.cpt, cc = s - tap * pr.cpt, ky = tap / pr.kwid, kx = tap - ky * pr.kwid;
    steps[s] = static_cast<uint32_t>((ky * pr.dh * pr.wv + kx * pr.dw) * pr.pstride + 32 * cc);
  }
  for (int r = tid; r < kHaloBN; r += T::THREADS) sbias[r] = pr.o.bias && n0 + r < pr.mg ? pr.o.bias[group * pr.mg + n0 + r] : -0.0f;

  // The block's weights for the whole of K: 64-value block kb of filter row r at b_base + kb 96 128 + r 128, its 16-byte
  // chunks swizzled as the stages of the other versions (load_b in wgmma_conv_loads.cuh); filters past the group's
  // read as zeros.
  {
    const int total = pr.kblocks * kHaloBN * 8;
    for (int i = tid; i < total; i += T::THREADS) {
      const int c = i % 8, r = (i / 8) % kHaloBN, kb = i / (8 * kHaloBN);
      const bool ok = n0 + r < pr.mg;
      const float* src = ok ? pr.wt + ((static_cast<long long>(group) * pr.mg + n0 + r) * pr.k_pad + kb * 32 + 4 * c) : pr.wt;
      wg::cp_async16(b_base + static_cast<uint32_t>(kb * kHaloBN * 128) + wg::sw_chunk(r, c), src, ok);
    }
  }
  const float* in = pr.in + group * pr.cg;
  const int chunk = tid % pr.chunks, pix0 = tid < T::THREADS / pr.chunks * pr.chunks ? tid / pr.chunks : INT_MAX;
  load_halo<T>(pr, t, halo(0), in, pix0, chunk);
  gemm::cp_async_commit();

  const uint64_t db0 = wg::desc_sw128(b_base);
  const int row = wgi * 64 + (warp % 4) * 16 + (lane % 8) + 8 * ((lane / 8) % 2);  // this lane's A row for ldmatrix
  const uint32_t khalf = 16u * static_cast<uint32_t>(lane / 16);                      // and its 8-value half of the k step
  const int g = lane / 4, tq = lane % 4;
  const long long ncols = pr.ncols;
  int buf = 0;
  for (; t < pr.tiles; t += gridDim.x) {
    gemm::cp_async_wait<0>();  // this tile's halo (and the weights) have landed, for this thread's copies
    wg::fence_proxy_async();   // the weights visible to the tensor cores (the halo goes through ldmatrix)
    __syncthreads();           // everyone's (and the step table and biases); every warp is done reading the other halo
    if (t + static_cast<int>(gridDim.x) < pr.tiles) load_halo<T>(pr, t + gridDim.x, halo(buf ^ 1), in, pix0, chunk);
    gemm::cp_async_commit();

    const long long m0 = static_cast<long long>(t) * T::BM, m = m0 + row;
    const int va = halo_first_row(pr, m0);
    uint32_t rowaddr = halo(buf) + khalf;  // rows past the batch read anything in the halo: the epilogue drops them
    if (m < ncols) {
      const int img = static_cast<int>(pr.p_div.div(static_cast<uint32_t>(m))), q = static_cast<int>(m) - img * pr.p;
      const int oy = static_cast<int>(pr.ow_div.div(static_cast<uint32_t>(q))), ox = q - oy * pr.ow;
      rowaddr += static_cast<uint32_t>(((img * pr.hv + oy * pr.sh - va) * pr.wv + ox * pr.sw) * pr.pstride);
    }
    float acc[1][kHaloBN / 2];
#pragma unroll
    for (int i = 0; i < kHaloBN / 2; ++i) acc[0][i] = 0.0f;
    // Two A fragments in turn: step j's products are issued from one while step j + 1's ldmatrix fills the other, once
    // step j - 1's products (the last to read it) are done. (With each step's ldmatrix and its wgmma under separate
    // conditions, ptxas could not see that the fragment was not redefined while a wgmma read it, and serialized every
    // wgmma: C7513.)
    uint32_t a0[4], a1[4], a2[4];
    ldmatrix4(a0, rowaddr + steps[0]);
    if (ksteps > 1) ldmatrix4(a1, rowaddr + steps[1]);
    const auto mma = [&](uint32_t(&a)[4], int j) {
      wg::fence_operands(acc);
      wg::wgmma_fence();
      wg::WgmmaHalfRs<kHaloBN, BF16>::mma(acc[0], a, db0 + static_cast<uint64_t>((j / 4) * (kHaloBN * 128 / 16) + (j % 4) * 2));
      wg::wgmma_commit();
    };
#pragma unroll 1  // peeled or unrolled, the loop's fragments reach its wgmmas by paths ptxas serializes (C7513)
    for (int s = 0; s < ksteps; s += 3) {
      mma(a0, s);
      if (s > 0) {
        wg::wgmma_wait<1>();  // step s - 1's products are done: a2 is free
        keep(a2);
      }
      if (s + 2 < ksteps) ldmatrix4(a2, rowaddr + steps[s + 2]);
      if (s + 1 < ksteps) {
        mma(a1, s + 1);
        wg::wgmma_wait<1>();  // step s's: a0 is free
        keep(a0);
        if (s + 3 < ksteps) ldmatrix4(a0, rowaddr + steps[s + 3]);
        if (s + 2 < ksteps) {
          mma(a2, s + 2);
          wg::wgmma_wait<1>();  // step s + 1's: a1 is free
          keep(a1);
          if (s + 4 < ksteps) ldmatrix4(a1, rowaddr + steps[s + 4]);
        }
      }
    }
    wg::wgmma_wait<0>();
    wg::fence_operands(acc);
    keep(a0);
    keep(a1);
    keep(a2);
    pr.template store_tile<T>(acc, group, 0, m0 + wgi * 64 + (warp % 4) * 16 + g, n0 + 2 * tq, sbias + 2 * tq);
    buf ^= 1;
  }
  gemm::cp_async_wait<0>();
#endif
}

template <bool BF16>
constexpr int kT = kType<BF16>;

// f.template operator()<T, BF16>(): T names the tile for the epilogue (BM rows over WG warpgroups, one piece of 64 rows
// each, 96 columns).
template <bool BF16, class F>
void with_tile(int version, F&& f) {
  switch (version) {
    case 72: return f.template operator()<wg::WgTile<kHaloBN, 3, 256, 4, 1, kT<BF16>>, BF16>();
    case 73: return f.template operator()<wg::WgTile<kHaloBN, 3, 128, 2, 1, kT<BF16>>, BF16>();
    default: fail("--conv-variant", "version " + std::to_string(version) + " is not a halo wgmma version");
  }
}
template <class F>
void with_config(int version, bool bf16, F&& f) {
  if (bf16) with_tile<true>(version, f);
  else with_tile<false>(version, f);
}
int bm_of(int version) { return version == 72 ? 256 : 128; }

// The multiprocessors and the blocks each holds at this much shared memory (asked once per instantiation and size). The
// kernel's limit is raised to the most a block can have, once, so that every layer's launch fits whatever size came first.
template <class T, bool BF16>
Occupancy halo_occupancy(size_t smem) {
  static std::mutex mu;
  static std::map<size_t, Occupancy> known;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = known.find(smem); it != known.end()) return it->second;
  Occupancy occ = kernel_occupancy(halo_kernel<T, BF16>, T::THREADS, kMaxSmem);
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ.per_sm, halo_kernel<T, BF16>, T::THREADS, smem));
  occ.per_sm = std::max(1, occ.per_sm);
  return known[smem] = occ;
}

template <class T, bool BF16>
void run(const HalfConvArgs& a, const HalfConvGeometry& g, cudaStream_t s) {
  const ConvParams& c = *a.p;
  const HaloGeometry h = halo_geometry(c, a.os, g, T::BM);
  HaloProblem<BF16> pr;
  fill_wg_half_problem(pr, a, g, 1);
  pr.n_img = a.n;
  pr.kh = c.kh;
  pr.kwid = c.kw;
  pr.dh = c.dh;
  pr.dw = c.dw;
  pr.hv = h.hv;
  pr.wv = h.wv;
  pr.pstride = h.pstride;
  pr.chunks = h.chunks;
  pr.cpt = g.cgs / 16;
  pr.ksteps = c.kh * c.kw * pr.cpt;
  pr.kblocks = g.kw_pad / 32;
  pr.halo_bytes = static_cast<int>(h.halo_bytes);
  pr.b_bytes = static_cast<int>(h.b_bytes);
  pr.steps_words = h.steps_words;
  pr.tiles = static_cast<int>((g.ncols + T::BM - 1) / T::BM);
  pr.wv_div = FastDiv(static_cast<uint32_t>(h.wv));
  pr.hv_div = FastDiv(static_cast<uint32_t>(h.hv));
  const int ny = (g.mg + kHaloBN - 1) / kHaloBN;
  const long long wave = halo_occupancy<T, BF16>(h.smem).wave();
  const long long x = std::max(1LL, std::min<long long>(pr.tiles, (wave + ny * g.groups - 1) / (ny * g.groups)));
  const dim3 grid(static_cast<unsigned>(x), static_cast<unsigned>(ny), static_cast<unsigned>(g.groups));
  halo_kernel<T, BF16><<<grid, T::THREADS, h.smem, s>>>(pr);
  CUDA_CHECK_LAUNCH();
}

bool device_can_run() {
  static const bool ok = wg::wgmma_image_ok(halo_kernel<wg::WgTile<kHaloBN, 3, 128, 2, 1, wg::kF16>, false>);
  return ok;
}

}  // namespace

Support wgmma_halo_limits(int version, const Layer& layer) {
  const std::string v = "v" + std::to_string(version);
  const ConvParams& c = std::get<ConvParams>(layer.op);
  const HalfConvGeometry g = half_conv_geometry(layer.in, c, layer.out, 1);
  if (g.cgs % 16 != 0)
    return {false, v + " takes 16 channels a k step within one tap: it needs a multiple of 16 channels " +
                       (c.groups > 1 ? "per group (this layer has " + std::to_string(g.cg) + ")"
                                     : "as stored (this layer has " + std::to_string(g.cgs) + ")")};
  const HaloGeometry h = halo_geometry(c, layer.out, g, bm_of(version));
  if (h.smem > kMaxSmem)
    return {false, v + " holds 96 filters' weights for the whole of K and two halos of input rows in one block's shared memory: this layer needs " +
                       std::to_string((h.smem + 1023) / 1024) + " KB of 227"};
  if (!device_can_run()) return {false, v + " needs wgmma: a compute capability 9.0 GPU and a build for sm_90 (kernels/CMakeLists.txt adds sm_90a)"};
  return {};
}

void wgmma_halo_forward(int version, const HalfConvArgs& a, cudaStream_t s) {  // after wgmma_half_forward's checks
  const HalfConvGeometry g = half_conv_geometry(a.is, *a.p, a.os, a.n);
  if (static_cast<long long>(a.n) * halo_geometry(*a.p, a.os, g, bm_of(version)).hv >= INT_MAX / 2)
    fail("layer convolution", "batch too large for the halo versions' 32-bit row indices");
  with_config(version, a.bf16, [&]<class T, bool BF16>() { run<T, BF16>(a, g, s); });
}

}  // namespace bs::cuda::half
