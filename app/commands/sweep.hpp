// `batchscope sweep` and `batchscope profile`: run a model over batch sizes with the profiler on, and turn
// the records into the execution-time breakdown (CSV + JSON metadata) and nvprof-style summaries.
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "app/cli/backend_flags.hpp"

namespace bs {

struct SweepOptions {
  std::string model_dir;
  std::string backend = "auto";
  BackendFlags flags;
  std::vector<int> batches = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
  int reps = 10, warmup = 2, check_images = 4;
  double min_time = 0;    // seconds of warm repetitions per batch size, at least (beyond --reps)
  int max_reps = 100000;  // a cap for --min-time
  std::string host_memory = "pageable", transfers = "resident";
  int chunk = 0;            // --transfers overlapped: images per chunk (0: gpu_pipeline.hpp's default)
  bool cuda_graph = false;  // replay each batch size's forward pass from a captured CUDA graph
  std::string trace;        // Chrome trace-event JSON of one warm run per batch size (trace_export.hpp)
  std::string check_backend = "cpu-ref";
  std::string out;
  bool no_profile = false;
  // Where the breakdown comes from: "separate" passes of its own after the timed ones (which run untraced), "timed"
  // (the timed passes are the profiled ones), or "auto" (separate on GPU backends, whose CUPTI tracing slows a
  // batch-1 pass by 15-25 %; timed on the CPU, whose steady clock costs nothing measurable).
  std::string profiled_passes = "auto";
  int profile_reps = 0;  // separate: profiled passes per batch size (0: --reps, at most 100)
  bool global_batch = false, per_rank_batch = false, no_baseline = false;  // under mpirun
  std::string command_line;  // recorded in the metadata

  void add_to(CLI::App& app, bool profile_command);
  void validate(int ranks = 1) const;
};

int run_sweep(SweepOptions o);
int run_profile(SweepOptions o);  // one batch (batches[0]), one profiled warm run, tables on stdout

}  // namespace bs
