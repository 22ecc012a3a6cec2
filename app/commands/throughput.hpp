// `batchscope throughput`: an offline-scenario load (in the way of MLPerf's Offline): N images, all available
// at the start, streamed through in batches of B by S workers (each its own backend instance, so on a GPU
// its own CUDA stream) as fast as they go. Reports images/s over the wall time and the latency distribution
// of the batches, per batch size; over several batch sizes that is the latency-against-throughput curve an
// engineer sizing a batch reads. Under mpirun every rank runs its own workers on its own GPU (world.hpp).
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "app/cli/run_flags.hpp"

namespace bs {

struct ThroughputOptions {
  std::string model_dir;
  RunFlags run;  // transfers: resident | overlapped; host memory pinned by default
  int images = 4096;
  std::vector<int> batches = {1, 4, 16, 64, 256};
  int streams = 1;
  int warmup = 2;  // untimed batches per worker before the clock starts
  std::string out;  // optional CSV (FILE.json beside it)
  bool global_batch = false, per_rank_batch = false, no_baseline = false;  // MPI
  std::string command_line;
  const CLI::App* cmd = nullptr;

  void add_to(CLI::App& app);
  void validate(BackendKind backend, int ranks) const;
};

int run_throughput(ThroughputOptions o);

}  // namespace bs
