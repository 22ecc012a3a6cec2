#include "kernels/profile/profile.hpp"

#include <algorithm>
#include <cstdio>

namespace bs {

ProfileRecord cpu_record(const std::string& name, int layer, double start, double end) {
  ProfileRecord r;
  r.type = RecordType::cpu;
  r.name = name;
  r.layer = layer;
  r.start = start;
  r.end = end;
  return r;
}

const std::vector<std::string>& breakdown_categories() {
  static const std::vector<std::string> c = {"htod", "dtoh", "dtod", "memset", "conv", "pool", "fc", "act", "lrn",
                                             "softmax", "flatten", "other_kernel", "alloc", "free", "memcpy_api",
                                             "sync", "launch", "other_api", "host"};
  return c;
}

std::string bus_copy_direction(const std::string& kernel_name) {
  if (kernel_name.find(kBusCopyHtod) != std::string::npos) return "HtoD";
  if (kernel_name.find(kBusCopyDtoh) != std::string::npos) return "DtoH";
  return "";
}

std::string category_of(const ProfileRecord& r, const Model& m) {
  switch (r.type) {
    case RecordType::kernel:
      if (r.layer < 0) {
        const std::string dir = bus_copy_direction(r.name);
        if (dir == "HtoD") return "htod";
        if (dir == "DtoH") return "dtoh";
      }
      [[fallthrough]];
    case RecordType::cpu:
      if (r.layer >= 0 && r.layer < static_cast<int>(m.layers.size())) return kind_name(m.layers[r.layer].kind());
      if (r.type == RecordType::cpu) return r.name == "alloc" ? "alloc" : "host";  // CPU phases outside layers
      return "other_kernel";
    case RecordType::memcpy:
      if (r.copy_kind == "HtoD") return "htod";
      if (r.copy_kind == "DtoH") return "dtoh";
      return "dtod";
    case RecordType::memset:
      return "memset";
    case RecordType::api: {
      const std::string& n = r.name;
      if (n.rfind("cudaMalloc", 0) == 0 || n == "cudaHostAlloc") return "alloc";
      if (n.rfind("cudaFree", 0) == 0) return "free";
      if (n.rfind("cudaMemcpy", 0) == 0 || n.rfind("cudaMemset", 0) == 0) return "memcpy_api";
      if (n.find("Synchronize") != std::string::npos) return "sync";
      if (n.rfind("cudaLaunch", 0) == 0) return "launch";
      return "other_api";
    }
  }
  return "other_api";
}

std::map<std::string, double> breakdown(const std::vector<ProfileRecord>& records, const Model& m, double t0, double t1) {
  std::map<std::string, double> out;
  for (const std::string& c : breakdown_categories()) out[c] = 0.0;
  if (t1 <= t0) return out;
  // Sweep over every boundary; in each elementary segment the highest-priority active record wins:
  // kernel or CPU phase, then copy or memset, then API call, else "host".
  struct Edge {
    double t;
    int idx;
    bool open;
  };
  std::vector<Edge> edges;
  std::vector<int> prio(records.size());
  std::vector<std::string> cat(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    const ProfileRecord& r = records[i];
    const double s = std::max(r.start, t0), e = std::min(r.end, t1);
    if (e <= s) continue;
    prio[i] = r.type == RecordType::api ? 1 : (r.type == RecordType::memcpy || r.type == RecordType::memset) ? 2 : 3;
    cat[i] = category_of(r, m);
    edges.push_back({s, static_cast<int>(i), true});
    edges.push_back({e, static_cast<int>(i), false});
  }
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) { return a.t < b.t; });
  std::vector<int> active;  // indices of open records (few at a time)
  double t = t0;
  auto credit = [&](double until) {
    if (until <= t) return;
    int best = -1;
    for (int i : active)
      if (best < 0 || prio[i] > prio[best] || (prio[i] == prio[best] && records[i].start < records[best].start)) best = i;
    out[best < 0 ? std::string("host") : cat[best]] += until - t;
    t = until;
  };
  for (const Edge& e : edges) {
    credit(e.t);
    if (e.open) active.push_back(e.idx);
    else active.erase(std::find(active.begin(), active.end(), e.idx));
  }
  credit(t1);
  return out;
}

