#include "app/results/results_io.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "kernels/profile/profile.hpp"
#include "weights_tools/error.hpp"
#include "weights_tools/io.hpp"

namespace bs {
namespace {

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string quote(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string identity_cells(const SweepIdentity& id) {
  return quote(id.model) + "," + quote(id.weights) + "," + id.backend + "," + quote(id.variant) + "," +
         quote(id.fc_variant) + "," + id.precision + "," + id.transfers + "," + id.host_memory + "," + quote(id.profiler);
}
const char* kIdentityHeader = "model,weights,backend,variant,fc_variant,precision,transfers,host_memory,profiler";

}  // namespace

std::string identity_csv_header() { return kIdentityHeader; }
std::string identity_csv_cells(const SweepIdentity& id) { return identity_cells(id); }
std::string csv_quote(const std::string& s) { return quote(s); }
std::string csv_num(double v) { return num(v); }

namespace {

// Each row's fields under their JSON keys, in one list that writing and reading share: visit(key, member, optional)
// (optional: files from before the field existed lack it, and the row keeps its default).
template <class Row, class Visit>
void sweep_row_fields(Row& r, Visit&& visit) {
  visit("batch", r.batch, false), visit("run", r.run, false), visit("reps", r.reps, false);
  visit("median", r.total_median, false), visit("min", r.total_min, false), visit("max", r.total_max, false);
  visit("p90", r.total_p90, false), visit("p99", r.total_p99, false), visit("ips", r.images_per_s, false);
  visit("gflops", r.gflop_per_s, false), visit("categories", r.categories, false);
  visit("copy_hidden", r.copy_hidden, false), visit("breakdown_reps", r.breakdown_reps, false);
  visit("breakdown_median", r.breakdown_median, false), visit("check", r.check, false);
  visit("l2", r.check_rel_l2, false), visit("check_images", r.check_images, false), visit("top1", r.check_top1, false);
  visit("rank", r.rank, false), visit("host", r.host, false), visit("device", r.device, false);
  visit("rank_batch", r.rank_batch, false), visit("ips_one_rank", r.images_per_s_one_rank, true);
  visit("efficiency", r.scaling_efficiency, true);
}

template <class Row, class Visit>
void layer_row_fields(Row& r, Visit&& visit) {
  visit("batch", r.batch, false), visit("run", r.run, false), visit("layer", r.layer, false), visit("type", r.type, false);
  visit("impl", r.implementation, false), visit("median", r.median, false), visit("min", r.min, false);
  visit("max", r.max, false), visit("gflops", r.gflop_per_s, false), visit("gbs", r.gb_per_s, false);
  visit("bw_pct", r.bandwidth_pct, true), visit("peak_pct", r.peak_pct, true), visit("rank", r.rank, false);
}

template <class Row, class Fields>
nlohmann::json write_fields(const Row& r, Fields fields) {
  nlohmann::json j = nlohmann::json::object();
  fields(r, [&](const char* key, const auto& member, bool) { j[key] = member; });
  return j;
}

template <class Row, class Fields>
Row read_fields(const nlohmann::json& j, Fields fields) {
  Row r;
  fields(r, [&](const char* key, auto& member, bool optional) {
    if (!optional || j.contains(key)) j.at(key).get_to(member);
  });
  return r;
}

}  // namespace

nlohmann::json to_json(const SweepRow& r) {
  return write_fields(r, [](const SweepRow& row, auto&& v) { sweep_row_fields(row, v); });
}
SweepRow sweep_row_from_json(const nlohmann::json& j) {
  return read_fields<SweepRow>(j, [](SweepRow& row, auto&& v) { sweep_row_fields(row, v); });
}
nlohmann::json to_json(const LayerRow& r) {
  return write_fields(r, [](const LayerRow& row, auto&& v) { layer_row_fields(row, v); });
}
LayerRow layer_row_from_json(const nlohmann::json& j) {
  return read_fields<LayerRow>(j, [](LayerRow& row, auto&& v) { layer_row_fields(row, v); });
}

std::vector<std::string> sweep_csv_header(int ranks) {
  std::vector<std::string> h;
  for (const char* c : {"model", "weights", "backend", "variant", "fc_variant", "precision", "transfers", "host_memory",
                        "profiler", "batch", "run", "reps", "total_ms_median", "total_ms_min", "total_ms_max",
                        "total_ms_p50", "total_ms_p90", "total_ms_p99", "images_per_s", "gflop_per_s"})
    h.push_back(c);
  for (const std::string& c : breakdown_categories()) h.push_back(c + "_ms");
  h.push_back("copy_hidden_ms");
  h.push_back("breakdown_reps");
  h.push_back("breakdown_ms_median");
  for (const char* c : {"check", "check_rel_l2", "check_images", "check_top1"}) h.push_back(c);
  if (ranks > 1)
    for (const char* c : {"ranks", "rank", "host", "device", "rank_batch", "images_per_s_one_rank", "scaling_efficiency"})
      h.push_back(c);
  return h;
}

std::string sweep_csv(const SweepIdentity& id, const std::vector<SweepRow>& rows, int ranks) {
  std::string out;
  for (const std::string& h : sweep_csv_header(ranks)) out += (out.empty() ? "" : ",") + h;
  out += "\n";
  for (const SweepRow& r : rows) {
    out += identity_cells(id) + "," + std::to_string(r.batch) + "," + r.run + "," + std::to_string(r.reps) + "," +
           num(r.total_median * 1e3) + "," + num(r.total_min * 1e3) + "," + num(r.total_max * 1e3) + "," +
           num(r.total_median * 1e3) + "," + num(r.total_p90 * 1e3) + "," + num(r.total_p99 * 1e3) + "," +
           num(r.images_per_s) + "," + num(r.gflop_per_s);
    for (const std::string& c : breakdown_categories()) {
      auto it = r.categories.find(c);
      out += "," + (it == r.categories.end() ? std::string() : num(it->second * 1e3));
    }
    out += "," + (r.copy_hidden < 0 ? std::string() : num(r.copy_hidden * 1e3));
    out += r.breakdown_median < 0 ? std::string(",,") : "," + std::to_string(r.breakdown_reps) + "," + num(r.breakdown_median * 1e3);
    out += "," + r.check + "," + num(r.check_rel_l2) + "," + std::to_string(r.check_images) + "," +
           (r.check_images > 0 ? num(r.check_top1) : std::string());
    if (ranks > 1)
      out += "," + std::to_string(ranks) + "," + r.rank + "," + quote(r.host) + "," + quote(r.device) + "," +
             std::to_string(r.rank_batch) + "," + (r.images_per_s_one_rank < 0 ? "" : num(r.images_per_s_one_rank)) + "," +
             (r.scaling_efficiency < 0 ? "" : num(r.scaling_efficiency));
    out += "\n";
  }
  return out;
}

std::string layers_csv(const SweepIdentity& id, const std::vector<LayerRow>& rows, int ranks) {
  std::string out = std::string(kIdentityHeader) +
                    ",batch,run,layer,type,implementation,median_ms,min_ms,max_ms,gflop_per_s,gb_per_s,bandwidth_pct,peak_pct" +
                    (ranks > 1 ? ",rank" : "") + "\n";
  for (const LayerRow& r : rows)
    out += identity_cells(id) + "," + std::to_string(r.batch) + "," + r.run + "," + quote(r.layer) + "," + r.type + "," +
           quote(r.implementation) + "," + num(r.median * 1e3) + "," + num(r.min * 1e3) + "," + num(r.max * 1e3) + "," +
           num(r.gflop_per_s) + "," + num(r.gb_per_s) + "," + (r.bandwidth_pct < 0 ? "" : num(r.bandwidth_pct)) + "," +
           (r.peak_pct < 0 ? "" : num(r.peak_pct)) + (ranks > 1 ? "," + r.rank : "") + "\n";
  return out;
}

std::string sibling(const std::string& csv_path, const std::string& suffix) {
  std::string base = csv_path;
  if (base.size() > 4 && base.compare(base.size() - 4, 4, ".csv") == 0) base.resize(base.size() - 4);
  return base + suffix;
}

void write_text_atomic(const std::string& path, const std::string& text) { atomic_write_bytes(path, text.data(), text.size()); }

void check_writable(const std::string& path, const std::string& flag) {
  namespace fs = std::filesystem;
  fs::path p(path);
  fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) usage_fail(flag, "cannot write " + path + ": folder " + dir.string() + " does not exist");
  if (fs::is_directory(p, ec)) usage_fail(flag, "cannot write " + path + ": it is a folder");
  if (fs::exists(p, ec) && access(p.c_str(), W_OK) != 0) usage_fail(flag, "cannot write " + path + ": " + std::strerror(errno));
  // Make and remove a file beside it: what the atomic write will do (permissions, read-only and pseudo file systems).
  std::string probe = (dir / ".batchscope-probe-XXXXXX").string();
  const int fd = mkstemp(probe.data());
  if (fd < 0) usage_fail(flag, "cannot write " + path + ": " + std::strerror(errno));
  close(fd);
  unlink(probe.c_str());
}

void check_writable_folder(const std::string& dir, const std::string& flag) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) usage_fail(flag, "cannot write into " + dir + ": it is a file, not a folder");
  fs::path existing = fs::absolute(dir, ec);
  while (!existing.empty() && !fs::exists(existing, ec) && existing.has_parent_path() && existing != existing.parent_path())
    existing = existing.parent_path();
  // The folder, or the nearest part of it that exists (the rest is made there): a file made and removed in it.
  std::string probe = (existing / ".batchscope-probe-XXXXXX").string();
  const int fd = mkstemp(probe.data());
  if (fd < 0) usage_fail(flag, "cannot write into " + dir + ": cannot create files in " + existing.string() + " (" + std::strerror(errno) + ")");
  close(fd);
  unlink(probe.c_str());
}

}  // namespace bs
