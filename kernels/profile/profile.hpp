// What the profiler sees, for every backend: one record type (kernels, copies, memsets, runtime API calls,
// CPU phases), the tracer hook that backends call around layers, and the two ways records are summed:
//   - breakdown(): a partition of the run's wall time into categories (every instant counted once: a GPU
//     activity if one is running, else the API call the host is in, else "host"), so categories add up
//     to the measured total;
//   - summarize(): nvprof's view ("GPU activities" and "API calls", each with its own durations, which
//     overlap; CPU backends' "CPU phases"), with Time(%), Time, Calls, Avg, Min, Max per name.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kernels/model/model.hpp"

namespace bs {

enum class RecordType { kernel, memcpy, memset, api, cpu };

struct ProfileRecord {
  RecordType type = RecordType::kernel;
  std::string name{};  // kernel name, "[CUDA memcpy HtoD]", "cudaMalloc", or a CPU phase name
  int layer = -1;     // index of the layer that launched it, -1 outside layers
  double start = 0;   // seconds, on the profiler's clock
  double end = 0;
  uint64_t bytes = 0;  // copies and memsets
  std::string copy_kind{};  // memcpy: "HtoD", "DtoH", "DtoD", "HtoH"
  uint32_t correlation = 0;  // CUPTI: ties a GPU activity to the API call that caused it
  uint32_t stream = 0;       // GPU activities: the CUDA stream (CUPTI's stream id); 0 for the rest
  uint32_t thread = 0;       // API calls and CPU phases: the host thread (CUPTI's thread id); 0 when unknown
  uint64_t graph_node = 0;   // GPU activities replayed from a CUDA graph: CUPTI's id of the node; 0 otherwise
};

// A CPU-side phase record (Tracer::cpu_phase).
ProfileRecord cpu_record(const std::string& name, int layer, double start, double end);

// --copies kernel: the copy kernels' names (kernels/cuda/ops/ops.cu), and the direction a kernel record's name says
// it copies in: "HtoD", "DtoH", or "" for every other kernel. category_of books these kernels as the copies they are.
inline constexpr const char* kBusCopyHtod = "bus_copy_htod_kernel";
inline constexpr const char* kBusCopyDtoh = "bus_copy_dtoh_kernel";
std::string bus_copy_direction(const std::string& kernel_name);

// Breakdown categories, in CSV column order.
const std::vector<std::string>& breakdown_categories();
// The category of a record: kernels and CPU phases by the kind of their layer ("conv", "pool", "fc",
// "act", "lrn", "softmax", "flatten"; "other_kernel" outside layers), copies by direction (copy kernels too) ("htod", "dtoh",
// "dtod"), "memset", and API calls by family ("alloc", "free", "memcpy_api", "sync", "launch", "other_api").
std::string category_of(const ProfileRecord& r, const Model& m);

// Time (seconds) per category over [t0, t1]; the categories partition the interval ("host" is the rest). Where
// records overlap, a kernel (or CPU phase) wins over a copy or memset, which wins over an API call: with copies
// overlapped on other streams, the time a copy runs under a kernel counts as the kernel's (see hidden_copy_seconds).
std::map<std::string, double> breakdown(const std::vector<ProfileRecord>& records, const Model& m, double t0, double t1);
// Time (seconds) in [t0, t1] during which a copy runs while a kernel runs: copy time hidden under compute, which the
// partition above gives to the kernels. 0 when every copy is serial with the kernels.
double hidden_copy_seconds(const std::vector<ProfileRecord>& records, double t0, double t1);

struct SummaryRow {
  std::string section;  // "GPU activities" or "API calls"
  std::string name;
  double total = 0, min = 0, max = 0;
  int calls = 0;
};
std::vector<SummaryRow> summarize(const std::vector<ProfileRecord>& records);
// Prints the rows as nvprof did: Type, Time(%), Time, Calls, Avg, Min, Max, Name.
std::string format_summary(const std::vector<SummaryRow>& rows);

// Backends call these around each layer, so that records can name the layer that caused them.
class Tracer {
 public:
  virtual ~Tracer() = default;
  virtual void layer_begin(int layer) = 0;
  virtual void layer_end(int layer) = 0;
  // A CPU-side phase measured with a steady clock (CPU backends).
  virtual void cpu_phase(const std::string& name, int layer, double start, double end) = 0;
  virtual double now() const = 0;  // the clock cpu_phase uses
};

}  // namespace bs

namespace bs {

// Marks runs and hands back their records. Records are gathered only in collect(), after the runs: a
// flush between runs would cost the next run's first CUDA call its buffer set-up (measured on an H200:
// ~0.2 ms per run), so runs are told apart by their time windows instead.
class Profiler : public Tracer {
 public:
  struct Run {
    double t0 = 0, t1 = 0;  // on the profiler's clock
    std::vector<ProfileRecord> records;
  };
  virtual void begin_run() = 0;  // a run starts at now()
  virtual void end_run() = 0;    // and ends at now()
  // Between runs: stop recording, so that passes run as without a profiler (sweep's --profiled-passes separate), and
  // start again. Records already made are kept for collect(). Nothing to do for a profiler that costs nothing unused.
  virtual void pause() {}
  virtual void resume() {}
  // Every run marked since the last collect(), with the records that started inside its window.
  virtual std::vector<Run> collect() = 0;
  virtual std::string kind() const = 0;  // "steady clock" or "CUPTI activity API <version>"
};

// CPU backends: layer phases on std::chrono::steady_clock.
std::unique_ptr<Profiler> make_steady_profiler();
// GPU backends (CUDA builds): CUPTI activity records (kernels, memcpy, memset, runtime API), attributed to
// layers through external correlation ids pushed by layer_begin(). Throws when CUPTI cannot start.
std::unique_ptr<Profiler> make_cupti_profiler();

}  // namespace bs
