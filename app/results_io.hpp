// The sweep's outputs: one row per (batch size, cold|warm) in FILE.csv, one row per layer in
// FILE.layers.csv, and FILE.json with the metadata. Everything is written to temporary names and renamed
// only when complete.
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace bs {

struct SweepRow {
  int batch = 0;
  std::string run;  // "cold" or "warm"
  int reps = 0;
  double total_median = 0, total_min = 0, total_max = 0;  // seconds
  double total_p90 = 0, total_p99 = 0;                     // seconds (p50 is the median)
  double images_per_s = 0, gflop_per_s = 0;
  std::map<std::string, double> categories;  // seconds (medians over the reps); empty without a profiler
  std::string check;                         // "ok", "FAIL" or "skipped"
  double check_rel_l2 = 0;
  int check_images = 0;
  double check_top1 = 0;  // fraction of the checked images whose top-1 class agrees with the reference
};

struct LayerRow {
  int batch = 0;
  std::string run, layer, type, implementation;
  double median = 0, min = 0, max = 0, gflop_per_s = 0, gb_per_s = 0;
};

// Columns shared by every row: model, weights, backend, variant, fc_variant, precision, transfers,
// host_memory, profiler.
struct SweepIdentity {
  std::string model, weights, backend, variant, fc_variant, precision = "fp32", transfers, host_memory, profiler;
};

std::vector<std::string> sweep_csv_header();
std::string sweep_csv(const SweepIdentity& id, const std::vector<SweepRow>& rows);
std::string layers_csv(const SweepIdentity& id, const std::vector<LayerRow>& rows);
// FILE.csv -> FILE.layers.csv / FILE.json
std::string sibling(const std::string& csv_path, const std::string& suffix);
void write_text_atomic(const std::string& path, const std::string& text);
// Fails now, naming the flag, when `path` cannot be created (missing folder, no permission).
void check_writable(const std::string& path, const std::string& flag);

}  // namespace bs
