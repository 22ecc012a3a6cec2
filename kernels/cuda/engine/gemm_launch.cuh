// Launching the GEMM engine (gemm_engine.cuh): shared-memory limits, how many blocks fit, and how many ways
// to split K so that a small problem still fills the GPU.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/engine/epilogue.cuh"
#include "kernels/cuda/engine/gemm_engine.cuh"

namespace bs::cuda::gemm {

// The engine kernel's occupancy, once per instantiation (the statics are per template).
template <class T, class Math, class Problem>
const Occupancy& engine_occupancy() {
  static const Occupancy occ = kernel_occupancy(engine_kernel<T, Math, Problem>, T::THREADS, engine_smem_bytes<T, Problem>());
  return occ;
}

// Split-K: when the tiles alone fill less than one wave, split the K loop so that they fill about one,
// keeping at least 4 k-tiles per split (fewer leave the pipeline nothing to overlap).
inline int choose_splits(long long blocks, int k_tiles, const Occupancy& occ) {
  if (blocks >= occ.wave()) return 1;
  const long long want = occ.wave() / std::max<long long>(1, blocks);
  return static_cast<int>(std::max<long long>(1, std::min<long long>(want, k_tiles / 4)));
}
// A launch in clusters of `size` blocks along z (the splits of a tile) of a kernel with `threads` threads and `smem`
// bytes of dynamic shared memory; attr is the attribute storage the configuration points to.
inline cudaLaunchConfig_t cluster_config(dim3 grid, int threads, size_t smem, int size, cudaStream_t s, cudaLaunchAttribute& attr) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = dim3(static_cast<unsigned>(threads));
  cfg.dynamicSmemBytes = smem;
  cfg.stream = s;
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = 1;
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = static_cast<unsigned>(size);
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  return cfg;
}
// How many clusters of `size` blocks of `kernel` the GPU holds at once (cudaOccupancyMaxActiveClusters: a cluster's
// blocks share one GPC, so this is below blocks per wave / size where the GPCs' multiprocessors do not divide evenly).
// The kernel's shared-memory limit must already allow smem.
template <class Kernel>
int active_clusters(Kernel kernel, int threads, size_t smem, int size) {
  cudaLaunchAttribute attr;
  const cudaLaunchConfig_t cfg = cluster_config(dim3(1, 1, static_cast<unsigned>(size)), threads, smem, size, nullptr, attr);
  int n = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveClusters(&n, kernel, &cfg));
  return std::max(1, n);
}
// Split-K reduced in a cluster, at most `want` ways and max_cluster, keeping at least 2 k-tiles per split (nothing
// waits on a second kernel or on partial sums in DRAM, so shorter splits pay: a batch of one image is a few tiles, each
// latency-bound), and no more than keep every tile's cluster in the first wave (clusters(s): how many clusters of s
// blocks the GPU holds): a cluster that waits for a second wave costs what the split saved (measured on the H100:
// AlexNet conv3 at 8 images, 66 tiles in clusters of 6, 1.4x v21's time).
template <class Clusters>
int cluster_splits_upto(long long want, int max_cluster, long long blocks, int k_tiles, Clusters&& clusters) {
  for (int s = static_cast<int>(std::min<long long>({want, static_cast<long long>(max_cluster), k_tiles / 2LL})); s >= 2; --s)
    if (blocks <= clusters(s)) return s;
  return 1;
}
// The GEMM engines' split: as many ways as fill one wave.
template <class Clusters>
int cluster_splits(const Occupancy& occ, int max_cluster, long long blocks, int k_tiles, Clusters&& clusters) {
  if (blocks >= occ.wave()) return 1;
  return cluster_splits_upto(occ.wave() / std::max<long long>(1, blocks), max_cluster, blocks, k_tiles, clusters);
}
// Floats of split-K partial sums a launch needs in its workspace: none where the splits are reduced in a cluster.
template <class T>
size_t splitk_workspace_floats(int splits, int groups, int mg, long long ncols) {
  return T::CLUSTER == 0 && splits > 1 ? static_cast<size_t>(splits) * groups * mg * ncols : 0;
}
// active_clusters of Kernel, asked once per size (1 to MAX) and cached: both mainloops' cluster versions (this engine's
// max_active_clusters, gemm_wgmma.cuh's wgmma_splits).
template <auto Kernel, int MAX>
int cached_active_clusters(int threads, size_t smem, int size) {
  static std::atomic<int> cache[MAX + 1] = {};  // 0: not asked yet (a benign race: every thread finds the same)
  if (size < 1 || size > MAX) return 0;
  if (!cache[size].load()) cache[size].store(active_clusters(Kernel, threads, smem, size));
  return cache[size].load();
}
// How many clusters of `size` blocks of the engine kernel the GPU holds at once, cached per size.
template <class T, class Math, class Problem>
int max_active_clusters(int size) {
  (void)engine_occupancy<T, Math, Problem>();  // sets the shared-memory limit
  return cached_active_clusters<engine_kernel<T, Math, Problem>, T::CLUSTER>(T::THREADS, engine_smem_bytes<T, Problem>(), size);
}
template <class T, class Math, class Problem>
int choose_cluster_splits(long long blocks, int k_tiles) {
  return cluster_splits(engine_occupancy<T, Math, Problem>(), T::CLUSTER, blocks, k_tiles,
                        [](int s) { return max_active_clusters<T, Math, Problem>(s); });
}
// The split count of a tile: through clusters or through a workspace.
template <class T, class Math, class Problem>
int engine_splits(long long blocks, int k_tiles) {
  if constexpr (T::CLUSTER > 0) return choose_cluster_splits<T, Math, Problem>(blocks, k_tiles);
  else return choose_splits(blocks, k_tiles, engine_occupancy<T, Math, Problem>());
}

