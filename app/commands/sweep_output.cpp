// `batchscope sweep` and `batchscope profile`: gathering the ranks' rows, the JSON metadata (with each point's plan),
// the summary tables, the trace, --resume, and the commands themselves.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "app/commands/sweep_driver.hpp"
#include "app/exec/interrupt.hpp"
#include "app/results/latency_stats.hpp"
#include "app/results/metadata.hpp"
#include "kernels/exec/device_info.hpp"
#include "weights_tools/error.hpp"
#include "weights_tools/io.hpp"

namespace bs {

// Rank 0 collects every rank's rows and step times, and builds per-rank rows plus an aggregate row per point: the step
// time of a repetition is the slowest rank's.
void SweepDriver::gather_ranks() {
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

// Points in batch order (a resumed sweep adds its new points among the earlier ones), cold before warm.
void SweepDriver::sort_points() {
  std::stable_sort(rows_.begin(), rows_.end(), [](const SweepRow& a, const SweepRow& b) { return a.batch < b.batch; });
  std::stable_sort(layers_.begin(), layers_.end(), [](const LayerRow& a, const LayerRow& b) { return a.batch < b.batch; });
}

void SweepDriver::take_earlier(const nlohmann::json& j) {
  const std::string where = "--resume";
  const nlohmann::json want = o_.resume_key(backend_, world_.size());
  const nlohmann::json had = j.value("resume_key", nlohmann::json());
  if (!had.is_object()) usage_fail(where, sibling(o_.out, ".json") + " was not written by a sweep that can be resumed (no resume_key)");
  for (const auto& [k, v] : want.items()) {
    // Keys newer than the file: what a sweep without them ran with.
    const nlohmann::json h = had.contains(k) ? had[k] : k == "weights" ? nlohmann::json("native") : nlohmann::json();
    if (h != v)
      usage_fail(where, o_.out + " was measured with " + k + " " + (h.is_null() ? "(unset)" : h.dump()) + "; this run has " +
                            v.dump() + ": resume with the same options, or write another --out");
  }
  const std::string model_had = j.value("model", nlohmann::json::object()).value("name", "");
  const std::string weights_had = j.value("weights", nlohmann::json::object()).value("note", "");
  if (model_had != model_.name || weights_had != model_.weights_note)
    usage_fail(where, o_.out + " was measured on model " + model_had + " (" + weights_had + " weights); this run has " + model_.name +
                          " (" + model_.weights_note + ")");
  for (const auto& r : j.at("rows")) {
    rows_.push_back(sweep_row_from_json(r));
    if (rows_.back().run == "warm") held_.push_back(rows_.back().batch);
  }
  for (const auto& r : j.at("layer_rows")) layers_.push_back(layer_row_from_json(r));
  if (j.contains("plans")) plans_ = j["plans"];
  earlier_ = {{"date", j.value("date", "")}, {"git_commit", j.value("git_commit", "")}, {"batches", held_}};
}

nlohmann::json SweepDriver::metadata() const {
  nlohmann::json j = run_metadata("batchscope sweep", o_.command_line, model_, inputs_.source, name_of(backend_), id_.variant, id_.fc_variant);
  if (backend_ == BackendKind::cudnn) j["cudnn_algos"] = name_of(opts_.cudnn_algos);
  j["precision"] = name_of(opts_.precision);
  j["input_precision"] = name_of(opts_.input_precision);
  j["weights"]["format"] = name_of(opts_.weights);
  if (!quant_.is_null()) j["weights"]["quantization"] = quant_;  // --weights int8 with a check: what it changed
  j["transfers"] = id_.transfers;
  if (opts_.transfers == Transfers::overlapped) {
    j["chunk"] = opts_.chunk;
    j["chunk_note"] = opts_.chunk > 0 ? "images per chunk, as given" : "0: quarters of the batch (at least 32), reached by doubling from a quarter of that (at least 16)";
    j["copy_hidden"] = "copy_hidden_ms: time a copy runs while a kernel runs; the breakdown gives that time to the kernel";
  }
  j["cuda_graph"] = opts_.cuda_graph;
  j["copies"] = name_of(opts_.copies);
  if (opts_.copies == Copies::kernel)
    j["copies_note"] = "the input and output moved by kernels over the bus (inside the graph with cuda_graph), booked as htod_ms / dtoh_ms";
  j["host_memory"] = id_.host_memory;
  j["profiler"] = id_.profiler;
  if (profiler_) {
    j["profiled_passes"] = separate_ ? "separate" : "timed";
    j["breakdown"] = separate_ ? "the categories are medians over " + std::to_string(profile_reps_) +
                                     " profiled passes per point, run after the timed ones, which ran untraced: "
                                     "breakdown_ms_median is what they partition; the latency columns are the timed passes'"
                               : "the categories are medians over the timed passes, profiled; they partition breakdown_ms_median, "
                                 "which is total_ms_median";
  }
  if (o_.rep_gap_us > 0) j["rep_gap_us"] = o_.rep_gap_us;
  j["batches"] = o_.batches;
  j["reps"] = o_.reps;
  j["min_time_s"] = o_.min_time;
  j["percentiles"] = "linear interpolation between order statistics (numpy's default): p50 is the median; "
                     "with fewer than 100 repetitions p99 lies between the two largest";
  j["warmup"] = o_.warmup;
  j["check"] = {{"reference", name_of(o_.check_backend)}, {"images", o_.check_images},
                {"tolerance_rel_l2", precision_tolerance(opts_.precision)}};
  if (opts_.weights == WeightFormat::int8)
    j["check"]["weights"] = "the reference runs the same int8-quantised weights (weights.quantization compares with the FP32 ones)";
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
  std::vector<int> done;
  for (const SweepRow& r : rows_) {
    failed |= r.check == "FAIL";
    if (r.run == "warm" && std::find(done.begin(), done.end(), r.batch) == done.end()) done.push_back(r.batch);
  }
  j["all_checks_passed"] = !failed;
  j["batches_measured"] = done;
  j["interrupted"] = interrupted_;
  if (interrupted_) j["interrupt"] = interrupt_name() + " after " + std::to_string(done.size()) + " of " + std::to_string(o_.batches.size()) +
                                     " batch sizes; the points listed are complete, the one in progress was dropped";
  if (!earlier_.is_null()) j["resumed_from"] = earlier_;
  nlohmann::json points = nlohmann::json::array();  // the latency distribution of every point, in ms
  for (const SweepRow& r : rows_)
    points.push_back({{"batch", r.batch}, {"run", r.run}, {"reps", r.reps}, {"min_ms", r.total_min * 1e3}, {"p50_ms", r.total_median * 1e3},
                      {"p90_ms", r.total_p90 * 1e3}, {"p99_ms", r.total_p99 * 1e3}, {"max_ms", r.total_max * 1e3},
                      {"images_per_s", r.images_per_s}});
  j["latency"] = points;
  j["plans"] = plans_;  // per batch size, what ran: `batchscope plan --json`'s object
  nlohmann::json summary = nlohmann::json::array();  // nvprof-style, over every profiled warm run of this invocation
  for (const SummaryRow& r : summarize(all_warm_records_))
    summary.push_back({{"section", r.section}, {"name", r.name}, {"time_s", r.total}, {"calls", r.calls}, {"avg_s", r.total / r.calls},
                       {"min_s", r.min}, {"max_s", r.max}});
  j["summary_warm_runs"] = summary;
  // What --resume reads back: every row as measured, and the options they were measured with.
  j["resume_key"] = o_.resume_key(backend_, world_.size());
  j["rows"] = nlohmann::json::array();
  for (const SweepRow& r : rows_) j["rows"].push_back(to_json(r));
  j["layer_rows"] = nlohmann::json::array();
  for (const LayerRow& r : layers_) j["layer_rows"].push_back(to_json(r));
  return j;
}

void SweepDriver::print_summary(std::ostream& os) const {
  os << "== " << model_.name << " on " << name_of(backend_) << (id_.variant.empty() ? "" : " (conv " + id_.variant + ")") << ", " << id_.transfers
     << ", " << id_.host_memory << " host memory; " << model_.weights_note << " weights\n";
  const bool ranks = world_.parallel();
  if (ranks)
    os << "  " << world_.size() << " ranks, " << (o_.global_batch ? "each batch split across them" : "each running the whole batch")
       << "; rank rows time each rank's own pass, 'all' rows the slowest rank's step between agreements\n";
  os << "  batch  run  " << (ranks ? "rank " : "") << " reps  total ms (median [min, max])         p90 ms      p99 ms     images/s     GFLOP/s  check"
     << (ranks ? "   efficiency" : "") << "\n";
  const std::string differ = " <-- outputs differ from " + name_of(o_.check_backend);
  for (const SweepRow& r : rows_) {
    char buf[300];
    std::snprintf(buf, sizeof buf, "  %5d  %-4s %s%5d  %10.4f [%10.4f, %10.4f]  %10.4f  %10.4f  %11.1f  %10.2f  %s%s%s\n", r.batch,
                  r.run.c_str(), ranks ? (r.rank + std::string(5 - std::min<size_t>(5, r.rank.size()), ' ')).c_str() : "", r.reps,
                  r.total_median * 1e3, r.total_min * 1e3, r.total_max * 1e3, r.total_p90 * 1e3, r.total_p99 * 1e3, r.images_per_s,
                  r.gflop_per_s, r.check.c_str(),
                  r.scaling_efficiency >= 0 ? ("   " + fmt_num(std::round(r.scaling_efficiency * 1000) / 1000)).c_str() : "",
                  r.check == "FAIL" ? differ.c_str() : "");
    os << buf;
  }
  if (!all_warm_records_.empty()) {
    os << "\n== nvprof-style summary over every warm run of the sweep\n";
    os << format_summary(summarize(all_warm_records_));
  }
}

// --trace: the first warm run of every batch size, as Chrome trace-event JSON.
void SweepDriver::write_trace() const {
  if (o_.trace.empty()) return;
  nlohmann::json meta = {{"tool", "batchscope"}, {"command", o_.command_line}, {"model", model_.name}, {"backend", name_of(backend_)},
                         {"transfers", id_.transfers}, {"precision", name_of(opts_.precision)}, {"profiler", id_.profiler},
                         {"device", gpu_ ? device_label(device_) : std::string("cpu")}, {"commit", git_commit()},
                         {"time_unit", "microseconds from the start of each run"}};
  if (world_.parallel()) meta["ranks"] = "rank 0's runs only";
  write_text_atomic(o_.trace, chrome_trace(trace_runs_, model_, meta).dump() + "\n");
}

int run_sweep(SweepOptions o) {
  World& world = World::get();
  o.validate(o.run.resolve_backend(), world.size());
  world.step([&] {  // every output, before anything is measured
    if (!world.root()) return;
    for (const char* suffix : {"", ".layers.csv", ".json"})
      check_writable(*suffix ? sibling(o.out, suffix) : o.out, "--out");
    if (!o.trace.empty()) check_writable(o.trace, "--trace");
  });
  SweepDriver d(o);
  d.prepare();
  if (o.resume) {
    const std::string earlier = sibling(o.out, ".json");
    if (!std::ifstream(earlier).good()) usage_fail("--resume", "no earlier sweep to continue: " + earlier + " does not exist");
    const std::vector<uint8_t> bytes = read_file(earlier);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(bytes.begin(), bytes.end());
      d.take_earlier(j);
    } catch (const nlohmann::json::exception& e) {
      fail(earlier, std::string("not a sweep's metadata (") + e.what() + ")");
    }
  }
  d.run_all(false);
  if (!world.root()) return d.was_interrupted() ? kInterruptedExit : 0;  // rank 0 writes everything
  const int R = world.size();
  write_text_atomic(sibling(o.out, ".layers.csv"), layers_csv(d.identity(), d.layers(), R));
  write_text_atomic(sibling(o.out, ".json"), d.metadata().dump(2) + "\n");
  d.write_trace();
  write_text_atomic(o.out, sweep_csv(d.identity(), d.rows(), R));  // last: its presence means the set is complete
  d.print_summary(std::cout);
  std::cout << "\nwrote " << o.out << ", " << sibling(o.out, ".layers.csv") << ", " << sibling(o.out, ".json") << "\n";
  if (d.was_interrupted()) {
    const auto done = std::count_if(d.rows().begin(), d.rows().end(),
                                    [](const SweepRow& r) { return r.run == "warm" && (r.rank.empty() || r.rank == "all"); });
    std::cerr << "batchscope: interrupted (" << interrupt_name() << "): wrote the " << done << " complete batch sizes to "
              << o.out << " (marked interrupted in its JSON); continue with the same command and --resume\n";
    return kInterruptedExit;
  }
  bool failed = false;
  for (const SweepRow& r : d.rows()) failed |= r.check == "FAIL";
  if (failed) std::cerr << "batchscope: warning: some sweep points differ from " << name_of(o.check_backend) << " (check column FAIL)\n";
  return failed ? 3 : 0;
}

int run_profile(SweepOptions o) {
  o.reps = 1;
  o.profiled_passes = ProfiledPasses::timed;  // the one warm run is the profiled one
  o.check_images = 0;
  o.validate(o.run.resolve_backend(), World::get().size());
  if (!o.trace.empty()) check_writable(o.trace, "--trace");
  SweepDriver d(o);
  d.prepare();
  d.run_all(true);
  if (d.was_interrupted()) {
    std::cerr << "batchscope: interrupted (" << interrupt_name() << ") before the profiled run finished\n";
    return kInterruptedExit;
  }
  d.write_trace();
  const SweepRow& warm = d.rows().back();
  std::cout << "== " << d.model().name << ", backend " << d.identity().backend << ", batch " << warm.batch << ", " << d.identity().transfers
            << ", " << d.identity().host_memory << " host memory; total " << warm.total_median * 1e3
            << " ms (warm run; the cold run took " << d.rows().front().total_median * 1e3 << " ms)\n\n";
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
