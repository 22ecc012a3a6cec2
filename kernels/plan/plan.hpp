// The execution plan: what a run of one batch size will do, decided before anything is allocated. The planner turns
// (model, batch, typed options, device) into an immutable Plan: per layer the implementation (a registry descriptor)
// and why it was chosen (forced by a flag, tuned by a table, heuristic, or the only one), the layers fused into it,
// the layouts it reads and writes, its workspace and prepared weights; then the transfers, the chunks of an
// overlapped pass, the streams, graph capture, and the device memory the whole plan needs. Every refusal happens
// here, naming the layer (or the batch) and the reason. The backends execute the plan they are given; `batchscope
// plan` prints it (table or JSON), and each sweep point's JSON records it, so the plan printed is the plan run.
#pragma once
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kernels/exec/backend.hpp"
#include "kernels/model/model.hpp"
#include "kernels/plan/options.hpp"
#include "kernels/plan/registry.hpp"
#include "kernels/plan/tuning.hpp"

namespace bs {

// What the planner needs to know of the device (kernels/exec/device_info.hpp: current_device()).
struct DeviceSpec {
  std::string name = "cpu";
  int sm_count = 0;
  int cc_major = 0, cc_minor = 0;
  size_t memory_free = 0, memory_total = 0;
};

// The current GPU's facts (a CUDA build with a GPU; otherwise the defaults above).
DeviceSpec current_device();

// The options a backend cannot run, refused with one line naming the flag (--precision on a CPU backend, per-layer
// transfers with a graph or a 16-bit precision, a version of another precision, ...). make_backend and the planner
// call it.
void check_backend_options(BackendKind b, const BackendOptions& o);
// Whether `b` with options `o` (a forced version, a precision) can run `layer` on its own: what the planner would
// refuse it for; never throws.
Support layer_support(BackendKind b, const BackendOptions& o, const Layer& layer);

enum class Why { forced, tuned, heuristic, only };
const char* why_name(Why w);  // "forced", "tuned", "heuristic", "only"

struct PlanStep {
  size_t layer = 0;
  const Impl* impl = nullptr;  // null for a layer that runs inside an earlier one's kernel
  Why why = Why::only;
  Epilogue epi;                // what its kernel absorbs: the activation after it, then a 2x2 max pool (conv)
  size_t absorbs = 0;          // how many following layers run inside this one's kernel
  int fused_into = -1;         // >= 0: this layer runs inside that layer's kernel
  Layout in_layout = Layout::nchw_fp32, out_layout = Layout::nchw_fp32;
  Shape stored_in;             // the shape its input is stored in (16-bit paths: the tensor before a flatten)
  size_t workspace_floats = 0, prepared_floats = 0;
  std::string describe;        // the implementation column of the CSVs: "auto (tuned): v13 gemm-3xtf32 (conv+relu)"
  bool runs() const { return fused_into < 0; }
};

// The layer decisions for a forward pass of `images` images: a whole batch, or one chunk of an overlapped one.
struct Pass {
  int images = 0;
  std::vector<PlanStep> steps;  // one per layer of the model
  size_t workspace_floats = 0;  // the largest step's: resident passes share one workspace
};

struct PlanMemory {  // bytes
  size_t weights = 0, prepared = 0, input = 0, activations = 0, workspace = 0, output = 0;
  size_t total = 0;
  size_t device_free = 0;  // 0 for the CPU backends
};

struct Plan {
  std::string model, device;
  BackendKind backend = BackendKind::cpu;
  BackendOptions options;
  std::string tuning = "none";  // the table auto reads (cuda), with its date and commit
  int batch = 0;
  std::vector<int> chunks;      // overlapped: the chunks' sizes in order; otherwise one entry, the batch
  std::vector<Pass> passes;     // one per distinct chunk size, in the order they first run
  int streams = 1;              // compute stream, plus a copy-in and a copy-out stream with overlapped transfers
  PlanMemory memory;
  const Pass& pass(int images) const;
};

class Planner {
 public:
  // Reads the tuning table auto uses (cuda: --tuning, else the device's default file if there is one). Fails on
  // options that exclude each other (per-layer with a graph, a 16-bit precision with per-layer transfers, ...).
  Planner(const Model& m, BackendKind backend, const BackendOptions& o, DeviceSpec device);