// Whether `kernel` can run in clusters here: a device that launches clusters (compute capability 9.0 on) and an image of
// the kernel built for it (an sm_80 build compiles a cluster reduction to a trap).
inline bool cluster_image_ok(const void* kernel) {
  int dev = 0, cluster = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&cluster, cudaDevAttrClusterLaunch, dev) != cudaSuccess) return false;
  cudaFuncAttributes fa{};
  return cluster != 0 && cudaFuncGetAttributes(&fa, kernel) == cudaSuccess && fa.binaryVersion >= 90;
}
// The same for the engine kernel of a cluster version, asked once.
template <class T, class Math, class Problem>
bool cluster_launch_ok() {
  static const bool ok = cluster_image_ok(reinterpret_cast<const void*>(engine_kernel<T, Math, Problem>));
  return ok;
}

template <class T, class Math, class Problem>
void launch_engine(const Problem& pr, int m, int n, int groups, cudaStream_t s) {
  (void)engine_occupancy<T, Math, Problem>();  // sets the shared-memory limit
  const unsigned mt = static_cast<unsigned>((m + T::BM - 1) / T::BM), nt = static_cast<unsigned>((n + T::BN - 1) / T::BN);
  const dim3 grid(m_on_x<Problem>() ? mt : nt, m_on_x<Problem>() ? nt : mt, groups * pr.splits);
  if (T::CLUSTER > 0 && pr.splits > 1) {  // the splits of a tile: consecutive z, one cluster
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t cfg = cluster_config(grid, T::THREADS, engine_smem_bytes<T, Problem>(), pr.splits, s, attr);
    CUDA_CHECK(cudaLaunchKernelEx(&cfg, engine_kernel<T, Math, Problem>, pr));
    return;
  }
  engine_kernel<T, Math, Problem><<<grid, T::THREADS, engine_smem_bytes<T, Problem>(), s>>>(pr);
  CUDA_CHECK_LAUNCH();
}

// The engine instantiations that have menu numbers (conv v12-v15, fc v6-v9).
using TileL_Fma = Tile<128, 128, 32, 4, 2, 3, 2>;   // warp 32x64: 8x8 outputs per thread
using TileL_Mma = Tile<128, 128, 32, 2, 4, 4, 1>;   // warp 64x32: 4 x 4 m16n8 pieces; two accumulator sets: one block per SM
using TileM_Mma = Tile<128, 64, 32, 4, 2, 4, 2>;    // warp 32x32: two blocks per SM
using TileS_Mma = Tile<64, 64, 32, 2, 2, 4, 3>;     // warp 32x32, for problems too small for larger tiles
// The half-precision convolutions' tiles (conv v19-v21): A (the implicit im2col) row-major, see Tile.
using TileL_Half = Tile<128, 128, 32, 2, 4, 4, 1, true>;
using TileM_Half = Tile<128, 64, 32, 4, 2, 4, 2, true>;
using TileS_Half = Tile<64, 64, 32, 2, 2, 4, 3, true>;
// Small batches (conv v48-v50): the 64x64 tiles with split-K reduced in clusters of up to 8 blocks.
using TileS_MmaC = Tile<64, 64, 32, 2, 2, 4, 3, false, 8>;
using TileS_HalfC = Tile<64, 64, 32, 2, 2, 4, 3, true, 8>;
// conv v64: v49's tile with A as its prepared 3xTF32 fragments (hi and lo: A's stage twice the floats, 106 KB for 4 stages,
// two blocks per SM).
using TileS_MmaCP = Tile<64, 64, 32, 2, 2, 4, 2, false, 8, true>;

}  // namespace bs::cuda::gemm