double hidden_copy_seconds(const std::vector<ProfileRecord>& records, double t0, double t1) {
  std::vector<std::pair<double, int>> edges;  // (time, +1/-1 kernels or +2/-2 copies)
  for (const ProfileRecord& r : records) {
    const bool kernel = r.type == RecordType::kernel, copy = r.type == RecordType::memcpy;
    const double s = std::max(r.start, t0), e = std::min(r.end, t1);
    if ((!kernel && !copy) || e <= s) continue;
    edges.push_back({s, kernel ? 1 : 2});
    edges.push_back({e, kernel ? -1 : -2});
  }
  std::sort(edges.begin(), edges.end());
  int kernels = 0, copies = 0;
  double hidden = 0, t = t0;
  for (const auto& [at, d] : edges) {
    if (kernels > 0 && copies > 0) hidden += at - t;
    t = at;
    if (d == 1 || d == -1) kernels += d;
    else copies += d / 2;
  }
  return hidden;
}

std::vector<SummaryRow> summarize(const std::vector<ProfileRecord>& records) {
  std::map<std::pair<std::string, std::string>, SummaryRow> rows;
  for (const ProfileRecord& r : records) {
    const std::string section = r.type == RecordType::api ? "API calls" : r.type == RecordType::cpu ? "CPU phases" : "GPU activities";
    SummaryRow& row = rows[{section, r.name}];
    const double d = r.end - r.start;
    if (row.calls == 0) {
      row.section = section;
      row.name = r.name;
      row.min = row.max = d;
    }
    row.total += d;
    row.min = std::min(row.min, d);
    row.max = std::max(row.max, d);
    ++row.calls;
  }
  std::vector<SummaryRow> out;
  for (auto& [k, v] : rows) out.push_back(v);
  std::stable_sort(out.begin(), out.end(), [](const SummaryRow& a, const SummaryRow& b) {
    if (a.section != b.section) {
      auto rank = [](const std::string& s) { return s == "GPU activities" ? 0 : s == "API calls" ? 1 : 2; };
      return rank(a.section) < rank(b.section);
    }
    return a.total > b.total;
  });
  return out;
}

namespace {
std::string fmt_time(double s) {  // nvprof style: 1.2345ms, 12.345us
  char buf[32];
  if (s >= 1.0) std::snprintf(buf, sizeof buf, "%.4fs", s);
  else if (s >= 1e-3) std::snprintf(buf, sizeof buf, "%.4fms", s * 1e3);
  else if (s >= 1e-6) std::snprintf(buf, sizeof buf, "%.4fus", s * 1e6);
  else std::snprintf(buf, sizeof buf, "%.0fns", s * 1e9);
  return buf;
}
}  // namespace

std::string format_summary(const std::vector<SummaryRow>& rows) {
  std::string out = "            Type  Time(%)      Time     Calls       Avg       Min       Max  Name\n";
  std::map<std::string, double> section_total;
  for (const SummaryRow& r : rows) section_total[r.section] += r.total;
  std::string last;
  for (const SummaryRow& r : rows) {
    char buf[512];
    std::snprintf(buf, sizeof buf, "%16s  %6.2f%%  %9s  %8d  %9s  %9s  %9s  %s\n", r.section == last ? "" : (r.section + ":").c_str(),
                  section_total[r.section] > 0 ? 100.0 * r.total / section_total[r.section] : 0.0, fmt_time(r.total).c_str(),
                  r.calls, fmt_time(r.total / r.calls).c_str(), fmt_time(r.min).c_str(), fmt_time(r.max).c_str(), r.name.c_str());
    out += buf;
    last = r.section;
  }
  return out;
}

}  // namespace bs

#include <chrono>

namespace bs {
namespace {

class SteadyProfiler : public Profiler {
 public:
  void layer_begin(int) override {}
  void layer_end(int) override {}
  void cpu_phase(const std::string& name, int layer, double start, double end) override {
    if (!runs_.empty()) runs_.back().records.push_back(cpu_record(name, layer, start, end));
  }
  double now() const override {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }
  void begin_run() override {
    runs_.emplace_back();
    runs_.back().t0 = now();
  }
  void end_run() override { runs_.back().t1 = now(); }
  std::vector<Run> collect() override { return std::move(runs_); }
  std::string kind() const override { return "steady clock"; }

 private:
  std::vector<Run> runs_;
};

}  // namespace

std::unique_ptr<Profiler> make_steady_profiler() { return std::make_unique<SteadyProfiler>(); }

}  // namespace bs
