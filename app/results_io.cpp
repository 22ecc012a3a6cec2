#include "app/results_io.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "kernels/profile.hpp"
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

std::vector<std::string> sweep_csv_header() {
  std::vector<std::string> h;
  for (const char* c : {"model", "weights", "backend", "variant", "fc_variant", "precision", "transfers", "host_memory",
                        "profiler", "batch", "run", "reps", "total_ms_median", "total_ms_min", "total_ms_max",
                        "total_ms_p50", "total_ms_p90", "total_ms_p99", "images_per_s", "gflop_per_s"})
    h.push_back(c);
  for (const std::string& c : breakdown_categories()) h.push_back(c + "_ms");
  for (const char* c : {"check", "check_rel_l2", "check_images", "check_top1"}) h.push_back(c);
  return h;
}

std::string sweep_csv(const SweepIdentity& id, const std::vector<SweepRow>& rows) {
  std::string out;
  for (const std::string& h : sweep_csv_header()) out += (out.empty() ? "" : ",") + h;
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
    out += "," + r.check + "," + num(r.check_rel_l2) + "," + std::to_string(r.check_images) + "," +
           (r.check_images > 0 ? num(r.check_top1) : std::string()) + "\n";
  }
  return out;
}

std::string layers_csv(const SweepIdentity& id, const std::vector<LayerRow>& rows) {
  std::string out = std::string(kIdentityHeader) +
                    ",batch,run,layer,type,implementation,median_ms,min_ms,max_ms,gflop_per_s,gb_per_s\n";
  for (const LayerRow& r : rows)
    out += identity_cells(id) + "," + std::to_string(r.batch) + "," + r.run + "," + quote(r.layer) + "," + r.type + "," +
           quote(r.implementation) + "," + num(r.median * 1e3) + "," + num(r.min * 1e3) + "," + num(r.max * 1e3) + "," +
           num(r.gflop_per_s) + "," + num(r.gb_per_s) + "\n";
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
  if (!fs::is_directory(dir, ec)) fail(flag, "cannot write " + path + ": folder " + dir.string() + " does not exist");
  if (fs::is_directory(p, ec)) fail(flag, "cannot write " + path + ": it is a folder");
  if (access(dir.c_str(), W_OK) != 0) fail(flag, "cannot write " + path + ": " + std::strerror(errno));
}

}  // namespace bs
