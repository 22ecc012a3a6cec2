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
  double copy_hidden = -1;  // seconds of copies under kernels (median over the reps; profile.hpp); -1 without a profiler
  // The profiled passes the breakdown comes from: how many, and their median (seconds), the time the categories
  // partition; the timed passes themselves unless --profiled-passes separate. 0 and -1 without a profiler.
  int breakdown_reps = 0;
  double breakdown_median = -1;
  std::string check;                         // "ok", "FAIL" or "skipped"
  double check_rel_l2 = 0;
  int check_images = 0;
  double check_top1 = 0;  // fraction of the checked images whose top-1 class agrees with the reference
  // Under mpirun: whose row this is ("0", "1", ... or "all" for the aggregate), on which host and device,
  // the rank's share of the batch, and (aggregate rows) one rank's images/s and the scaling efficiency.
  std::string rank, host, device;
  int rank_batch = 0;
  double images_per_s_one_rank = -1, scaling_efficiency = -1;
};
nlohmann::json to_json(const SweepRow& r);
SweepRow sweep_row_from_json(const nlohmann::json& j);

struct LayerRow {
  int batch = 0;
  std::string run, layer, type, implementation;
  double median = 0, min = 0, max = 0, gflop_per_s = 0, gb_per_s = 0;
  double bandwidth_pct = -1;  // gb_per_s against the GPU's DRAM bandwidth (memory clock x bus width); -1: no GPU
  double peak_pct = -1;       // gflop_per_s against the GPU's peak for the run's precision (peak_gflop_per_s); -1: unknown
  std::string rank;  // under mpirun
};
nlohmann::json to_json(const LayerRow& r);
LayerRow layer_row_from_json(const nlohmann::json& j);

// Columns shared by every row: model, weights, backend, variant, fc_variant, precision, transfers,
// host_memory, profiler.
struct SweepIdentity {
  std::string model, weights, backend, variant, fc_variant, precision = "fp32", transfers, host_memory, profiler;
};

// The identity columns' header and one row's cells, shared by every CSV the tool writes.
std::string identity_csv_header();
std::string identity_csv_cells(const SweepIdentity& id);
std::string csv_quote(const std::string& s);
std::string csv_num(double v);  // %.6g
// `ranks` > 1 (mpirun): the rank columns join (ranks, rank, host, device, rank_batch,
// images_per_s_one_rank, scaling_efficiency in the sweep CSV; rank in the layers CSV).
std::vector<std::string> sweep_csv_header(int ranks = 1);
std::string sweep_csv(const SweepIdentity& id, const std::vector<SweepRow>& rows, int ranks = 1);
std::string layers_csv(const SweepIdentity& id, const std::vector<LayerRow>& rows, int ranks = 1);
// FILE.csv -> FILE.layers.csv / FILE.json
std::string sibling(const std::string& csv_path, const std::string& suffix);
void write_text_atomic(const std::string& path, const std::string& text);
// Fails now, naming the flag, when `path` cannot be created (missing folder, no permission, a read-only or pseudo file
// system: a probe file is made and removed beside it).
void check_writable(const std::string& path, const std::string& flag);
// The same for a folder that may not exist yet (report --out): its nearest existing ancestor must take a new file.
void check_writable_folder(const std::string& dir, const std::string& flag);

}  // namespace bs
