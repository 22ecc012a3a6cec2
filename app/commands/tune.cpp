#include "app/commands/tune.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <random>
#include <set>

#include "app/results/metadata.hpp"
#include "app/results/results_io.hpp"
#include "kernels/exec/backend.hpp"
#include "kernels/exec/device_info.hpp"
#include "kernels/plan/menus.hpp"
#include "kernels/plan/tuning.hpp"
#include "weights_tools/error.hpp"

namespace bs {

void TuneOptions::add_to(CLI::App& app) {
  app.add_option("--model", model_dir, "model folder holding model.json")->required();
  app.add_option("--batches", batches, "batch sizes, comma-separated")->delimiter(',')->capture_default_str();
  app.add_option("--precision", precision, "fp32 | tf32 | fp16 | bf16: time the versions of that precision (a table holds all, "
                                           "each under its own signatures)")->capture_default_str();
  app.add_option("--reps", reps, "timed repetitions per (layer, batch, version); the median counts")->capture_default_str();
  app.add_option("--warmup", warmup, "untimed runs first")->capture_default_str();
  app.add_option("--out", out, "where to write the table (default: this device's file in ~/.cache/batchscope, which "
                               "auto reads without --tuning)");
  app.add_option("--conv-variants", conv_variants, "only these convolution versions (default: every one)")->delimiter(',');
  app.add_option("--fc-variants", fc_variants, "only these fully connected versions (default: every one)")->delimiter(',');
  app.add_option("--cut", cut, "after its first run, a version slower than CUT x the best so far is not repeated")
      ->capture_default_str();
  app.footer("Examples:\n  batchscope tune --model data/models/alexnet\n"
             "  batchscope tune --model data/models/alexnet --batches 1,16,128,1024 --conv-variants 12,13,14 --out t.json\n"
             "  batchscope sweep --model data/models/alexnet --backend cuda --tuning t.json --out r.csv");
}

void TuneOptions::validate() const {
  if (batches.empty()) fail("--batches", "needs at least one batch size");
  for (int b : batches)
    if (b <= 0) fail("--batches", "batch sizes must be positive, found " + std::to_string(b));
  if (reps < 1) fail("--reps", "must be at least 1, found " + std::to_string(reps));
  if (warmup < 0) fail("--warmup", "must be 0 or more, found " + std::to_string(warmup));
  if (!(cut > 1.0)) fail("--cut", "must be above 1");
  check_precision(precision);
  for (const std::string& v : conv_variants)
    if (const int n = parse_conv_variant(v, "--conv-variants"); n != kAutoVariant && !variant_allowed(conv_entry(n), true, precision))
      fail("--conv-variants", "v" + std::to_string(n) + " computes in " + conv_entry(n).precision + "; --precision " + precision +
                                  " times " + allowed_variants(true, precision));
  for (const std::string& v : fc_variants)
    if (const int n = parse_fc_variant(v, "--fc-variants"); n != kAutoVariant && !variant_allowed(fc_entry(n), false, precision))
      fail("--fc-variants", "v" + std::to_string(n) + " computes in " + fc_entry(n).precision + "; --precision " + precision +
                                " times " + allowed_variants(false, precision));
  for (const std::string& v : conv_variants)
    if (parse_conv_variant(v, "--conv-variants") == kAutoVariant) fail("--conv-variants", "name versions, not auto");
  for (const std::string& v : fc_variants)
    if (parse_fc_variant(v, "--fc-variants") == kAutoVariant) fail("--fc-variants", "name versions, not auto");
}

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

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

std::vector<int> candidates(bool conv, const std::vector<std::string>& given, const std::string& precision) {
  std::vector<int> v;
  if (given.empty())
    for (const MenuEntry& e : conv ? conv_menu() : fc_menu())
      if (variant_allowed(e, conv, precision)) v.push_back(e.number);
  for (const std::string& g : given) v.push_back(conv ? parse_conv_variant(g) : parse_fc_variant(g));
  return v;
}

// One version on one segment at batch n: its median device time (ms), or why it was not timed.
struct Timing {
  double ms = 0;
  std::string skipped;
};
Timing time_version(const Model& seg, bool conv, int version, int n, const TuneOptions& o, double best_ms, const std::vector<float>& in,
                    std::vector<float>& out) {
  BackendOptions bo;
  bo.precision = o.precision;
  (conv ? bo.conv_variant : bo.fc_variant) = std::to_string(version);
  std::unique_ptr<Backend> b = make_backend("cuda", bo);
  const Support s = b->supports(seg.layers[0]);
  if (!s.ok) return {0, s.reason};
  b->load(seg);
  const size_t need = b->device_bytes_needed(n), free = b->device_bytes_free();
  if (need > free) {
    char buf[120];
    std::snprintf(buf, sizeof buf, "needs %.2f GiB of device memory, %.2f GiB free", need / 1073741824.0, free / 1073741824.0);
    return {0, buf};
  }
  auto run = [&] {
    RunStats st;
    b->forward(in.data(), n, seg.layers.size(), out.data(), &st);
    double sum = 0;
    for (double x : st.layer_seconds) sum += x;
    return sum * 1e3;
  };
  const double first = run();  // also makes the prepared weights: not a timed run
  if (best_ms > 0 && first > o.cut * best_ms) return {first, ""};
  for (int w = 1; w < o.warmup; ++w) run();
  std::vector<double> times;
  for (int r = 0; r < o.reps; ++r) times.push_back(run());
  return {median(times), ""};
}

}  // namespace

