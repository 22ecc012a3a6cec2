// The sweep's driver, shared by sweep.cpp (measuring) and sweep_output.cpp (gathering the ranks, the metadata, the
// summary, the trace). Not a public interface: the commands are run_sweep and run_profile (sweep.hpp).
#pragma once
#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/commands/sweep.hpp"
#include "app/exec/datasets.hpp"
#include "app/exec/executor.hpp"
#include "app/exec/world.hpp"
#include "app/results/results_io.hpp"
#include "app/results/trace_export.hpp"
#include "kernels/profile/profile.hpp"

namespace bs {

struct SweepRun {
  double total = 0;
  std::map<std::string, double> categories;
  double copy_hidden = 0;  // seconds of copies under kernels
  double t0 = 0, t1 = 0;   // the run's window on the profiler's clock
  RunStats stats;
  std::vector<ProfileRecord> records;
};

// The bytes a layer moves at batch n: its input and output activations and its weights, each value stored in the
// precision's type (2 bytes for fp16 and bf16, 4 for fp32 and tf32), the weights one byte each where they are read as 8-bit
// values (int8_weights, fully connected layers: fc v15; then a 4-byte scale per output joins the biases): the layer CSV's gb_per_s over its time.
// out: where the plan fused the layers after l into it (LRN + pooling, a convolution + ReLU), the last one's output,
// which is what the kernel writes; else l.out. (LRN + pooling counted LRN's own output, never written, and read
// 103 % of the H100's DRAM bandwidth.)
double layer_bytes(const Layer& l, int n, Precision p, bool int8_weights = false, const Shape* out = nullptr);
// The GPU's DRAM bandwidth in GB/s from gpu_info()'s memory clock and bus width (double data rate), 0 where unknown.
double dram_gb_per_s(const nlohmann::json& gpu);
// The GPU's dense arithmetic peak in GFLOP/s for a precision's products, from gpu_info()'s multiprocessors and SM clock
// and the multiply-adds per clock per multiprocessor of its architecture: compute capability 9.0 (Hopper) FP32 128,
// TF32 1024, FP16 and BF16 2048 (tensor cores, dense); 8.0 (A100) 64, 512, 1024. fp32 is the FP32 (FFMA) peak, which
// the 3xTF32 versions may pass. 0 for other architectures.
double peak_gflop_per_s(const nlohmann::json& gpu, Precision p);

class SweepDriver {
 public:
  explicit SweepDriver(SweepOptions o) : o_(std::move(o)) {}

  void prepare();                      // validates, loads, plans every batch size (refusals before any measurement)
  void run_all(bool quiet_progress);   // measures every batch size not already held; false if interrupted
  bool was_interrupted() const { return interrupted_; }
  // --resume: takes the points of an earlier sweep written with the same options (its JSON), and measures only the
  // batch sizes it lacks.
  void take_earlier(const nlohmann::json& earlier);

  nlohmann::json metadata() const;
  void print_summary(std::ostream& os) const;
  void write_trace() const;
  const std::vector<SweepRow>& rows() const { return rows_; }
  const std::vector<LayerRow>& layers() const { return layers_; }
  const SweepIdentity& identity() const { return id_; }
  const std::vector<ProfileRecord>& warm_records() const { return all_warm_records_; }
  const Model& model() const { return model_; }
  BackendKind backend() const { return backend_; }
  int measured_points() const { return measured_; }

 private:
  void prepare_rank();
  void check_host_memory(int n) const;
  size_t max_activation() const;
  const float* to_input_type(const float* src, float* dst, size_t values) const;
  std::shared_ptr<float> converted_buffer(size_t values) const;
  SweepRun run_once(std::unique_ptr<Backend>& backend, int n, const float* in, float* out, Profiler* prof);
  void attach_records(std::vector<SweepRun>& runs);
  void set_times(SweepRow& row, const std::vector<double>& seconds, int images) const;
  SweepRow aggregate(int n, const std::string& kind, const std::vector<SweepRun>& timed, const std::vector<SweepRun>& runs);
  void layer_rows(int n, const std::string& kind, const std::vector<SweepRun>& runs, const Backend& b);
  void check(SweepRow& row, const float* in, const float* out);
  void progress(int bi, int n, int rep, int reps);
  int my_share(int b, int* first = nullptr) const;
  bool stop_now();  // interrupted (on any rank), at a safe point
  // Measures one batch size; false when interrupted before it was complete (nothing of it is kept).
  bool run_point(size_t bi, bool quiet_progress);
  double solo_median(Backend& b, int batch);
  void gather_ranks();
  void sort_points();

  SweepOptions o_;
  BackendKind backend_ = BackendKind::cpu;
  bool gpu_ = false;
  double peak_gb_per_s_ = 0;     // the GPU's DRAM bandwidth (layer rows' bandwidth_pct); 0 on the CPU
  double peak_gflop_per_s_ = 0;  // its arithmetic peak in the run's precision (layer rows' peak_pct); 0 on the CPU
  Model model_;
  BackendOptions opts_;
  std::unique_ptr<Executor> exec_;
  std::unique_ptr<Backend> ref_;
  // --weights int8: the check's reference runs the quantised weights (ref_model_), so the check keeps the precision's
  // tolerance; fp32_ref_ runs the model's own weights once, at the first check, for what quantisation changed (quant_).
  Model ref_model_;
  std::unique_ptr<Backend> fp32_ref_;
  nlohmann::json quant_;
  std::unique_ptr<Profiler> profiler_;
  bool separate_ = false;  // --profiled-passes separate (resolved): the timed passes run untraced
  int profile_reps_ = 0;   // separate: profiled passes per point
  ImagePool inputs_;
  SweepIdentity id_;
  std::vector<SweepRow> rows_;
  std::vector<LayerRow> layers_;
  std::vector<ProfileRecord> all_warm_records_;
  std::vector<TraceRun> trace_runs_;
  std::vector<std::string> notes_;
  nlohmann::json plans_ = nlohmann::json::object();  // per batch size: the plan it ran (plan.hpp's JSON)
  std::vector<int> held_;      // --resume: batch sizes the earlier sweep measured
  nlohmann::json earlier_;     // --resume: the earlier sweep's metadata
  int measured_ = 0;           // batch sizes measured by this invocation
  bool interrupted_ = false;
  std::chrono::steady_clock::time_point start_;
  World& world_ = World::get();
  nlohmann::json device_, rank_devices_;
  struct Steps {
    int batch;
    std::string run;
    std::vector<double> seconds;
  };
  std::vector<Steps> steps_;  // under mpirun: this rank's step time of every repetition, per point
  std::vector<double> solo_;  // per measured batch size: rank 0's one-rank median pass (seconds), -1 when not measured
};

}  // namespace bs
