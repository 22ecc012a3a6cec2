// `batchscope sweep` and `batchscope profile`: run a model over batch sizes with the profiler on, and turn the records
// into the execution-time breakdown (CSV + JSON metadata) and nvprof-style summaries. sweep_options.cpp reads the
// flags; sweep.cpp measures; sweep_output.cpp gathers the ranks and writes the results.
#pragma once
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/cli/run_flags.hpp"

namespace bs {

struct SweepOptions {
  std::string model_dir;
  RunFlags run;
  std::vector<int> batches = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
  int reps = 10, warmup = 2, check_images = 4;
  double min_time = 0;    // seconds of warm repetitions per batch size, at least (beyond --reps)
  int max_reps = 100000;  // a cap for --min-time
  std::string trace;      // Chrome trace-event JSON of one warm run per batch size (trace_export.hpp)
  BackendKind check_backend = BackendKind::cpu_ref;
  std::string out;
  bool no_profile = false;
  // Where the breakdown comes from: separate passes of its own after the timed ones (which run untraced), timed (the
  // timed passes are the profiled ones), or auto (separate on GPU backends, whose CUPTI tracing slows a batch-1 pass by
  // 15-25 %; timed on the CPU, whose steady clock costs nothing measurable).
  ProfiledPasses profiled_passes = ProfiledPasses::automatic;
  int profile_reps = 0;    // separate: profiled passes per batch size (0: --reps, at most 100)
  int rep_gap_us = 0;      // an untimed pause before every warm repetition (profiler-overhead experiments)
  bool global_batch = false, per_rank_batch = false, no_baseline = false;  // under mpirun
  bool resume = false;     // continue the sweep in --out, measuring only the batch sizes it lacks
  std::string command_line;  // recorded in the metadata
  bool profile_command = false;
  const CLI::App* cmd = nullptr;

  void add_to(CLI::App& app, bool profile_command);
  // Refuses, naming the flag, values out of range and flags that do not apply to `backend` (resolved).
  void validate(BackendKind backend, int ranks) const;
  bool given(const std::string& flag) const;  // on the command line (the profile command lacks some of sweep's flags)
  // What makes two sweeps' points comparable (--resume refuses a file written with anything else).
  nlohmann::json resume_key(BackendKind backend, int ranks) const;
};

int run_sweep(SweepOptions o);
int run_profile(SweepOptions o);  // one batch (batches[0]), one profiled warm run, tables on stdout

}  // namespace bs
