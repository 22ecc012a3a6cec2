// --trace FILE.json: profiled runs as Chrome trace-event JSON (the "JSON Object Format" of Google's Trace Event
// Format document), which Perfetto (ui.perfetto.dev) and chrome://tracing open. One process per run (a batch
// size's first warm run); in it one track per host thread for the CUDA runtime API calls, one per CUDA stream for
// the kernels, copies and memsets that ran on it, and one for CPU phases (the CPU backends' layers). Every event is
// a complete event ("ph": "X") with microsecond times from the run's start, and names the layer that caused it.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernels/model/model.hpp"
#include "kernels/profile/profile.hpp"

namespace bs {

struct TraceRun {
  std::string label;  // the process's name, e.g. "batch 64, warm run 1"
  double t0 = 0, t1 = 0;  // the run's window on the profiler's clock (seconds)
  std::vector<ProfileRecord> records;
};

nlohmann::json chrome_trace(const std::vector<TraceRun>& runs, const Model& m, const nlohmann::json& metadata);

}  // namespace bs
