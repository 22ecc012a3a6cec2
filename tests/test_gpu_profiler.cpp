// The CUPTI profiler on the GPU: every run gets exactly the records of what it did, whether CUPTI's buffers are
// parked and parsed in collect() (the default), parsed as CUPTI hands them over (BATCHSCOPE_CUPTI_ATTRS=inline), or
// a mix of both (park=1 buffer, then inline). Each run issues a known set of operations, so the expectation is
// independent of the profiler: three memsets of known sizes and one host-to-device copy, all inside layer 0.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "gpu_util.hpp"
#include "kernels/profile.hpp"

using namespace bs;
using bs::test::gpu_missing;

namespace {

struct AttrsEnv {
  explicit AttrsEnv(const char* v) { setenv("BATCHSCOPE_CUPTI_ATTRS", v, 1); }
  ~AttrsEnv() { unsetenv("BATCHSCOPE_CUPTI_ATTRS"); }
};

TEST(GpuCuptiProfiler, EveryRunKeepsExactlyItsRecordsParkedInlineOrMixed) {
  SKIP_WITHOUT_GPU();
  // ~0.6 KB of records per run: 5000 runs fill three of the profiler's 1 MB buffers, so records cross buffers.
  constexpr int kRuns = 5000;
  const size_t sizes[] = {256, 512, 768};
  void* dev = nullptr;
  ASSERT_EQ(cudaMalloc(&dev, 4096), cudaSuccess);
  char host[64] = {};
  for (const char* attrs : {"", "inline", "park=1048576"}) {
    AttrsEnv env(attrs);
    auto prof = make_cupti_profiler();
    for (int r = 0; r < kRuns; ++r) {
      prof->begin_run();
      prof->layer_begin(0);
      for (size_t bytes : sizes) ASSERT_EQ(cudaMemsetAsync(dev, r & 0xff, bytes), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(dev, host, sizeof host, cudaMemcpyHostToDevice), cudaSuccess);
      prof->layer_end(0);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      prof->end_run();
    }
    const std::vector<Profiler::Run> runs = prof->collect();
    ASSERT_EQ(runs.size(), static_cast<size_t>(kRuns)) << attrs;
    int bad = 0;
    for (size_t i = 0; i < runs.size(); ++i) {
      std::map<uint64_t, int> memsets;
      int copies = 0, memset_calls = 0, outside_layer = 0;
      for (const ProfileRecord& rec : runs[i].records) {
        if (rec.type == RecordType::memset) ++memsets[rec.bytes];
        if (rec.type == RecordType::memcpy && rec.copy_kind == "HtoD" && rec.bytes == sizeof host) ++copies;
        if (rec.type == RecordType::api && rec.name == "cudaMemsetAsync") ++memset_calls;
        if ((rec.type == RecordType::memset || rec.type == RecordType::memcpy) && rec.layer != 0) ++outside_layer;
      }
      const bool ok = memsets == std::map<uint64_t, int>{{256, 1}, {512, 1}, {768, 1}} && copies == 1 && memset_calls == 3 && outside_layer == 0;
      if (!ok && ++bad <= 3)
        ADD_FAILURE() << "attrs '" << attrs << "', run " << i << ": " << memsets.size() << " memset sizes, " << copies
                      << " copies, " << memset_calls << " cudaMemsetAsync calls, " << outside_layer << " outside layer 0";
    }
    EXPECT_EQ(bad, 0) << attrs;
  }
  cudaFree(dev);
}

}  // namespace
