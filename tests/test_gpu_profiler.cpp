// The CUPTI profiler on the GPU: every run gets exactly the records of what it did, across CUPTI's buffers and
// across a pause (sweep's --profiled-passes separate detaches CUPTI for the timed passes). Each run issues a known set of operations, so
// the expectation is independent of the profiler: three memsets of known sizes and one host-to-device copy, all
// inside layer 0.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "gpu_util.hpp"
#include "kernels/profile/profile.hpp"

using namespace bs;
using bs::test::cupti_missing;
using bs::test::gpu_missing;

namespace {

constexpr size_t kSizes[] = {256, 512, 768};

// One profiled run of the known operations on `dev`.
void known_run(Profiler& prof, void* dev, int r) {
  static char host[64] = {};
  prof.begin_run();
  prof.layer_begin(0);
  for (size_t bytes : kSizes) ASSERT_EQ(cudaMemsetAsync(dev, r & 0xff, bytes), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dev, host, sizeof host, cudaMemcpyHostToDevice), cudaSuccess);
  prof.layer_end(0);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  prof.end_run();
}

// "" where the run has exactly the known operations' records, else what is wrong.
std::string check_run(const Profiler::Run& run) {
  std::map<uint64_t, int> memsets;
  int copies = 0, memset_calls = 0, outside_layer = 0;
  for (const ProfileRecord& rec : run.records) {
    if (rec.type == RecordType::memset) ++memsets[rec.bytes];
    if (rec.type == RecordType::memcpy && rec.copy_kind == "HtoD" && rec.bytes == 64) ++copies;
    if (rec.type == RecordType::api && rec.name == "cudaMemsetAsync") ++memset_calls;
    if ((rec.type == RecordType::memset || rec.type == RecordType::memcpy) && rec.layer != 0) ++outside_layer;
  }
  if (memsets == std::map<uint64_t, int>{{256, 1}, {512, 1}, {768, 1}} && copies == 1 && memset_calls == 3 && outside_layer == 0)
    return "";
  return std::to_string(memsets.size()) + " memset sizes, " + std::to_string(copies) + " copies, " +
         std::to_string(memset_calls) + " cudaMemsetAsync calls, " + std::to_string(outside_layer) + " outside layer 0";
}

TEST(GpuCuptiProfiler, EveryRunKeepsExactlyItsRecordsAcrossBuffers) {
  SKIP_WITHOUT_CUPTI();
  // ~0.6 KB of records per run: 5000 runs fill three of the profiler's 1 MB buffers, so records cross buffers.
  constexpr int kRuns = 5000;
  auto prof = make_cupti_profiler();  // before the allocation: nothing to leak if it throws
  void* dev = nullptr;
  ASSERT_EQ(cudaMalloc(&dev, 4096), cudaSuccess);
  for (int r = 0; r < kRuns; ++r) known_run(*prof, dev, r);
  const std::vector<Profiler::Run> runs = prof->collect();
  ASSERT_EQ(runs.size(), static_cast<size_t>(kRuns));
  int bad = 0;
  for (size_t i = 0; i < runs.size(); ++i)
    if (const std::string e = check_run(runs[i]); !e.empty() && ++bad <= 3) ADD_FAILURE() << "run " << i << ": " << e;
  EXPECT_EQ(bad, 0);
  cudaFree(dev);
}

// Paused (CUPTI detached), work leaves no records; resumed, every run has exactly its own again, and the runs made
// before the pause keep theirs: twice over, with a collect() between.
TEST(GpuCuptiProfiler, RunsBeforeAndAfterAPauseKeepExactlyTheirRecords) {
  SKIP_WITHOUT_CUPTI();
  auto prof = make_cupti_profiler();  // before the allocation: nothing to leak if it throws
  void* dev = nullptr;
  ASSERT_EQ(cudaMalloc(&dev, 4096), cudaSuccess);
  for (int round = 0; round < 2; ++round) {
    for (int r = 0; r < 20; ++r) known_run(*prof, dev, r);
    prof->pause();
    for (int r = 0; r < 20; ++r) ASSERT_EQ(cudaMemsetAsync(dev, r, 128), cudaSuccess);  // 128 bytes: no run's size
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    prof->resume();
    for (int r = 0; r < 20; ++r) known_run(*prof, dev, r);
    const std::vector<Profiler::Run> runs = prof->collect();
    ASSERT_EQ(runs.size(), 40u) << "round " << round;
    for (size_t i = 0; i < runs.size(); ++i) EXPECT_EQ(check_run(runs[i]), "") << "round " << round << ", run " << i;
  }
  cudaFree(dev);
}

}  // namespace
