#include "app/results/trace_export.hpp"

#include <map>
#include <utility>

namespace bs {
namespace {

// A run's tracks, in display order: the measured interval, host threads (CUDA API calls), CUDA streams, CPU phases.
// Track ids are small integers given in that order (trace viewers read tids as 32-bit); the names carry CUPTI's ids.
enum class Track { run = 0, api = 1, stream = 2, cpu = 3 };

std::pair<Track, uint32_t> track_of(const ProfileRecord& r) {
  switch (r.type) {
    case RecordType::api: return {Track::api, r.thread};
    case RecordType::cpu: return {Track::cpu, r.thread};
    default: return {Track::stream, r.stream};
  }
}

std::string track_name(std::pair<Track, uint32_t> t) {
  switch (t.first) {
    case Track::run: return "run (the measured interval)";
    case Track::api: return "CUDA API, host thread " + std::to_string(t.second);
    case Track::cpu: return "CPU phases";
    default: return "GPU stream " + std::to_string(t.second);
  }
}

const char* type_name(RecordType t) {
  switch (t) {
    case RecordType::kernel: return "kernel";
    case RecordType::memcpy: return "memcpy";
    case RecordType::memset: return "memset";
    case RecordType::api: return "api";
    case RecordType::cpu: return "cpu";
  }
  return "other";
}

nlohmann::json meta(const char* what, int pid, int64_t tid, const nlohmann::json& args) {
  nlohmann::json e = {{"name", what}, {"ph", "M"}, {"pid", pid}, {"args", args}};
  if (tid >= 0) e["tid"] = tid;
  return e;
}

}  // namespace

nlohmann::json chrome_trace(const std::vector<TraceRun>& runs, const Model& m, const nlohmann::json& metadata) {
  nlohmann::json events = nlohmann::json::array();
  for (size_t p = 0; p < runs.size(); ++p) {
    const TraceRun& run = runs[p];
    const int pid = static_cast<int>(p) + 1;
    events.push_back(meta("process_name", pid, -1, {{"name", run.label}}));
    events.push_back(meta("process_sort_index", pid, -1, {{"sort_index", pid}}));
    std::map<std::pair<Track, uint32_t>, int> tracks = {{{Track::run, 0}, 0}};
    for (const ProfileRecord& r : run.records) tracks.emplace(track_of(r), 0);
    int next = 0;
    for (auto& [key, tid] : tracks) {
      tid = next++;
      events.push_back(meta("thread_name", pid, tid, {{"name", track_name(key)}}));
      events.push_back(meta("thread_sort_index", pid, tid, {{"sort_index", tid}}));
    }
    events.push_back({{"name", "run"}, {"cat", "run"}, {"ph", "X"}, {"pid", pid}, {"tid", 0}, {"ts", 0.0},
                      {"dur", (run.t1 - run.t0) * 1e6}, {"args", {{"label", run.label}}}});
    for (const ProfileRecord& r : run.records) {
      nlohmann::json args = {{"type", type_name(r.type)}, {"category", category_of(r, m)}};
      if (r.layer >= 0 && r.layer < static_cast<int>(m.layers.size())) {
        args["layer"] = m.layers[r.layer].name;
        args["layer_index"] = r.layer;
      }
      if (r.bytes) args["bytes"] = r.bytes;
      if (!r.copy_kind.empty()) args["copy_kind"] = r.copy_kind;
      if (r.correlation) args["correlation"] = r.correlation;
      if (r.graph_node) args["graph_node"] = r.graph_node;
      events.push_back({{"name", r.name}, {"cat", args["category"]}, {"ph", "X"}, {"pid", pid}, {"tid", tracks.at(track_of(r))},
                        {"ts", (r.start - run.t0) * 1e6}, {"dur", (r.end - r.start) * 1e6}, {"args", args}});
    }
  }
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}, {"otherData", metadata}};
}

}  // namespace bs