  // The decisions for a pass of n images (cached). Throws naming the layer when no implementation can run it.
  const Pass& pass(int n) const;
  // The whole plan for a batch of n: every chunk's pass and the memory; throws when it does not fit the device's free
  // memory ("batch N needs X GiB of device memory; the device has Y GiB free").
  Plan plan(int n) const;
  // Bytes of device memory a batch of n needs (0 on the CPU backends), without the check.
  PlanMemory memory(int n) const;
  // Why two instances must not run batches of n at the same time on one device ('' when they may): two layers take
  // turns in one process-wide __constant__ weight bank, or one copies its weights through it in chunks.
  std::string concurrency_hazard(int n) const;
  // Whether layer i may run a version that reads its weights through a texture object at some batch size (a forced
  // version, or one the tuning table chose): the backend then makes the texture when it uploads the weights.
  bool may_read_texture(size_t i) const;

  const Model& model() const { return *model_; }
  BackendKind backend() const { return backend_; }
  const BackendOptions& options() const { return opts_; }
  const DeviceSpec& device() const { return dev_; }
  const std::optional<TuningTable>& tuning() const { return tuning_; }
  std::string tuning_source() const;  // "none", or the path with the table's date and commit
  std::vector<int> chunks(int n) const;

 private:
  Pass make_pass(int n) const;
  void plan_cuda(Pass& p) const;
  void plan_cudnn(Pass& p) const;
  void plan_cpu(Pass& p) const;
  const Impl* choose(size_t i, int n, Why& why) const;  // cuda: a conv or fc layer's version
  void plan_epilogue(Pass& p, size_t i) const;           // what layer i's kernel absorbs

  const Model* model_;
  BackendKind backend_;
  BackendOptions opts_;
  DeviceSpec dev_;
  std::optional<TuningTable> tuning_;
  std::string tuning_path_;
  std::vector<Shape> stored_;  // per layer, its input's stored shape
  mutable std::mutex mu_;
  mutable std::map<int, std::unique_ptr<Pass>> passes_;
};

// --transfers overlapped: the chunk sizes for a batch of n. `chunk` > 0: chunks of that many images (the last holds
// the rest). 0, the default: chunks of a quarter of the batch (at least 32), reached by doubling from a quarter of
// that (at least 16): the first chunk's copy in has nothing to hide under, and each chunk's copy must fit under the
// compute of the one before (1024: 64, 128, 256, 256, 256, 64). experiments/end-to-end.md measured the choice.
std::vector<int> overlapped_chunks(int n, int chunk);

// Per layer, the shape its input is stored in on the 16-bit NHWC paths: the layer's own input shape, except after a
// flatten, which moves nothing (the next layer reads the NHWC tensor before it).
std::vector<Shape> stored_input_shapes(const Model& m);

// `batchscope plan`'s two forms: a table for people, JSON for programs (and each sweep point's record).
std::string plan_table(const Plan& p, const Model& m);
nlohmann::json plan_json(const Plan& p, const Model& m);

// The heuristics auto falls back to without a tuning table (kernels/plan/heuristics.cpp), and what they do in words
// (`batchscope variants` and the README quote them).
// With --weights int8 the fully connected layers take fc v15 (8-bit rows) up to kInt8StreamImages images.
constexpr int kInt8StreamImages = 8;
const Impl* heuristic_version(const Layer& l, int n, Precision p, int sm_count, WeightFormat w = WeightFormat::native);
// The cp.async version whose tiles a TMA version (conv v66-v71) has (v66 -> v45, v67 -> v65, v68 -> v42, v69 -> v61,
// v70 -> v60, v71 -> v41); any other version unchanged. The heuristic takes the twins the other way.
int cp_async_twin(int version);
std::string heuristic_text(LayerKind op);

}  // namespace bs
