#include "app/commands/sweep.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <thread>
#include <unistd.h>

#include "app/exec/datasets.hpp"
#include "app/exec/input_precision.hpp"
#include "app/results/latency_stats.hpp"
#include "app/results/metadata.hpp"
#include "app/results/results_io.hpp"
#include "app/results/trace_export.hpp"
#include "app/exec/world.hpp"
#include "app/exec/runner.hpp"
#include "kernels/exec/backend.hpp"
#include "kernels/exec/device_info.hpp"
#include "kernels/profile/profile.hpp"
#include "kernels/plan/menus.hpp"
#include "weights_tools/error.hpp"

namespace bs {

void SweepOptions::add_to(CLI::App& app, bool profile_command) {
  app.add_option("--model", model_dir, "model folder holding model.json")->required();
  app.add_option("--backend", backend, "auto (cuda where a GPU exists, else cpu) | cpu-ref | cpu | cuda | cudnn")
      ->capture_default_str();
  flags.add_to(app);
  if (profile_command) {
    batches = {64};
    app.add_option("--batch", batches[0], "images per forward pass")->capture_default_str();
  } else {
    app.add_option("--batches", batches, "batch sizes, comma-separated")->delimiter(',')->capture_default_str();
    app.add_option("--reps", reps, "timed warm repetitions per batch size, at least (median, percentiles, min, max)")
        ->capture_default_str();
    app.add_option("--min-time", min_time, "keep repeating each batch size until this many seconds of warm runs "
                                           "have passed (p99 means something from ~100 repetitions)")
        ->capture_default_str();
    app.add_option("--max-reps", max_reps, "at most this many warm repetitions under --min-time")->capture_default_str();
    app.add_option("--out", out, "results CSV; FILE.layers.csv and FILE.json are written beside it")->required();
    app.add_flag("--no-profile", no_profile, "time without the profiler (to measure its overhead)");
    app.add_option("--profiled-passes", profiled_passes,
                   "where the breakdown comes from: separate (passes of its own after the timed ones, which run untraced, as "
                   "trtexec's --separateProfileRun) | timed (the timed passes themselves, CUPTI's cost in their times) | auto "
                   "(separate on GPU backends, timed on the CPU)")
        ->capture_default_str();
    app.add_option("--profile-reps", profile_reps, "--profiled-passes separate: profiled passes per batch size (default: --reps, at most 100)");
    app.add_option("--check-images", check_images, "images per batch point checked against the reference (0: none)")
        ->capture_default_str();
    app.add_flag("--global-batch", global_batch, "mpirun: each batch size is split across the ranks (strong scaling)");
    app.add_flag("--per-rank-batch", per_rank_batch, "mpirun: every rank runs each batch size whole (weak scaling)");
    app.add_flag("--no-baseline", no_baseline, "mpirun: skip the one-rank run that scaling efficiency is measured against");
    app.add_option("--check-backend", check_backend, "the reference for those checks: cpu-ref (the oracle) | cpu "
                                                     "(tested equal to cpu-ref; for AlexNet-sized sweeps)")
        ->capture_default_str();
  }
  app.add_option("--warmup", warmup, "unprofiled warm-up runs per batch size")->capture_default_str();
  app.add_option("--host-memory", host_memory, "pageable | pinned host buffers for input and output")->capture_default_str();
  app.add_option("--transfers", transfers, "resident (weights and activations stay on the GPU) | per-layer "
                                           "(allocate, copy in, run, copy out, free around every layer) | overlapped "
                                           "(resident, the batch in chunks whose copies overlap the compute of others)")
      ->capture_default_str();
  app.add_option("--chunk", chunk, "--transfers overlapped: images per chunk (default: quarters of the batch, at least 32, reached by doubling "
                                      "from a sixteenth)");
  app.add_flag("--cuda-graph", cuda_graph, "GPU backends: capture each batch size's layers once into a CUDA graph and replay "
                                           "it (the cold run holds an eager pass, the capture and the instantiation)");
  app.add_option("--trace", trace, "write one warm run per batch size as Chrome trace-event JSON (Perfetto, chrome://tracing): "
                                   "kernels, copies, memsets and API calls on their streams and threads, or CPU phases");
  app.footer(profile_command
                 ? "Examples:\n  batchscope profile --model data/models/ece408 --backend cuda --batch 256\n"
                   "  batchscope profile --model data/models/ece408 --backend cuda --batch 64 --transfers per-layer"
                 : "Examples:\n  batchscope sweep --model data/models/ece408 --out experiments/results/latest/ece408.csv\n"
                   "  batchscope sweep --model data/models/ece408 --backend cuda --conv-variant 9 --batches 1,16,256 "
                   "--host-memory pinned --out r.csv\n"
                   "  batchscope sweep --model data/models/ece408 --backend cpu --batches 1,2,4 --reps 3 --out cpu.csv");
}

void SweepOptions::validate(int ranks) const {
  check_rank_split(ranks, global_batch, per_rank_batch, no_baseline, batches, "--batches",
                   "each batch size, --global-batch (split across the ranks) or --per-rank-batch (every rank runs it whole)");
  if (batches.empty()) fail("--batches", "needs at least one batch size");
  for (int b : batches)
    if (b <= 0) fail(batches.size() == 1 && out.empty() ? "--batch" : "--batches", "batch sizes must be positive, found " + std::to_string(b));
  if (reps < 1) fail("--reps", "must be at least 1, found " + std::to_string(reps));
  if (!(min_time >= 0) || min_time > 86400) fail("--min-time", "must be between 0 and 86400 seconds, found " + std::to_string(min_time));
  if (max_reps < reps) fail("--max-reps", "must be at least --reps (" + std::to_string(reps) + "), found " + std::to_string(max_reps));
  if (warmup < 0) fail("--warmup", "must be 0 or more, found " + std::to_string(warmup));
  if (check_images < 0) fail("--check-images", "must be 0 or more, found " + std::to_string(check_images));
  if (check_backend != "cpu-ref" && check_backend != "cpu")
    fail("--check-backend", "expected cpu-ref or cpu, found '" + check_backend + "'");
  if (host_memory != "pageable" && host_memory != "pinned")
    fail("--host-memory", "expected pageable or pinned, found '" + host_memory + "'");
  if (transfers != "resident" && transfers != "per-layer" && transfers != "overlapped")
    fail("--transfers", "expected resident, per-layer or overlapped, found '" + transfers + "'");
  if (!trace.empty() && no_profile) fail("--trace", "needs the profiler's records (drop --no-profile)");
  if (profiled_passes != "auto" && profiled_passes != "separate" && profiled_passes != "timed")
    fail("--profiled-passes", "expected auto, separate or timed, found '" + profiled_passes + "'");
  if (profile_reps < 0) fail("--profile-reps", "must be positive, found " + std::to_string(profile_reps));
  if (profile_reps > 0 && profiled_passes == "timed") fail("--profile-reps", "applies to --profiled-passes separate only");
  if (no_profile && (profile_reps > 0 || profiled_passes != "auto"))
    fail(profile_reps > 0 ? "--profile-reps" : "--profiled-passes", "needs the profiler (drop --no-profile)");
  if (chunk < 0) fail("--chunk", "must be positive, found " + std::to_string(chunk));
  if (chunk > 0 && transfers != "overlapped") fail("--chunk", "applies to --transfers overlapped only");
  if (cuda_graph && transfers == "per-layer")
    fail("--cuda-graph", "needs --transfers resident or overlapped (per-layer allocates and copies synchronously around every layer)");
}

namespace {

double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

std::string fmt_eta(double s) {
  char buf[32];
  if (s < 0 || !std::isfinite(s)) return "--:--";
  std::snprintf(buf, sizeof buf, "%02d:%02d", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  return buf;
}

struct Run {
  double total = 0;
  std::map<std::string, double> categories;
  double copy_hidden = 0;  // seconds of copies under kernels
  double t0 = 0, t1 = 0;   // the run's window on the profiler's clock
  RunStats stats;
  std::vector<ProfileRecord> records;
};

class SweepDriver {
 public:
  SweepDriver(SweepOptions o) : o_(std::move(o)) {}

  void prepare() {
    o_.validate(world_.size());
    if (o_.backend == "auto") o_.backend = gpu_available() ? "cuda" : "cpu";
    o_.flags.validate(o_.backend);
    gpu_ = o_.backend == "cuda" || o_.backend == "cudnn";
    if (!gpu_ && (o_.transfers != "resident" || o_.host_memory == "pinned" || o_.cuda_graph))
      fail(o_.cuda_graph ? "--cuda-graph" : o_.transfers != "resident" ? "--transfers" : "--host-memory", "applies to GPU backends only");
    world_.step([&] { prepare_rank(); });
  }

  // What each rank prepares for itself (under mpirun a failure here on one rank stops them all).
  void prepare_rank() {
    if (gpu_) place_rank_on_gpu(world_);
    model_ = load_model(o_.model_dir);
    opts_ = o_.flags.options();
    opts_.per_layer_transfers = o_.transfers == "per-layer";
    opts_.overlapped_transfers = o_.transfers == "overlapped";
    opts_.chunk = o_.chunk;
    opts_.cuda_graph = o_.cuda_graph;
    opts_.pinned_host = o_.host_memory == "pinned";
    if (!gpu_) share_cores(world_, opts_);
    world_.fault_point("load");
    if (gpu_) init_gpu();
    device_ = rank_device(gpu_);
    probe_ = open_backend(model_, o_.backend, opts_);  // fails early on an unknown variant or unsupported layer
    for (int b : o_.batches) check_memory(my_share(b));
    if (!o_.no_profile) profiler_ = gpu_ ? make_cupti_profiler() : make_steady_profiler();
    separate_ = profiler_ && (o_.profiled_passes == "separate" || (o_.profiled_passes == "auto" && gpu_));
    profile_reps_ = o_.profile_reps > 0 ? o_.profile_reps : std::min(o_.reps, 100);
    inputs_ = make_image_pool(model_, 2 * *std::max_element(o_.batches.begin(), o_.batches.end()));
    if (o_.global_batch) inputs_.count = std::max(inputs_.count, 1);
    if (o_.check_images > 0) {
      ref_ = make_backend(o_.check_backend);
      ref_->load(model_);
    }
    id_.model = model_.name;
    id_.weights = model_.weights_note;
    id_.backend = o_.backend;
    id_.variant = o_.flags.conv_label(o_.backend);
    id_.fc_variant = o_.flags.fc_label(o_.backend);
    id_.transfers = gpu_ ? transfers_label(o_.transfers, o_.cuda_graph, opts_.input_precision) : "host";
    id_.host_memory = o_.host_memory;
    id_.precision = opts_.precision;
    id_.profiler = profiler_ ? profiler_->kind() : "off";
  }

  // Refuses, before trying, a batch the memory cannot hold, saying how much it needs and how much there is.
  void check_memory(int n) {
    const double gib = 1024.0 * 1024 * 1024;
    const size_t need = probe_->device_bytes_needed(n);
    if (gpu_) {
      const size_t free = probe_->device_bytes_free();
      if (need > free) {
        char buf[200];
        std::snprintf(buf, sizeof buf, "batch %d needs %.2f GiB of device memory; the device has %.2f GiB free", n,
                      need / gib, free / gib);
        fail("--batches", buf);
      }
    }
    size_t host = sizeof(float) * static_cast<size_t>(n) * (model_.input.size() + 3 * max_activation());
    const double avail = static_cast<double>(sysconf(_SC_AVPHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
    if (host > avail) {
      char buf[200];
      std::snprintf(buf, sizeof buf, "batch %d needs %.2f GiB of host memory; %.2f GiB are available", n, host / gib, avail / gib);
      fail("--batches", buf);
    }
  }

  size_t max_activation() const {
    size_t m = 0;
    for (const Layer& l : model_.layers) m = std::max<size_t>(m, l.out.size());
    return m;
  }

  // --input-precision u8 / fp16 / bf16: the input converted into dst (bytes or 16-bit words), before the clock
  // starts; the reference keeps reading the FP32 values. Without one (dst null): src as it is.
  const float* to_input_type(const float* src, float* dst, size_t values) const {
    if (!dst) return src;
    convert_input_bytes(src, values, opts_.input_precision, dst);
    return dst;
  }
  // A host buffer for the converted copy of `values` input values; null for an FP32 input.
  std::shared_ptr<float> converted_buffer(size_t values) const {
    if (opts_.input_precision == "fp32") return nullptr;
    return host_buffer(input_buffer_floats(values, opts_.input_precision), opts_.pinned_host);
  }

  // One forward pass of n images, a profiled run where `prof` is given. `backend` null: a cold run that
  // creates and loads the backend inside the measurement.
  Run run_once(std::unique_ptr<Backend>& backend, int n, const float* in, float* out, Profiler* prof) {
    Run r;
    if (prof) prof->begin_run();
    auto t0 = std::chrono::steady_clock::now();
    if (!backend) {
      backend = open_backend(model_, o_.backend, opts_);
      backend->set_tracer(profiler_.get());
    }
    // GPU layer times come from the profiler's records, so the backend adds no events of its own; the
    // CPU backends time layers with the steady clock either way.
    backend->forward(in, n, model_.logits_layers(), out, gpu_ ? nullptr : &r.stats);
    r.total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (prof) prof->end_run();
    return r;
  }

  // Hands the profiler's records to the runs just made (in order) and computes their breakdowns.
  void attach_records(std::vector<Run>& runs) {
    if (!profiler_) return;
    std::vector<Profiler::Run> got = profiler_->collect();
    for (size_t i = 0; i < runs.size() && i < got.size(); ++i) {
      runs[i].records = std::move(got[i].records);
      runs[i].t0 = got[i].t0;
      runs[i].t1 = got[i].t1;
      runs[i].categories = breakdown(runs[i].records, model_, got[i].t0, got[i].t1);
      runs[i].copy_hidden = hidden_copy_seconds(runs[i].records, got[i].t0, got[i].t1);
      // A layer's time: its GPU activities (kernels, and copies in per-layer mode), or on the CPU its phase: the
      // records the breakdown and the trace (--trace) are made of, so that all three agree.
      runs[i].stats.layer_seconds.assign(model_.layers.size(), 0.0);
      for (const ProfileRecord& r : runs[i].records)
        if (r.layer >= 0 && r.type != RecordType::api && (r.type == RecordType::cpu) != gpu_)
          runs[i].stats.layer_seconds[r.layer] += r.end - r.start;
    }
  }

  // A point's repetitions (seconds per pass of `images` images): reps, median, min, max, p90, p99, images/s, GFLOP/s.
  void set_times(SweepRow& row, const std::vector<double>& seconds, int images) const {
    const LatencySummary lat = summarize_latencies(seconds);
    row.reps = lat.count;
    row.total_median = lat.p50;
    row.total_min = lat.min;
    row.total_max = lat.max;
    row.total_p90 = lat.p90;
    row.total_p99 = lat.p99;
    row.images_per_s = images / lat.p50;
    row.gflop_per_s = model_.flops_per_image() * images / lat.p50 * 1e-9;
  }

  // A point's row: its times from the timed runs, its breakdown from the profiled ones (the same runs unless
  // --profiled-passes separate), with their own median, the time the breakdown partitions.
  SweepRow aggregate(int n, const std::string& kind, const std::vector<Run>& timed, const std::vector<Run>& runs) {
    SweepRow row;
    row.batch = n;
    row.run = kind;
    std::vector<double> totals;
    for (const Run& r : timed) totals.push_back(r.total);
    set_times(row, totals, n);
    if (profiler_) {
      totals.clear();
      for (const Run& r : runs) totals.push_back(r.total);
      row.breakdown_reps = static_cast<int>(runs.size());
      row.breakdown_median = median_of(totals);
      for (const std::string& c : breakdown_categories()) {
        std::vector<double> v;
        for (const Run& r : runs) v.push_back(r.categories.at(c));
        row.categories[c] = median_of(v);
      }
      std::vector<double> v;
      for (const Run& r : runs) v.push_back(r.copy_hidden);
      row.copy_hidden = median_of(v);
    }
    return row;
  }

  void layer_rows(int n, const std::string& kind, const std::vector<Run>& runs, const Backend& b) {
    const size_t layers = model_.logits_layers();
    for (size_t i = 0; i < layers; ++i) {
      const Layer& l = model_.layers[i];
      std::vector<double> v;
      for (const Run& r : runs) v.push_back(i < r.stats.layer_seconds.size() ? r.stats.layer_seconds[i] : 0.0);
      LayerRow row;
      row.batch = n;
      row.run = kind;
      row.layer = l.name;
      row.type = l.type_name();
      row.implementation = b.describe(l);
      row.median = median_of(v);
      row.min = *std::min_element(v.begin(), v.end());
      row.max = *std::max_element(v.begin(), v.end());
      const double bytes = 4.0 * ((l.in.size() + l.out.size()) * static_cast<double>(n) + l.weight_count());
      row.gflop_per_s = row.median > 0 ? l.flops_per_image() * n / row.median * 1e-9 : 0.0;
      row.gb_per_s = row.median > 0 ? bytes / row.median * 1e-9 : 0.0;
      layers_.push_back(row);
    }
  }

  // Compares the first images of the batch with cpu-ref; relative L2 over their logits.
  void check(SweepRow& row, const float* in, const float* out) {
    const int k = std::min(row.batch, o_.check_images);
    row.check_images = k;
    if (k == 0 || !ref_) {
      row.check = "skipped";
      return;
    }
    const int64_t f = model_.layers[model_.logits_layers() - 1].out.size();
    std::vector<float> want(static_cast<size_t>(f) * k);
    ref_->forward(in, k, model_.logits_layers(), want.data(), nullptr);
    double num = 0, den = 0;
    bool nan = false;
    for (size_t i = 0; i < want.size(); ++i) {
      nan |= std::isnan(out[i]);
      num += (double(out[i]) - want[i]) * (double(out[i]) - want[i]);
      den += double(want[i]) * want[i];
    }
    row.check_rel_l2 = nan ? INFINITY : std::sqrt(num / std::max(den, 1e-30));
    row.check = row.check_rel_l2 <= precision_tolerance(opts_.precision) ? "ok" : "FAIL";
    int agree = 0;  // top-1 agreement: what a reduced precision changes for a user of the predictions
    for (int img = 0; img < k; ++img) {
      const float* o = out + static_cast<size_t>(img) * f;
      const float* w = want.data() + static_cast<size_t>(img) * f;
      agree += std::max_element(o, o + f) - o == std::max_element(w, w + f) - w;
    }
    row.check_top1 = static_cast<double>(agree) / k;
  }

  void progress(int bi, int n, int rep, int reps) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    double done = 0, total = 0;
    for (size_t i = 0; i < o_.batches.size(); ++i) {
      const double w = (o_.batches[i] + 8.0) * (o_.warmup + o_.reps + 1);  // work ~ batch size + fixed cost
      total += w;
      if (static_cast<int>(i) < bi) done += w;
      if (static_cast<int>(i) == bi) done += (o_.batches[i] + 8.0) * rep;
    }
    const double eta = done > 0 ? elapsed * (total - done) / done : -1;
    std::cerr << "\rsweep: batch " << n << " (" << bi + 1 << "/" << o_.batches.size() << "), rep " << rep << "/"
              << reps << ", elapsed " << fmt_eta(elapsed) << ", ETA " << fmt_eta(eta) << "   " << std::flush;
  }

  // The share of batch `b` this rank runs, and where its images start in the pool.
  int my_share(int b, int* first = nullptr) const {
    if (!o_.global_batch) {
      if (first) *first = 0;
      return b;
    }
    const std::vector<int> s = split_evenly(b, world_.size());
    if (first) *first = split_offset(s, world_.rank());
    return s[world_.rank()];
  }

  void run_all(bool quiet_progress) {
    quiet_progress |= !world_.root();
    try {
      run_points(quiet_progress);
    } catch (...) {
      if (!quiet_progress) std::cerr << "\n";  // the error's line starts on a line of its own, not after the progress
      throw;
    }
    if (!quiet_progress) std::cerr << "\n";
    if (world_.parallel()) gather_ranks();
  }

  void run_points(bool quiet_progress) {
    start_ = std::chrono::steady_clock::now();
    for (size_t bi = 0; bi < o_.batches.size(); ++bi) {
      const int global = o_.batches[bi];
      int offset = 0;
      const int n = my_share(global, &offset);
      if (world_.root() && o_.global_batch && !quiet_progress)
        std::cerr << "\rsweep: batch " << global << " over " << world_.size() << " ranks: "
                  << describe_split(split_evenly(global, world_.size())) << "\n";
      const size_t in_floats = static_cast<size_t>(n) * model_.input.size();
      const size_t out_floats = static_cast<size_t>(n) * model_.layers[model_.logits_layers() - 1].out.size();
      std::shared_ptr<float> in, out, in_conv;
      const float* feed = nullptr;  // what the backend reads: in, or its converted copy in_conv (--input-precision)
      auto fill = [&] {
        fill_from_pool(inputs_, model_, n, offset, in.get());
        feed = to_input_type(in.get(), in_conv.get(), in_floats);
      };
      // The next repetition's inputs, in before its clock starts; under mpirun in a step of their own (the agreement
      // that ends it is the barrier the timed step starts from).
      auto next_inputs = [&] {
        offset = (offset + global) % inputs_.count;
        if (world_.parallel()) world_.step([&] { fill(); });
        else fill();
      };
      std::unique_ptr<Backend> backend;
      std::vector<double> cold_step, warm_steps;
      world_.step([&] {  // untimed: host buffers and the first inputs
        in = host_buffer(in_floats, opts_.pinned_host);
        out = host_buffer(out_floats, opts_.pinned_host);
        in_conv = converted_buffer(in_floats);
        fill();
        if (!quiet_progress) progress(static_cast<int>(bi), global, 0, o_.reps);
      });
      // Cold: a fresh backend (allocation, weight upload, cuDNN's algorithm search) and its first pass.
      auto t0 = std::chrono::steady_clock::now();
      world_.step([&] {
        world_.fault_point("cold");
        std::vector<Run> cold = {run_once(backend, n, feed, out.get(), profiler_.get())};
        cold_step.push_back(since(t0));
        attach_records(cold);
        SweepRow cold_row = aggregate(n, "cold", cold, cold);
        check(cold_row, in.get(), out.get());
        rows_.push_back(cold_row);
        layer_rows(n, "cold", cold, *backend);
        backend->set_tracer(nullptr);
        if (separate_) profiler_->pause();  // the warm-up and the timed passes run as without a profiler
        for (int w = 0; w < o_.warmup; ++w) backend->forward(feed, n, model_.logits_layers(), out.get(), nullptr);
        if (!separate_) backend->set_tracer(profiler_.get());
      });
      // At least --reps repetitions, and more until --min-time seconds of them have passed (p99 needs ~100).
      // Under mpirun each repetition ends in an agreement of every rank (world.hpp), so the ranks run the same
      // number of them and each one's step time spans the same interval: the slowest rank's pass.
      std::vector<Run> warm;
      const auto warm_start = std::chrono::steady_clock::now();
      for (bool more = true; more;) {
        const int r = static_cast<int>(warm.size());
        next_inputs();
        if (rep_gap_.count() > 0) std::this_thread::sleep_for(rep_gap_);
        t0 = std::chrono::steady_clock::now();
        more = r + 1 < o_.reps || (since(warm_start) < o_.min_time && r + 1 < o_.max_reps);
        world_.step([&] {
          if (r == 0) world_.fault_point("warm");
          warm.push_back(run_once(backend, n, feed, out.get(), separate_ ? nullptr : profiler_.get()));
        }, &more);
        warm_steps.push_back(since(t0));
        if (!quiet_progress) progress(static_cast<int>(bi), global, std::min(r + 1, o_.reps), o_.reps);
      }
      // --profiled-passes separate: the breakdown's own passes, traced, on fresh inputs as the timed ones were, after
      // one pass that absorbs what turning the tracing back on costs.
      std::vector<Run> profiled;
      if (separate_) {
        world_.step([&] {
          profiler_->resume();
          backend->set_tracer(profiler_.get());
          backend->forward(feed, n, model_.logits_layers(), out.get(), nullptr);
        });
        for (int r = 0; r < profile_reps_; ++r) {
          next_inputs();
          world_.step([&] { profiled.push_back(run_once(backend, n, feed, out.get(), profiler_.get())); });
        }
      }
      std::vector<Run>& traced = separate_ ? profiled : warm;
      world_.step([&] {
        attach_records(traced);
        if (!o_.trace.empty() && !traced.empty())
          trace_runs_.push_back({"batch " + std::to_string(n) + ", warm run 1 of " + std::to_string(traced.size()), traced[0].t0,
                                 traced[0].t1, traced[0].records});
        for (Run& w : traced) {
          for (ProfileRecord& rec : w.records) all_warm_records_.push_back(std::move(rec));
          w.records.clear();
        }
        SweepRow warm_row = aggregate(n, "warm", warm, traced);
        check(warm_row, in.get(), out.get());
        rows_.push_back(warm_row);
        layer_rows(n, "warm", traced, *backend);
        notes_ = backend->notes();
      });
      if (world_.parallel()) {
        steps_.push_back({global, "cold", cold_step});
        steps_.push_back({global, "warm", warm_steps});
        double solo = -1;
        if (!o_.no_baseline) world_.step([&] { if (world_.root()) solo = solo_median(*backend, global); });
        solo_.push_back(solo);
      }
    }
  }

  // The one-rank baseline: rank 0 alone runs what one rank would run for the whole job (the whole batch,
  // under either split), untraced, --reps times after --warmup; the median pass in seconds.
  double solo_median(Backend& b, int batch) {
    auto in = host_buffer(static_cast<size_t>(batch) * model_.input.size(), opts_.pinned_host);
    auto out = host_buffer(static_cast<size_t>(batch) * model_.layers[model_.logits_layers() - 1].out.size(), opts_.pinned_host);
    fill_from_pool(inputs_, model_, batch, 0, in.get());
    const size_t values = static_cast<size_t>(batch) * model_.input.size();
    auto in_conv = converted_buffer(values);
    const float* feed = to_input_type(in.get(), in_conv.get(), values);
    b.set_tracer(nullptr);
    std::vector<double> t;
    for (int r = -1 - o_.warmup; r < o_.reps; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      b.forward(feed, batch, model_.logits_layers(), out.get(), nullptr);
      if (r >= 0) t.push_back(since(t0));
    }
    return median_of(t);
  }

  // Rank 0 collects every rank's rows and step times, and builds per-rank rows plus an aggregate row per
  // point: the step time of a repetition is the slowest rank's.
  void gather_ranks() {
    nlohmann::json mine;
    mine["host"] = world_.host();
    mine["device"] = device_;
    mine["rows"] = nlohmann::json::array();
    for (const SweepRow& r : rows_) mine["rows"].push_back(to_json(r));
    mine["layers"] = nlohmann::json::array();
    for (const LayerRow& r : layers_) mine["layers"].push_back(to_json(r));
    mine["steps"] = nlohmann::json::array();
    for (const Steps& s : steps_) mine["steps"].push_back(s.seconds);
    std::vector<std::string> all = world_.gather(mine.dump());
    if (!world_.root()) return;
    std::vector<nlohmann::json> ranks;
    for (const std::string& s : all) ranks.push_back(nlohmann::json::parse(s));
    std::vector<SweepRow> rows;
    std::vector<LayerRow> layers;
    rank_devices_ = nlohmann::json::array();
    for (size_t k = 0; k < ranks.size(); ++k) {
      rank_devices_.push_back({{"rank", k}, {"host", ranks[k]["host"]}, {"device", ranks[k]["device"]}});
      for (const auto& j : ranks[k]["layers"]) {
        LayerRow l = layer_row_from_json(j);
        l.rank = std::to_string(k);
        layers.push_back(l);
      }
    }
    const int R = world_.size();
    for (size_t p = 0; p < steps_.size(); ++p) {  // (batch, cold|warm) in order, as rows_ on every rank
      SweepRow agg;
      agg.batch = steps_[p].batch;
      agg.run = steps_[p].run;
      agg.rank = "all";
      agg.host = std::to_string(R) + " ranks";
      agg.check = "skipped";
      double top1 = 0;
      for (int k = 0; k < R; ++k) {
        SweepRow r = sweep_row_from_json(ranks[k]["rows"][p]);
        r.rank = std::to_string(k);
        r.host = ranks[k]["host"];
        r.device = device_label(ranks[k]["device"]);
        r.rank_batch = r.batch;
        r.batch = agg.batch;
        rows.push_back(r);
        agg.rank_batch = std::max(agg.rank_batch, r.rank_batch);
        if (r.check == "FAIL" || (r.check == "ok" && agg.check != "FAIL")) agg.check = r.check;
        agg.check_rel_l2 = std::max(agg.check_rel_l2, r.check_rel_l2);
        agg.check_images += r.check_images;
        top1 += r.check_top1 * r.check_images;
      }
      agg.check_top1 = agg.check_images ? top1 / agg.check_images : 0;
      std::vector<double> slowest;  // per repetition, the slowest rank's step
      for (int k = 0; k < R; ++k) {
        const std::vector<double> s = ranks[k]["steps"][p].get<std::vector<double>>();
        if (slowest.size() < s.size()) slowest.resize(s.size(), 0.0);
        for (size_t i = 0; i < s.size(); ++i) slowest[i] = std::max(slowest[i], s[i]);
      }
      int images = 0;  // per step, over every rank: the batch under --global-batch, R times it under --per-rank-batch
      for (size_t k = rows.size() - R; k < rows.size(); ++k) images += rows[k].rank_batch;
      set_times(agg, slowest, images);
      const double solo = solo_[p / 2];
      if (solo > 0 && agg.run == "warm") {
        agg.images_per_s_one_rank = agg.batch / solo;  // one rank alone ran the user's batch size
        agg.scaling_efficiency = agg.images_per_s / (R * agg.images_per_s_one_rank);
      }
      rows.push_back(agg);
    }
    rows_ = std::move(rows);
    layers_ = std::move(layers);
  }

  nlohmann::json metadata() const {
    nlohmann::json j = run_metadata("batchscope sweep", o_.command_line, model_, inputs_.source, o_.backend, id_.variant, id_.fc_variant);
    if (o_.backend == "cudnn") j["cudnn_algos"] = opts_.cudnn_algos;
    j["precision"] = opts_.precision;
    j["input_precision"] = opts_.input_precision;
    j["transfers"] = id_.transfers;
    if (o_.transfers == "overlapped") {
      j["chunk"] = o_.chunk > 0 ? o_.chunk : 0;
      j["chunk_note"] = o_.chunk > 0 ? "images per chunk, as given" : "0: quarters of the batch (at least 32), reached by doubling from a quarter of that (at least 16)";
      j["copy_hidden"] = "copy_hidden_ms: time a copy runs while a kernel runs; the breakdown gives that time to the kernel";
    }
    j["cuda_graph"] = o_.cuda_graph;
    j["host_memory"] = o_.host_memory;
    j["profiler"] = id_.profiler;
    if (profiler_) {
      j["profiled_passes"] = separate_ ? "separate" : "timed";
      j["breakdown"] = separate_ ? "the categories are medians over " + std::to_string(profile_reps_) +
                                       " profiled passes per point, run after the timed ones, which ran untraced: "
                                       "breakdown_ms_median is what they partition; the latency columns are the timed passes'"
                                 : "the categories are medians over the timed passes, profiled; they partition breakdown_ms_median, "
                                   "which is total_ms_median";
    }
    j["batches"] = o_.batches;
    j["reps"] = o_.reps;
    j["min_time_s"] = o_.min_time;
    j["percentiles"] = "linear interpolation between order statistics (numpy's default): p50 is the median; "
                       "with fewer than 100 repetitions p99 lies between the two largest";
    j["warmup"] = o_.warmup;
    j["check"] = {{"reference", o_.check_backend}, {"images", o_.check_images}, {"tolerance_rel_l2", precision_tolerance(opts_.precision)}};
    j["backend_notes"] = notes_;
    j["ranks"] = world_.size();
    if (world_.parallel()) {
      j["split"] = o_.global_batch ? "global-batch" : "per-rank-batch";
      j["rank_devices"] = rank_devices_;
      j["step_time"] = "per repetition: every rank starts after an agreement of all ranks and ends at the next; the "
                       "aggregate ('all') row's times are the slowest rank's step; its images/s the whole batch over it";
      j["baseline"] = o_.no_baseline ? "none" : "rank 0 alone, the whole batch, --reps passes after --warmup, untraced";
      j["summary_of_rank"] = 0;
    }
    j["device"] = gpu_info();
    j["host"] = host_info();
    j["categories"] = breakdown_categories();
    bool failed = false;
    for (const SweepRow& r : rows_) failed |= r.check == "FAIL";
    j["all_checks_passed"] = !failed;
    nlohmann::json points = nlohmann::json::array();  // the latency distribution of every point, in ms
    for (const SweepRow& r : rows_)
      points.push_back({{"batch", r.batch}, {"run", r.run}, {"reps", r.reps}, {"min_ms", r.total_min * 1e3},
                        {"p50_ms", r.total_median * 1e3}, {"p90_ms", r.total_p90 * 1e3}, {"p99_ms", r.total_p99 * 1e3},
                        {"max_ms", r.total_max * 1e3}, {"images_per_s", r.images_per_s}});
    j["latency"] = points;
    nlohmann::json summary = nlohmann::json::array();  // nvprof-style, over every profiled warm run
    for (const SummaryRow& r : summarize(all_warm_records_))
      summary.push_back({{"section", r.section}, {"name", r.name}, {"time_s", r.total}, {"calls", r.calls},
                         {"avg_s", r.total / r.calls}, {"min_s", r.min}, {"max_s", r.max}});
    j["summary_warm_runs"] = summary;
    return j;
  }

  void print_summary(std::ostream& os) const {
    os << "== " << model_.name << " on " << o_.backend << (id_.variant.empty() ? "" : " (conv " + id_.variant + ")") << ", "
       << id_.transfers << ", " << o_.host_memory << " host memory; " << model_.weights_note << " weights\n";
    const bool ranks = world_.parallel();
    if (ranks)
      os << "  " << world_.size() << " ranks, " << (o_.global_batch ? "each batch split across them" : "each running the whole batch")
         << "; rank rows time each rank's own pass, 'all' rows the slowest rank's step between agreements\n";
    os << "  batch  run  " << (ranks ? "rank " : "") << " reps  total ms (median [min, max])         p90 ms      p99 ms     images/s     GFLOP/s  check"
       << (ranks ? "   efficiency" : "") << "\n";
    for (const SweepRow& r : rows_) {
      char buf[300];
      std::snprintf(buf, sizeof buf, "  %5d  %-4s %s%5d  %10.4f [%10.4f, %10.4f]  %10.4f  %10.4f  %11.1f  %10.2f  %s%s%s\n", r.batch,
                    r.run.c_str(), ranks ? (r.rank + std::string(5 - std::min<size_t>(5, r.rank.size()), ' ')).c_str() : "", r.reps, r.total_median * 1e3, r.total_min * 1e3, r.total_max * 1e3, r.total_p90 * 1e3,
                    r.total_p99 * 1e3, r.images_per_s, r.gflop_per_s, r.check.c_str(),
                    r.scaling_efficiency >= 0 ? ("   " + fmt_num(std::round(r.scaling_efficiency * 1000) / 1000)).c_str() : "",
                    r.check == "FAIL" ? " <-- outputs differ from cpu-ref" : "");
      os << buf;
    }
    if (!all_warm_records_.empty()) {
      os << "\n== nvprof-style summary over every warm run of the sweep\n";
      os << format_summary(summarize(all_warm_records_));
    }
  }

  const std::vector<SweepRow>& rows() const { return rows_; }
  const std::vector<LayerRow>& layers() const { return layers_; }
  const SweepIdentity& identity() const { return id_; }
  const std::vector<ProfileRecord>& warm_records() const { return all_warm_records_; }
  // --trace: the first warm run of every batch size, as Chrome trace-event JSON.
  void write_trace() const {
    if (o_.trace.empty()) return;
    nlohmann::json meta = {{"tool", "batchscope"}, {"command", o_.command_line}, {"model", model_.name}, {"backend", o_.backend},
                           {"transfers", id_.transfers}, {"precision", opts_.precision}, {"profiler", id_.profiler},
                           {"device", gpu_ ? device_label(device_) : std::string("cpu")}, {"commit", git_commit()},
                           {"time_unit", "microseconds from the start of each run"}};
    if (world_.parallel()) meta["ranks"] = "rank 0's runs only";
    write_text_atomic(o_.trace, chrome_trace(trace_runs_, model_, meta).dump() + "\n");
  }
  const Model& model() const { return model_; }


 private:
  SweepOptions o_;
  bool gpu_ = false;
  Model model_;
  BackendOptions opts_;
  std::unique_ptr<Backend> probe_, ref_;
  std::unique_ptr<Profiler> profiler_;
  bool separate_ = false;  // --profiled-passes separate (resolved): the timed passes run untraced
  int profile_reps_ = 0;   // separate: profiled passes per point
  ImagePool inputs_;
  SweepIdentity id_;
  std::vector<SweepRow> rows_;
  std::vector<LayerRow> layers_;
  std::vector<ProfileRecord> all_warm_records_;
  std::vector<TraceRun> trace_runs_;
  std::vector<std::string> notes_;
  std::chrono::steady_clock::time_point start_;
  // BATCHSCOPE_REP_GAP_US: an untimed pause before every warm repetition, a knob for the profiler-overhead
  // experiments (does CUPTI's worker, catching up in the pause, stop slowing the next pass?); not for normal runs.
  std::chrono::microseconds rep_gap_{[] {
    const char* g = std::getenv("BATCHSCOPE_REP_GAP_US");
    return g ? std::max(0L, std::atol(g)) : 0L;
  }()};
  World& world_ = World::get();
  nlohmann::json device_, rank_devices_;
  struct Steps {
    int batch;
    std::string run;
    std::vector<double> seconds;
  };
  std::vector<Steps> steps_;  // under mpirun: this rank's step time of every repetition, per point
  std::vector<double> solo_;  // per batch size: rank 0's one-rank median pass (seconds), -1 when not measured
};

}  // namespace

int run_sweep(SweepOptions o) {
  World& world = World::get();
  world.step([&] {
    if (world.root()) check_writable(o.out, "--out");
    if (world.root() && !o.trace.empty()) check_writable(o.trace, "--trace");
  });
  SweepDriver d(o);
  d.prepare();
  d.run_all(false);
  if (!world.root()) return 0;  // rank 0 writes everything
  const int R = world.size();
  write_text_atomic(sibling(o.out, ".layers.csv"), layers_csv(d.identity(), d.layers(), R));
  write_text_atomic(sibling(o.out, ".json"), d.metadata().dump(2) + "\n");
  d.write_trace();
  write_text_atomic(o.out, sweep_csv(d.identity(), d.rows(), R));  // last: its presence means the set is complete
  d.print_summary(std::cout);
  std::cout << "\nwrote " << o.out << ", " << sibling(o.out, ".layers.csv") << ", " << sibling(o.out, ".json") << "\n";
  bool failed = false;
  for (const SweepRow& r : d.rows()) failed |= r.check == "FAIL";
  if (failed) std::cerr << "batchscope: warning: some sweep points differ from cpu-ref (check column FAIL)\n";
  return failed ? 3 : 0;
}

int run_profile(SweepOptions o) {
  o.reps = 1;
  o.profiled_passes = "timed";  // the one warm run is the profiled one
  o.check_images = 0;
  if (!o.trace.empty()) check_writable(o.trace, "--trace");
  SweepDriver d(o);
  d.prepare();
  d.run_all(true);
  d.write_trace();
  const SweepRow& warm = d.rows().back();
  std::cout << "== " << d.model().name << ", backend " << d.identity().backend << ", batch " << warm.batch << ", "
            << d.identity().transfers << ", " << d.identity().host_memory << " host memory; total "
            << warm.total_median * 1e3 << " ms (warm run; the cold run took " << d.rows().front().total_median * 1e3
            << " ms)\n\n";
  std::cout << format_summary(summarize(d.warm_records())) << "\n== Breakdown of the run's wall time (ms)\n";
  for (const std::string& c : breakdown_categories())
    if (warm.categories.count(c) && warm.categories.at(c) > 0)
      std::printf("  %-14s %10.4f  %5.1f%%\n", c.c_str(), warm.categories.at(c) * 1e3, 100.0 * warm.categories.at(c) / warm.total_median);
  std::cout << "\n== Layers (ms)\n";
  for (const LayerRow& l : d.layers())
    if (l.run == "warm") std::printf("  %-18s %-16s %10.4f  %s\n", l.layer.c_str(), l.type.c_str(), l.median * 1e3, l.implementation.c_str());
  return 0;
}

}  // namespace bs
