// `batchscope sweep` and `batchscope profile`: the measurements. Per batch size, a cold run (a fresh backend:
// allocation, weight upload, cuDNN's algorithm search, first pass) and --reps warm runs after --warmup untimed ones,
// inputs rotated between repetitions; the breakdown from the profiler's records of the timed passes, or of profiled
// passes of their own (--profiled-passes separate). Under mpirun every rank runs its share in lock step (world.hpp).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <thread>
#include <tuple>
#include <unistd.h>

#include "app/commands/sweep_driver.hpp"
#include "app/exec/input_precision.hpp"
#include "app/exec/interrupt.hpp"
#include "app/results/latency_stats.hpp"
#include "app/results/metadata.hpp"
#include "kernels/exec/device_info.hpp"
#include "kernels/model/quantize.hpp"
#include "weights_tools/error.hpp"

namespace bs {
namespace {

std::string fmt_eta(double s) {
  char buf[32];
  if (s < 0 || !std::isfinite(s)) return "--:--";
  std::snprintf(buf, sizeof buf, "%02d:%02d", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  return buf;
}

}  // namespace

void SweepDriver::prepare() {
  backend_ = o_.run.resolve_backend();
  o_.validate(backend_, world_.size());
  gpu_ = is_gpu(backend_);
  world_.step([&] { prepare_rank(); });
}

double layer_bytes(const Layer& l, int n, Precision p, bool int8_weights, const Shape* out) {
  const double value = is_half(p) ? 2.0 : 4.0;
  const double activations = value * (l.in.size() + (out ? *out : l.out).size()) * static_cast<double>(n);
  const auto* f = std::get_if<FcParams>(&l.op);
  if (!int8_weights || !f) return activations + value * static_cast<double>(l.weight_count());
  // One byte per weight, FP32 biases and FP32 scales (one per output).
  return activations + static_cast<double>(f->weight.size()) + 4.0 * static_cast<double>(f->bias.size() + f->outputs);
}

double dram_gb_per_s(const nlohmann::json& gpu) {
  if (!gpu.is_object() || !gpu.contains("memory_clock_mhz") || !gpu.contains("memory_bus_bits")) return 0;
  const double mhz = gpu["memory_clock_mhz"].get<double>(), bits = gpu["memory_bus_bits"].get<double>();
  return mhz > 0 && bits > 0 ? mhz * 2 * bits / 8 * 1e-3 : 0;
}

double peak_gflop_per_s(const nlohmann::json& gpu, Precision p) {
  if (!gpu.is_object() || !gpu.contains("compute_capability") || !gpu.contains("sm_count") || !gpu.contains("sm_clock_mhz")) return 0;
  const std::string cc = gpu["compute_capability"].get<std::string>();
  const int k = p == Precision::fp32 ? 0 : p == Precision::tf32 ? 1 : 2;
  static const std::map<std::string, std::array<double, 3>> fma_per_clock = {{"9.0", {128, 1024, 2048}}, {"8.0", {64, 512, 1024}}};
  const auto it = fma_per_clock.find(cc);
  const double sms = gpu["sm_count"].get<double>(), mhz = gpu["sm_clock_mhz"].get<double>();
  if (it == fma_per_clock.end() || sms <= 0 || mhz <= 0) return 0;
  return 2 * it->second[k] * sms * mhz * 1e-3;
}

// What each rank prepares for itself (under mpirun a failure here on one rank stops them all).
void SweepDriver::prepare_rank() {
  if (gpu_) place_rank_on_gpu(world_);
  model_ = load_model_arg(o_.model_dir);
  opts_ = o_.run.options(backend_);
  if (!gpu_) share_cores(world_, opts_);
  world_.fault_point("load");
  if (gpu_) init_gpu();
  if (gpu_) {
    const nlohmann::json gpu = gpu_info();
    peak_gb_per_s_ = dram_gb_per_s(gpu);
    peak_gflop_per_s_ = peak_gflop_per_s(gpu, opts_.precision);
  }
  device_ = rank_device(gpu_);
  exec_ = std::make_unique<Executor>(model_, backend_, opts_);
  std::vector<int> mine;
  for (int b : o_.batches) mine.push_back(my_share(b));
  exec_->check(mine);  // every batch size planned: an unsupported layer or a batch that does not fit, refused now
  for (int b : mine) check_host_memory(b);
  if (!o_.no_profile) profiler_ = gpu_ ? make_cupti_profiler() : make_steady_profiler();
  separate_ = profiler_ && (o_.profiled_passes == ProfiledPasses::separate || (o_.profiled_passes == ProfiledPasses::automatic && gpu_));
  profile_reps_ = o_.profile_reps > 0 ? o_.profile_reps : std::min(o_.reps, 100);
  inputs_ = make_image_pool(model_, 2 * *std::max_element(o_.batches.begin(), o_.batches.end()));
  if (o_.global_batch) inputs_.count = std::max(inputs_.count, 1);
  if (o_.check_images > 0) {
    if (opts_.weights == WeightFormat::int8) {
      ref_model_ = quantize_weights(model_);
      const QuantizationSummary q = quantization_summary(model_, ref_model_);
      quant_ = {{"scheme", "symmetric, per output channel, q in [-127, 127], scale = largest magnitude / 127"},
                {"weights_rel_l2", q.rel_l2}, {"worst_layer", q.worst_layer}, {"worst_layer_rel_l2", q.worst_layer_rel_l2}};
      ref_ = Executor(ref_model_, o_.check_backend, BackendOptions{}).open();
      fp32_ref_ = Executor(model_, o_.check_backend, BackendOptions{}).open();
    } else {
      ref_ = Executor(model_, o_.check_backend, BackendOptions{}).open();
    }
  }
  id_.model = model_.name;
  id_.weights = model_.weights_note + (opts_.weights == WeightFormat::int8 ? " | int8 per output channel" : "");
  id_.backend = name_of(backend_);
  id_.variant = o_.run.conv_label(backend_);
  id_.fc_variant = o_.run.fc_label(backend_);
  id_.transfers = gpu_ ? transfers_label(opts_.transfers, opts_.cuda_graph, opts_.input_precision, opts_.copies) : "host";
  id_.host_memory = opts_.pinned_host ? "pinned" : "pageable";
  id_.precision = name_of(opts_.precision);
  id_.profiler = profiler_ ? profiler_->kind() : "off";
}

// Refuses, before trying, a batch the host memory cannot hold, saying how much it needs and how much there is (the
// device's memory is the planner's to refuse).
void SweepDriver::check_host_memory(int n) const {
  const double gib = 1024.0 * 1024 * 1024;
  const size_t host = sizeof(float) * static_cast<size_t>(n) * (model_.input.size() + 3 * max_activation());
  const double avail = static_cast<double>(sysconf(_SC_AVPHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  if (host > avail) {
    char buf[200];
    std::snprintf(buf, sizeof buf, "batch %d needs %.2f GiB of host memory; %.2f GiB are available", n, host / gib, avail / gib);
    fail("--batches", buf);
  }
}

size_t SweepDriver::max_activation() const {
  size_t m = 0;
  for (const Layer& l : model_.layers) m = std::max<size_t>(m, l.out.size());
  return m;
}

// --input-precision u8 / fp16 / bf16: the input converted into dst (bytes or 16-bit words), before the clock starts;
// the reference keeps reading the FP32 values. Without one (dst null): src as it is.
const float* SweepDriver::to_input_type(const float* src, float* dst, size_t values) const {
  if (!dst) return src;
  convert_input_bytes(src, values, opts_.input_precision, dst);
  return dst;
}

// A host buffer for the converted copy of `values` input values; null for an FP32 input.
std::shared_ptr<float> SweepDriver::converted_buffer(size_t values) const {
  if (opts_.input_precision == InputPrecision::fp32) return nullptr;
  return host_buffer(input_buffer_floats(values, opts_.input_precision), opts_.pinned_host);
}

// One forward pass of n images, a profiled run where `prof` is given. `backend` null: a cold run that creates and loads
// the backend inside the measurement.
SweepRun SweepDriver::run_once(std::unique_ptr<Backend>& backend, int n, const float* in, float* out, Profiler* prof) {
  SweepRun r;
  if (prof) prof->begin_run();
  auto t0 = std::chrono::steady_clock::now();
  if (!backend) {
    backend = exec_->open();
    backend->set_tracer(profiler_.get());
  }
  // GPU layer times come from the profiler's records, so the backend adds no events of its own; the CPU backends time
  // layers with the steady clock either way.
  backend->forward(in, n, model_.logits_layers(), out, gpu_ ? nullptr : &r.stats);
  r.total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (prof) prof->end_run();
  return r;
}

// Hands the profiler's records to the runs just made (in order) and computes their breakdowns.
void SweepDriver::attach_records(std::vector<SweepRun>& runs) {
  if (!profiler_) return;
  std::vector<Profiler::Run> got = profiler_->collect();
  for (size_t i = 0; i < runs.size() && i < got.size(); ++i) {
    runs[i].records = std::move(got[i].records);
    runs[i].t0 = got[i].t0;
    runs[i].t1 = got[i].t1;
    runs[i].categories = breakdown(runs[i].records, model_, got[i].t0, got[i].t1);
    runs[i].copy_hidden = hidden_copy_seconds(runs[i].records, got[i].t0, got[i].t1);
    // A layer's time: its GPU activities (kernels, and copies in per-layer mode), or on the CPU its phase: the records
    // the breakdown and the trace (--trace) are made of, so that all three agree.
    runs[i].stats.layer_seconds.assign(model_.layers.size(), 0.0);
    for (const ProfileRecord& r : runs[i].records)
      if (r.layer >= 0 && r.type != RecordType::api && (r.type == RecordType::cpu) != gpu_) runs[i].stats.layer_seconds[r.layer] += r.end - r.start;
  }
}

// A point's repetitions (seconds per pass of `images` images): reps, median, min, max, p90, p99, images/s, GFLOP/s.
void SweepDriver::set_times(SweepRow& row, const std::vector<double>& seconds, int images) const {
  const LatencySummary lat = summarize_latencies(seconds);
  std::tie(row.reps, row.total_median, row.total_min, row.total_max, row.total_p90, row.total_p99) =
      std::tuple(lat.count, lat.p50, lat.min, lat.max, lat.p90, lat.p99);
  row.images_per_s = images / lat.p50;
  row.gflop_per_s = model_.flops_per_image() * images / lat.p50 * 1e-9;
}

// A point's row: its times from the timed runs, its breakdown from the profiled ones (the same runs unless
// --profiled-passes separate), with their own median, the time the breakdown partitions.
SweepRow SweepDriver::aggregate(int n, const std::string& kind, const std::vector<SweepRun>& timed, const std::vector<SweepRun>& runs) {
  SweepRow row;
  row.batch = n;
  row.run = kind;
  std::vector<double> totals;
  for (const SweepRun& r : timed) totals.push_back(r.total);
  set_times(row, totals, n);
  if (profiler_) {
    totals.clear();
    for (const SweepRun& r : runs) totals.push_back(r.total);
    row.breakdown_reps = static_cast<int>(runs.size());
    row.breakdown_median = median_of(totals);
    for (const std::string& c : breakdown_categories()) {
      std::vector<double> v;
      for (const SweepRun& r : runs) v.push_back(r.categories.at(c));
      row.categories[c] = median_of(v);
    }
    std::vector<double> v;
    for (const SweepRun& r : runs) v.push_back(r.copy_hidden);
    row.copy_hidden = median_of(v);
  }
  return row;
}

void SweepDriver::layer_rows(int n, const std::string& kind, const std::vector<SweepRun>& runs, const Backend& b) {
  const size_t layers = model_.logits_layers();
  for (size_t i = 0; i < layers; ++i) {
    const Layer& l = model_.layers[i];
    std::vector<double> v;
    for (const SweepRun& r : runs) v.push_back(i < r.stats.layer_seconds.size() ? r.stats.layer_seconds[i] : 0.0);
    LayerRow row;
    row.batch = n;
    row.run = kind;
    row.layer = l.name;
    row.type = l.type_name();
    row.implementation = b.describe(i);
    row.median = median_of(v);
    row.min = *std::min_element(v.begin(), v.end());
    row.max = *std::max_element(v.begin(), v.end());
    // fc v15 reads 8-bit rows and a scale per output.
    const bool int8_rows = row.implementation.find("stream-int8") != std::string::npos;
    const auto& steps = b.planner().pass(n).steps;
    size_t last = i;  // the last layer fused into this one
    while (last + 1 < layers && steps.at(last + 1).fused_into == static_cast<int>(i)) ++last;
    const double bytes = layer_bytes(l, n, gpu_ ? opts_.precision : Precision::fp32, int8_rows, &model_.layers[last].out);
    row.gflop_per_s = row.median > 0 ? l.flops_per_image() * n / row.median * 1e-9 : 0.0;
    row.gb_per_s = row.median > 0 ? bytes / row.median * 1e-9 : 0.0;
    if (peak_gb_per_s_ > 0) row.bandwidth_pct = 100.0 * row.gb_per_s / peak_gb_per_s_;
    if (peak_gflop_per_s_ > 0) row.peak_pct = 100.0 * row.gflop_per_s / peak_gflop_per_s_;
    layers_.push_back(row);
  }
}


// Compares the first images of the batch with the reference; relative L2 over their logits.
void SweepDriver::check(SweepRow& row, const float* in, const float* out) {
  const int k = std::min(row.batch, o_.check_images);
  row.check_images = k;
  if (k == 0 || !ref_) {
    row.check = "skipped";
    return;
  }
  const int64_t f = model_.layers[model_.logits_layers() - 1].out.size();
  std::vector<float> want(static_cast<size_t>(f) * k);
  ref_->forward(in, k, model_.logits_layers(), want.data(), nullptr);
  const Agreement a = agreement(out, want, k, f);
  row.check_rel_l2 = a.rel_l2;
  row.check = row.check_rel_l2 <= precision_tolerance(opts_.precision) ? "ok" : "FAIL";
  row.check_top1 = static_cast<double>(a.top1) / k;
  if (fp32_ref_ && !quant_.contains("logits_rel_l2_vs_fp32")) {  // once: this run against the unquantised weights
    fp32_ref_->forward(in, k, model_.logits_layers(), want.data(), nullptr);
    const Agreement q = agreement(out, want, k, f);
    quant_["logits_rel_l2_vs_fp32"] = q.rel_l2;
    quant_["top1_agreement_vs_fp32"] = static_cast<double>(q.top1) / k;
    quant_["images"] = k;
    quant_["batch"] = row.batch;
    std::cerr << "\nsweep: int8 weights: batch " << row.batch << "'s logits are " << q.rel_l2
              << " relative L2 from the FP32 weights' (" << name_of(o_.check_backend) << "), top-1 agreement " << q.top1 << "/" << k
              << " images\n";
  }
}

void SweepDriver::progress(int bi, int n, int rep, int reps) {
  const double elapsed = since(start_);
  double done = 0, total = 0;
  for (size_t i = 0; i < o_.batches.size(); ++i) {
    if (std::count(held_.begin(), held_.end(), o_.batches[i])) continue;
    const double w = (o_.batches[i] + 8.0) * (o_.warmup + o_.reps + 1);  // work ~ batch size + fixed cost
    total += w;
    if (static_cast<int>(i) < bi) done += w;
    if (static_cast<int>(i) == bi) done += (o_.batches[i] + 8.0) * rep;
  }
  const double eta = done > 0 ? elapsed * (total - done) / done : -1;
  std::cerr << "\rsweep: batch " << n << " (" << bi + 1 << "/" << o_.batches.size() << "), rep " << rep << "/" << reps << ", elapsed "
            << fmt_eta(elapsed) << ", ETA " << fmt_eta(eta) << "   " << std::flush;
}

// The share of batch `b` this rank runs, and where its images start in the pool.
int SweepDriver::my_share(int b, int* first) const {
  if (!o_.global_batch) {
    if (first) *first = 0;
    return b;
  }
  const std::vector<int> s = split_evenly(b, world_.size());
  if (first) *first = split_offset(s, world_.rank());
  return s[world_.rank()];
}

bool SweepDriver::stop_now() {
  const bool mine = interrupted();
  return world_.parallel() ? world_.max(mine ? 1.0 : 0.0) > 0 : mine;
}

void SweepDriver::run_all(bool quiet_progress) {
  quiet_progress |= !world_.root();
  start_ = std::chrono::steady_clock::now();
  try {
    for (size_t bi = 0; bi < o_.batches.size() && !interrupted_; ++bi) {
      if (std::count(held_.begin(), held_.end(), o_.batches[bi])) continue;  // --resume: measured before
      if (stop_now() || !run_point(bi, quiet_progress)) interrupted_ = true;
      else ++measured_;
      interrupt_point();  // BATCHSCOPE_INTERRUPT_AFTER counts complete batch sizes
    }
  } catch (...) {
    if (!quiet_progress) std::cerr << "\n";  // the error's line starts on a line of its own, not after the progress
    throw;
  }
  if (!quiet_progress) std::cerr << "\n";
  if (world_.parallel()) gather_ranks();
  sort_points();
}

bool SweepDriver::run_point(size_t bi, bool quiet_progress) {
  const int global = o_.batches[bi];
  int offset = 0;
  const int n = my_share(global, &offset);
  if (world_.root() && o_.global_batch && !quiet_progress)
    std::cerr << "\rsweep: batch " << global << " over " << world_.size() << " ranks: " << describe_split(split_evenly(global, world_.size()))
              << "\n";
  const size_t in_floats = static_cast<size_t>(n) * model_.input.size();
  const size_t out_floats = static_cast<size_t>(n) * model_.layers[model_.logits_layers() - 1].out.size();
  std::shared_ptr<float> in, out, in_conv;
  const float* feed = nullptr;  // what the backend reads: in, or its converted copy in_conv (--input-precision)
  auto fill = [&] {
    fill_from_pool(inputs_, model_, n, offset, in.get());
    feed = to_input_type(in.get(), in_conv.get(), in_floats);
  };
  // The next repetition's inputs, in before its clock starts; under mpirun in a step of their own (the agreement that
  // ends it is the barrier the timed step starts from).
  auto next_inputs = [&] {
    offset = (offset + global) % inputs_.count;
    if (world_.parallel()) world_.step([&] { fill(); });
    else fill();
  };
  const size_t rows_before = rows_.size(), layers_before = layers_.size();
  auto abandon = [&] {  // an interrupted point keeps nothing: its rows would mix measured and missing repetitions
    rows_.resize(rows_before);
    layers_.resize(layers_before);
    if (profiler_) profiler_->collect();
    return false;
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
    std::vector<SweepRun> cold = {run_once(backend, n, feed, out.get(), profiler_.get())};
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
  // At least --reps repetitions, and more until --min-time seconds of them have passed (p99 needs ~100). Under mpirun
  // each repetition ends in an agreement of every rank (world.hpp), so the ranks run the same number of them and each
  // one's step time spans the same interval: the slowest rank's pass.
  std::vector<SweepRun> warm;
  const auto warm_start = std::chrono::steady_clock::now();
  const std::chrono::microseconds gap(o_.rep_gap_us);
  for (bool more = true; more;) {
    if (stop_now()) {
      if (separate_) profiler_->resume();
      return abandon();
    }
    const int r = static_cast<int>(warm.size());
    next_inputs();
    if (gap.count() > 0) std::this_thread::sleep_for(gap);
    t0 = std::chrono::steady_clock::now();
    more = r + 1 < o_.reps || (since(warm_start) < o_.min_time && r + 1 < o_.max_reps);
    world_.step([&] {
      if (r == 0) world_.fault_point("warm");
      warm.push_back(run_once(backend, n, feed, out.get(), separate_ ? nullptr : profiler_.get()));
    }, &more);
    warm_steps.push_back(since(t0));
    if (!quiet_progress) progress(static_cast<int>(bi), global, std::min(r + 1, o_.reps), o_.reps);
  }
  // --profiled-passes separate: the breakdown's own passes, traced, on fresh inputs as the timed ones were, after one
  // pass that absorbs what turning the tracing back on costs.
  std::vector<SweepRun> profiled;
  if (separate_) {
    world_.step([&] {
      profiler_->resume();
      backend->set_tracer(profiler_.get());
      backend->forward(feed, n, model_.logits_layers(), out.get(), nullptr);
    });
    for (int r = 0; r < profile_reps_; ++r) {
      if (stop_now()) return abandon();
      next_inputs();
      world_.step([&] { profiled.push_back(run_once(backend, n, feed, out.get(), profiler_.get())); });
    }
  }
  std::vector<SweepRun>& traced = separate_ ? profiled : warm;
  world_.step([&] {
    attach_records(traced);
    if (!o_.trace.empty() && !traced.empty())
      trace_runs_.push_back({"batch " + std::to_string(n) + ", warm run 1 of " + std::to_string(traced.size()), traced[0].t0,
                             traced[0].t1, traced[0].records});
    for (SweepRun& w : traced) {
      for (ProfileRecord& rec : w.records) all_warm_records_.push_back(std::move(rec));
      w.records.clear();
    }
    SweepRow warm_row = aggregate(n, "warm", warm, traced);
    check(warm_row, in.get(), out.get());
    rows_.push_back(warm_row);
    layer_rows(n, "warm", traced, *backend);
    notes_ = backend->notes();
    plans_[std::to_string(global)] = plan_json(exec_->plan(n), model_);
  });
  if (world_.parallel()) {
    steps_.push_back({global, "cold", cold_step});
    steps_.push_back({global, "warm", warm_steps});
    double solo = -1;
    if (!o_.no_baseline) world_.step([&] { if (world_.root()) solo = solo_median(*backend, global); });
    solo_.push_back(solo);
  }
  return true;
}

// The one-rank baseline: rank 0 alone runs what one rank would run for the whole job (the whole batch, under either
// split), untraced, --reps times after --warmup; the median pass in seconds.
double SweepDriver::solo_median(Backend& b, int batch) {
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

}  // namespace bs
