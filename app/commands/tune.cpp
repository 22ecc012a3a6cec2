#include "app/commands/tune.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <random>
#include <set>

#include "app/cli/flags.hpp"
#include "app/exec/datasets.hpp"
#include "app/exec/executor.hpp"
#include "app/exec/interrupt.hpp"
#include "app/results/latency_stats.hpp"
#include "app/results/metadata.hpp"
#include "app/results/results_io.hpp"
#include "kernels/exec/device_info.hpp"
#include "kernels/model/quantize.hpp"
#include "kernels/plan/registry.hpp"
#include "kernels/plan/tuning.hpp"
#include "weights_tools/error.hpp"

namespace bs {
namespace {

// --conv-variants / --fc-variants: versions of one menu, by number or name (not auto).
CLI::Option* add_versions(CLI::App& app, const std::string& flag, std::vector<int>& target, LayerKind op, const std::string& help) {
  return app
      .add_option_function<std::string>(
          flag,
          [&target, flag, op](const std::string& v) {
            target.clear();
            size_t at = 0;
            while (true) {
              const size_t comma = v.find(',', at);
              const std::string item = v.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
              int n = 0;
              try {
                n = parse_version(op, item, flag);
              } catch (const Error& e) {
                const std::string m = e.what();
                throw CLI::ValidationError(flag, m.substr(m.find(": ") + 2));
              }
              if (n == kAutoVariant) throw CLI::ValidationError(flag, "name versions, not auto");
              target.push_back(n);
              if (comma == std::string::npos) break;
              at = comma + 1;
            }
          },
          help)
      ->type_name("V,V,...");
}

}  // namespace

void TuneOptions::add_to(CLI::App& app) {
  cmd = &app;
  app.add_option("--model", model_dir, "model folder (or its model.json, or a shipped model: ece408, alexnet)")->type_name("DIR");
  add_int_list(app, "--batches", batches, "batch sizes, comma-separated");
  add_enum(app, "--precision", precision, "fp32 | tf32 | fp16 | bf16: time the versions of that precision (a table holds all, each "
                                          "under its own signatures)");
  add_enum(app, "--weights", weights, "native | int8: time the versions with these weights (--weights int8 of the run "
                                      "commands: 8-bit versions such as fc v15 join; the table holds each under its own signatures)");
  add_int(app, "--reps", reps, "timed repetitions per (layer, batch, version); the median counts (default: 5)", 1, 100000);
  add_int(app, "--warmup", warmup, "untimed runs first (default: 2)", 0, 100000);
  app.add_option("--out", out, "where to write the table (default: this device's file in ~/.cache/batchscope, which auto reads "
                               "without --tuning)")->type_name("FILE");
  add_versions(app, "--conv-variants", conv_variants, LayerKind::conv, "only these convolution versions (default: every one)");
  add_versions(app, "--fc-variants", fc_variants, LayerKind::fc, "only these fully connected versions (default: every one)");
  add_double(app, "--error-budget", error_budget,
             "a version whose output differs from the reference's by more than this relative L2 is timed but not chosen "
             "(default: the precision's per-layer budget: fp32 1e-6, tf32 and fp16 2e-3, bf16 1.6e-2)", 1e-12, 1.0);
  add_double(app, "--cut", cut, "a version slower than CUT x the best so far in its first run after the one that prepares its weights is not repeated (default: 20)",
             1.000001, 1e9);
  app.footer("tune needs an NVIDIA GPU (it times the cuda backend's versions there).\n"
             "Examples (shipped models resolve by name from any directory):\n  batchscope tune --model alexnet\n"
             "  batchscope tune --model alexnet --batches 1,16,128,1024 --conv-variants 12,13,14 --out t.json\n"
             "  batchscope sweep --model alexnet --backend cuda --tuning t.json --out r.csv");
}

void TuneOptions::validate() const {
  require(*cmd, "--model", "the model folder, its model.json, or a shipped model (ece408, alexnet)");
  for (int n : conv_variants) check_version_precision(LayerKind::conv, n, precision, "--conv-variants");
  for (int n : fc_variants) check_version_precision(LayerKind::fc, n, precision, "--fc-variants");
  for (int n : conv_variants) check_version_weights(LayerKind::conv, n, weights, "--conv-variants");
  for (int n : fc_variants) check_version_weights(LayerKind::fc, n, weights, "--fc-variants");
}

namespace {

// Layer i with what a version may fuse into it (tuning_signature's layers), as a model of its own.
Model segment(const Model& m, size_t i) {
  Model s;
  s.name = m.name + ":" + m.layers[i].name;
  s.dir = m.dir;
  s.input = m.layers[i].in;
  s.layers.push_back(m.layers[i]);
  size_t j = i + 1;
  if (j < m.layers.size() && m.layers[j].kind() == LayerKind::act) s.layers.push_back(m.layers[j++]);
  if (m.layers[i].kind() == LayerKind::conv && j < m.layers.size() && m.layers[j].kind() == LayerKind::pool &&
      tuning_signature(m, i).find("+max_pool2x2") != std::string::npos)
    s.layers.push_back(m.layers[j]);
  infer_shapes(s, s.name);
  return s;
}

// The registry's versions of the menu that run in the precision (tf32: fc v5 too, the memory-bound path it takes for a
// few images), or the ones given.
std::vector<int> candidates(LayerKind op, const std::vector<int>& given, Precision precision, WeightFormat weights) {
  if (!given.empty()) return given;
  std::vector<int> v;
  for (const Impl* i : registry().menu(op, BackendKind::cuda))
    if (i->runs_in(precision) && i->takes(weights)) v.push_back(i->number);
  return v;
}

constexpr int kErrorImages = 2;  // images per (layer, batch) whose outputs are checked against the reference

// One version on one segment at batch n: its median device time (ms), or why it was not timed.
struct Timing {
  double ms = 0;
  std::string skipped;
};
Timing time_version(const Model& seg, bool conv, int version, int n, const TuneOptions& o, double best_ms, const std::vector<float>& in,
                    std::vector<float>& out) {
  BackendOptions bo;
  bo.precision = o.precision;
  bo.weights = o.weights;
  (conv ? bo.conv_variant : bo.fc_variant) = version;
  const Support s = layer_support(BackendKind::cuda, bo, seg.layers[0]);
  if (!s.ok) return {0, s.reason};
  std::unique_ptr<Executor> ex;
  try {
    ex = std::make_unique<Executor>(seg, BackendKind::cuda, bo);
    ex->plan(n);  // refuses what does not fit the device's free memory
  } catch (const Error& e) {
    const std::string m = e.what();
    return {0, m.substr(m.find(": ") + 2)};
  }
  std::unique_ptr<Backend> b = ex->open();
  auto run = [&] {
    RunStats st;
    b->forward(in.data(), n, seg.layers.size(), out.data(), &st);
    double sum = 0;
    for (double x : st.layer_seconds) sum += x;
    return sum * 1e3;
  };
  run();  // makes the prepared weights (the layout the version reads): not a timed run, nor the cut's measure
  const double first = run();
  if (best_ms > 0 && first > o.cut * best_ms) return {first, ""};
  for (int w = 2; w < o.warmup; ++w) run();
  std::vector<double> times;
  for (int r = 0; r < o.reps; ++r) times.push_back(run());
  return {median_of(times), ""};
}

}  // namespace

int run_tune(const TuneOptions& o) {
  o.validate();
  if (const std::string why = gpu_absence(); !why.empty())
    fail("tune", "times the cuda backend's kernels on an NVIDIA GPU, and " + why);
  const Model m = load_model_arg(o.model_dir);
  init_gpu();
  const nlohmann::json dev = gpu_info();
  TuningTable t;
  t.device.name = dev.at("name").get<std::string>();
  t.device.sm_count = dev.value("sm_count", 0);
  t.device.compute_capability = dev.value("compute_capability", std::string());
  t.device.driver = std::to_string(dev.value("driver", 0));
  t.commit = git_commit();
  t.date = utc_now();
  t.command = o.command_line;
  t.model = m.name;
  const nlohmann::json env = environment_info();
  for (auto it = env.begin(); it != env.end(); ++it) t.environment[it.key()] = it.value().get<std::string>();
  const std::string out = o.out.empty() ? default_tuning_path(t.device.name) : o.out;
  if (o.out.empty()) std::filesystem::create_directories(std::filesystem::path(out).parent_path());
  check_writable(out, "--out");
  const TuningTable before = std::filesystem::exists(out) ? read_tuning(out, t.device.name) : TuningTable{};  // a wrong file: now

  const double budget = o.error_budget > 0 ? o.error_budget : layer_error_budget(o.precision);
  std::cout << "each version: median ms; * its error (relative L2 against the cpu backend on the first " << kErrorImages
            << " images) is above the budget " << budget << ", so it is not chosen\n";
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::map<std::string, std::vector<TuningEntry>> done;  // by signature: layers of the same shape are timed once
  for (size_t i = 0; i < m.layers.size() && !t.interrupted; ++i) {
    const Layer& l = m.layers[i];
    const bool conv = l.kind() == LayerKind::conv;
    if (!conv && l.kind() != LayerKind::fc) continue;
    const std::string sig = tuning_signature(m, i, o.precision, o.weights);
    if (auto it = done.find(sig); it != done.end()) {
      for (TuningEntry e : it->second) {
        e.layer = l.name;
        t.entries.push_back(e);
      }
      continue;
    }
    const Model seg = segment(m, i);
    // The reference: the cpu backend on the same weights (with int8, the same quantised ones), first images only.
    const Model ref_seg = o.weights == WeightFormat::int8 ? quantize_weights(seg) : seg;
    const std::unique_ptr<Backend> ref = Executor(ref_seg, BackendKind::cpu, BackendOptions{}).open();
    const size_t per_image = static_cast<size_t>(seg.output().size());
    std::cout << l.name << "  [" << sig << "]\n";
    for (int n : o.batches) {
      if (t.interrupted) break;
      std::vector<float> in(static_cast<size_t>(seg.input.size()) * n), y(per_image * n);
      for (float& x : in) x = u(rng);
      const int k = std::min(n, kErrorImages);
      std::vector<float> want(per_image * k);
      ref->forward(in.data(), k, ref_seg.layers.size(), want.data(), nullptr);
      TuningEntry e;
      e.kind = conv ? "conv" : "fc";
      e.layer = l.name;
      e.signature = sig;
      e.batch = n;
      e.error_budget = budget;
      double best = 0;  // the fastest time within the budget so far: the cut's measure
      for (int v : candidates(l.kind(), conv ? o.conv_variants : o.fc_variants, o.precision, o.weights)) {
        interrupt_point();
        if (interrupted()) {  // this (layer, batch) is incomplete: it is dropped, the ones before are written
          t.interrupted = true;
          break;
        }
        std::cerr << "\rtune: " << l.name << " batch " << n << " v" << v << "          " << std::flush;
        const Timing tm = time_version(seg, conv, v, n, o, best, in, y);
        if (!tm.skipped.empty()) {
          e.unsupported[v] = tm.skipped;
          continue;
        }
        e.times_ms[v] = tm.ms;
        const double err = agreement(y.data(), want, k, static_cast<int64_t>(per_image)).rel_l2;
        e.errors[v] = err;
        if (err <= budget && (best == 0 || tm.ms < best)) best = tm.ms;
      }
      std::cerr << "\r" << std::string(60, ' ') << "\r";
      if (t.interrupted) break;
      if (e.times_ms.empty()) fail("layer '" + l.name + "'", "no version could run it at batch " + std::to_string(n));
      e.best = choose_best(e, budget);
      char buf[96];
      std::snprintf(buf, sizeof buf, "  batch %5d  best v%-3d %10.4f ms  err %.1e |", n, e.best, e.times_ms[e.best], e.errors[e.best]);
      std::cout << buf;
      for (const auto& [v, ms] : e.times_ms) {
        std::snprintf(buf, sizeof buf, " v%d %.4g%s", v, ms, e.errors[v] <= budget ? "" : "*");
        std::cout << buf;
      }
      std::cout << "\n" << std::flush;
      if (!(e.errors[e.best] <= budget))
        std::cerr << "tune: layer '" << l.name << "' batch " << n << ": no version within the error budget " << budget << "; v" << e.best
                  << " is the most accurate (" << e.errors[e.best] << ")\n";
      done[sig].push_back(e);
      t.entries.push_back(e);
    }
  }
  // Entries of an existing table for this device that this run did not measure (the other precision, other batch
  // sizes, other models) are kept, so that one file serves fp32 and tf32 runs alike.
  size_t kept = 0;
  std::set<std::pair<std::string, int>> measured;
  for (const TuningEntry& e : t.entries) measured.insert({e.signature, e.batch});
  for (const TuningEntry& e : before.entries)
    if (!measured.count({e.signature, e.batch})) {
      t.entries.push_back(e);
      ++kept;
    }
  write_tuning(out, t);
  std::cout << "wrote " << out << " (" << t.entries.size() << " entries, " << kept << " kept from the file before; "
            << t.device.name << ")\n";
  if (t.interrupted) {
    std::cerr << "batchscope: interrupted (" << interrupt_name() << "): " << out << " holds the " << measured.size()
              << " (layer, batch) entries measured before it, marked interrupted\n";
    return kInterruptedExit;
  }
  return 0;
}

}  // namespace bs