int run_tune(const TuneOptions& o) {
  o.validate();
  const Model m = load_model(o.model_dir);
  init_gpu();
  make_backend("cuda");  // fails with one line where no GPU (or no CUDA build) exists
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
  const std::string out = o.out.empty() ? default_tuning_path(t.device.name) : o.out;
  if (o.out.empty()) std::filesystem::create_directories(std::filesystem::path(out).parent_path());
  check_writable(out, "--out");

  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::map<std::string, std::vector<TuningEntry>> done;  // by signature: layers of the same shape are timed once
  for (size_t i = 0; i < m.layers.size(); ++i) {
    const Layer& l = m.layers[i];
    const bool conv = l.kind() == LayerKind::conv;
    if (!conv && l.kind() != LayerKind::fc) continue;
    const std::string sig = tuning_signature(m, i, o.precision);
    if (auto it = done.find(sig); it != done.end()) {
      for (TuningEntry e : it->second) {
        e.layer = l.name;
        t.entries.push_back(e);
      }
      continue;
    }
    const Model seg = segment(m, i);
    std::cout << l.name << "  [" << sig << "]\n";
    for (int n : o.batches) {
      std::vector<float> in(static_cast<size_t>(seg.input.size()) * n), y(static_cast<size_t>(seg.output().size()) * n);
      for (float& x : in) x = u(rng);
      TuningEntry e;
      e.kind = conv ? "conv" : "fc";
      e.layer = l.name;
      e.signature = sig;
      e.batch = n;
      double best = 0;
      for (int v : candidates(conv, conv ? o.conv_variants : o.fc_variants, o.precision)) {
        std::cerr << "\rtune: " << l.name << " batch " << n << " v" << v << "          " << std::flush;
        const Timing tm = time_version(seg, conv, v, n, o, best, in, y);
        if (!tm.skipped.empty()) {
          e.unsupported[v] = tm.skipped;
          continue;
        }
        e.times_ms[v] = tm.ms;
        if (best == 0 || tm.ms < best) {
          best = tm.ms;
          e.best = v;
        }
      }
      std::cerr << "\r" << std::string(60, ' ') << "\r";
      if (e.times_ms.empty()) fail("layer '" + l.name + "'", "no version could run it at batch " + std::to_string(n));
      char buf[64];
      std::snprintf(buf, sizeof buf, "  batch %5d  best v%-3d %10.4f ms  |", n, e.best, best);
      std::cout << buf;
      for (const auto& [v, ms] : e.times_ms) {
        std::snprintf(buf, sizeof buf, " v%d %.4g", v, ms);
        std::cout << buf;
      }
      std::cout << "\n" << std::flush;
      done[sig].push_back(e);
      t.entries.push_back(e);
    }
  }
  // Entries of an existing table for this device that this run did not measure (the other precision, other batch
  // sizes, other models) are kept, so that one file serves fp32 and tf32 runs alike.
  size_t kept = 0;
  if (std::filesystem::exists(out)) {
    std::set<std::pair<std::string, int>> measured;
    for (const TuningEntry& e : t.entries) measured.insert({e.signature, e.batch});
    const TuningTable old = read_tuning(out, t.device.name);  // another device's or a corrupt file: one clear line
    for (const TuningEntry& e : old.entries)
      if (!measured.count({e.signature, e.batch})) {
        t.entries.push_back(e);
        ++kept;
      }
  }
  write_tuning(out, t);
  std::cout << "wrote " << out << " (" << t.entries.size() << " entries, " << kept << " kept from the file before; "
            << t.device.name << ")\n";
  return 0;
}

}  // namespace bs
