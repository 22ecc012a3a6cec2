// The flags of `batchscope sweep` and `batchscope profile`.
#include "app/cli/flags.hpp"
#include "app/commands/sweep.hpp"
#include "app/exec/world.hpp"
#include "weights_tools/error.hpp"

namespace bs {

void SweepOptions::add_to(CLI::App& app, bool profile) {
  cmd = &app;
  profile_command = profile;
  app.add_option("--model", model_dir, "model folder (or its model.json, or a shipped model: ece408, alexnet)")->type_name("DIR");
  run.add_to(app, {std::nullopt, true, true, HostMemory::pageable});
  if (profile) {
    batches = {64};
    add_int(app, "--batch", batches[0], "images per forward pass (default: 64)", 1);
  } else {
    add_int_list(app, "--batches", batches, "batch sizes, comma-separated");
    add_int(app, "--reps", reps, "timed warm repetitions per batch size, at least (median, percentiles, min, max; default: 10)", 1,
            10000000);
    add_double(app, "--min-time", min_time, "keep repeating each batch size until this many seconds of warm runs have passed "
                                            "(p99 means something from ~100 repetitions; default: 0)", 0, 86400);
    add_int(app, "--max-reps", max_reps, "at most this many warm repetitions under --min-time (default: 100000)", 1, 100000000);
    app.add_option("--out", out, "results CSV; FILE.layers.csv and FILE.json are written beside it")->type_name("FILE");
    app.add_flag("--resume", resume, "continue the sweep in --out (interrupted, or with more --batches): measure only the batch "
                                     "sizes it lacks, with the options it was written with");
    app.add_flag("--no-profile", no_profile, "time without the profiler (to measure its overhead)");
    add_enum(app, "--profiled-passes", profiled_passes,
             "where the breakdown comes from: separate (passes of its own after the timed ones, which run untraced, as trtexec's "
             "--separateProfileRun) | timed (the timed passes themselves, the profiler's cost in their times) | auto (separate "
             "on GPU backends, timed on the CPU)");
    add_int(app, "--profile-reps", profile_reps, "--profiled-passes separate: profiled passes per batch size (default: --reps, at "
                                                 "most 100)", 1, 100000);
    add_int(app, "--check-images", check_images, "images per batch point checked against the reference (0: none; default: 4)", 0,
            1000000);
    add_enum(app, "--check-backend", check_backend, "the reference for those checks: cpu-ref (the oracle) | cpu (tested equal to "
                                                    "cpu-ref; for AlexNet-sized sweeps)")
        ->type_name("cpu-ref|cpu");
    add_int(app, "--rep-gap-us", rep_gap_us, "an untimed pause before every warm repetition, in microseconds (a knob for the "
                                             "profiler-overhead experiments; default: 0)", 0, 10000000);
    app.add_flag("--global-batch", global_batch, "mpirun: each batch size is split across the ranks (strong scaling)");
    app.add_flag("--per-rank-batch", per_rank_batch, "mpirun: every rank runs each batch size whole (weak scaling)");
    app.add_flag("--no-baseline", no_baseline, "mpirun: skip the one-rank run that scaling efficiency is measured against");
  }
  add_int(app, "--warmup", warmup, "unprofiled warm-up runs per batch size (default: 2)", 0, 1000000);
  app.add_option("--trace", trace, "write one warm run per batch size as Chrome trace-event JSON (Perfetto, chrome://tracing): "
                                   "kernels, copies, memsets and API calls on their streams and threads, or CPU phases")
      ->type_name("FILE");
  app.footer(profile ? "Examples (shipped models resolve by name from any directory):\n"
                       "  batchscope profile --model ece408 --backend cuda --batch 256\n"
                       "  batchscope profile --model ece408 --backend cuda --batch 64 --transfers per-layer"
                     : "Examples (shipped models resolve by name from any directory):\n"
                       "  batchscope sweep --model ece408 --out ece408.csv\n"
                       "  batchscope sweep --model ece408 --backend cuda --conv-variant 9 --batches 1,16,256 --host-memory pinned "
                       "--out r.csv\n"
                       "  batchscope sweep --model ece408 --backend cpu --batches 1,2,4 --reps 3 --out cpu.csv\n"
                       "  batchscope sweep --model ece408 --backend cpu --batches 1,2,4,8 --out cpu.csv --resume");
}

bool SweepOptions::given(const std::string& flag) const {
  const CLI::Option* opt = cmd ? cmd->get_option_no_throw(flag) : nullptr;
  return opt && opt->count() > 0;
}

void SweepOptions::validate(BackendKind backend, int ranks) const {
  require(*cmd, "--model", "the model folder, its model.json, or a shipped model (ece408, alexnet)");
  if (!profile_command) require(*cmd, "--out", "the results CSV to write (FILE.layers.csv and FILE.json go beside it)");
  check_rank_split(ranks, global_batch, per_rank_batch, no_baseline, batches, profile_command ? "--batch" : "--batches",
                   "each batch size, --global-batch (split across the ranks) or --per-rank-batch (every rank runs it whole)");
  if (max_reps < reps) usage_fail("--max-reps", "must be at least --reps (" + std::to_string(reps) + "), found " + std::to_string(max_reps));
  if (!trace.empty() && no_profile) usage_fail("--trace", "needs the profiler's records (drop --no-profile)");
  const bool gpu = is_gpu(backend);
  const bool separate = profiled_passes == ProfiledPasses::separate || (profiled_passes == ProfiledPasses::automatic && gpu);
  if (no_profile && (given("--profile-reps") || given("--profiled-passes")))
    usage_fail(given("--profile-reps") ? "--profile-reps" : "--profiled-passes", "needs the profiler (drop --no-profile)");
  if (given("--profile-reps") && !separate)
    usage_fail("--profile-reps", profiled_passes == ProfiledPasses::timed
                                     ? "applies to --profiled-passes separate only"
                                     : "applies to --profiled-passes separate, which the " + name_of(backend) +
                                           " backend does not use by default (its profiled passes are the timed ones); add "
                                           "--profiled-passes separate");
  if (check_backend != BackendKind::cpu_ref && check_backend != BackendKind::cpu)
    usage_fail("--check-backend", "expected cpu-ref or cpu, found '" + name_of(check_backend) + "'");
  if (check_images > 0 && check_backend == backend)
    usage_fail("--check-backend", name_of(backend) + " would check the " + name_of(backend) + " backend against itself; use " +
                                      (backend == BackendKind::cpu ? "--check-backend cpu-ref" : "--check-images 0 to skip the check"));
  if (resume && ranks > 1) usage_fail("--resume", "runs as one process (rank 0 would resume alone)");
  run.validate(backend);
}

nlohmann::json SweepOptions::resume_key(BackendKind backend, int ranks) const {
  const BackendOptions o = run.options(backend);
  nlohmann::json key = {{"backend", name_of(backend)},
          {"conv_variant", run.conv_label(backend)},
          {"fc_variant", run.fc_label(backend)},
          {"tuning", o.tuning_file},
          {"cudnn_algos", backend == BackendKind::cudnn ? name_of(o.cudnn_algos) : ""},
          {"threads", o.threads},
          {"precision", name_of(o.precision)},
          {"input_precision", name_of(o.input_precision)},
          {"weights", name_of(o.weights)},
          {"transfers", name_of(o.transfers)},
          {"host_memory", o.pinned_host ? "pinned" : "pageable"},
          {"chunk", o.chunk},
          {"cuda_graph", o.cuda_graph},
          {"reps", reps},
          {"warmup", warmup},
          {"min_time_s", min_time},
          {"max_reps", max_reps},
          {"check_backend", name_of(check_backend)},
          {"check_images", check_images},
          {"no_profile", no_profile},
          {"profiled_passes", name_of(profiled_passes)},
          {"profile_reps", profile_reps},
          {"rep_gap_us", rep_gap_us},
          {"ranks", ranks}};
  if (o.copies != Copies::engine) key["copies"] = name_of(o.copies);  // absent at the default: older files resume as before
  return key;
}

}  // namespace bs
