// The ring that v22's and v58's conv2 kernels stage their input through: persistent blocks take consecutive images in
// sets of IP, each set a cp.async group, in a ring of three buffers with one block barrier per set. The set fetched
// at step i lands in the buffer step i - 1 computed from, which every warp has left once it passes step i's barrier.
// Each buffer is followed by kGap words that no copy writes (zeros, set by the kernel): the kernels' last pixel reads
// its pad pair one word past its image, and past a set's last image that word would otherwise be the next buffer's
// first, whose copy may still be in flight (racecheck over ECE 408's 10,000 images, 2026-11-28).
#pragma once
#include <cuda_pipeline.h>

#include <cstdint>

#include "kernels/cuda/engine/epilogue.cuh"

namespace bs::cuda::half {

template <int IP, int kImgWords, int kThreads, int kGap>
struct SetRing {
  static constexpr int kStages = 3;
  static constexpr int kStride = IP * kImgWords + kGap;  // words from one buffer to the next
  static constexpr int kWords = kStages * kStride;       // the ring's shared memory, in words
  static_assert(kGap >= 1 && kGap % 4 == 0 && kImgWords % 4 == 0, "16-byte copies: buffers 16-byte aligned");
  uint32_t* xs;  // kStages buffers of IP images of kImgWords, each followed by kGap zeros
  const uint32_t* in;
  int first, last;  // the block's images

  // One group per set, empty past the end, so that the group count stays uniform.
  __device__ void fetch(int b0, int stage) const {
    const int count = max(0, min(IP, last - b0));
    copy_pieces_async<kThreads, IP * kImgWords / 4>(xs + stage * kStride, in + static_cast<long long>(b0) * kImgWords,
                                                    count * (kImgWords / 4));
    __pipeline_commit();
  }
  __device__ void start() const {
    fetch(first, 0);
    fetch(first + IP, 1);
  }
  // The set of step `step` (its first image b0), once it has landed; the set two steps on is fetched.
  __device__ const uint32_t* next(int b0, int step) const {
    __pipeline_wait_prior(1);
    __syncthreads();
    fetch(b0 + 2 * IP, (step + 2) % kStages);
    return xs + (step % kStages) * kStride;
  }
};

}  // namespace bs::cuda::half
