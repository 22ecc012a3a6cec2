// One interface, several backends: cpu-ref (plain loops, the oracle), cpu (im2col + OpenBLAS), and, where
// built with CUDA, cuda (this project's kernels) and cudnn (cuDNN + cuBLAS).
#pragma once
#include <memory>
#include <string_view>
#include <string>
#include <vector>

#include "kernels/model/model.hpp"
#include "kernels/plan/options.hpp"
#include "kernels/profile/profile.hpp"

namespace bs {

struct Support {
  bool ok = true;
  std::string reason;  // why not, when !ok
};

// Time spent per layer, accumulated over forward() calls (seconds; device time for GPU backends).
struct RunStats {
  std::vector<double> layer_seconds;
  void add(size_t layer, double s) {
    if (layer_seconds.size() <= layer) layer_seconds.resize(layer + 1, 0.0);
    layer_seconds[layer] += s;
  }
};

// How a backend runs, typed (kernels/plan/options.hpp); the flags that set it are parsed once (app/cli/run_flags.hpp).
struct BackendOptions {
  int conv_variant = 0;      // cuda: a convolution version number, 0 = auto (the tuning table's choice, else the heuristic)
  int fc_variant = 0;        // cuda: a fully connected version number, 0 = auto
  int threads = 0;           // cpu, cpu-ref: 0 = all cores
  bool guard_check = false;  // GPU: poison activations with NaN, guard zones after them, checked after each run
  // GPU: resident (weights and activations stay on the device), per-layer (the study's structure: allocate / copy in /
  // run / copy out / free around every layer, intermediate activations back on the host), or overlapped (resident
  // weights; the batch in chunks whose host-to-device copies run on one stream, compute on another and device-to-host
  // copies on a third, so that chunk i+1's copy in and chunk i-1's copy out overlap chunk i's compute; pageable host
  // buffers are staged through pinned ones: gpu_pipeline.hpp).
  Transfers transfers = Transfers::resident;
  bool pinned_host = false;  // per-layer: host intermediates in pinned memory (cudaMallocHost / cudaFreeHost)
  int chunk = 0;             // overlapped: images per chunk (0: plan.hpp's overlapped_chunks default)
  // GPU, not per-layer: each batch (or chunk) size's layers captured once into a CUDA graph and replayed; the first
  // forward of a size runs eagerly (first-use work: algorithm searches, weight preparation) and then captures.
  bool cuda_graph = false;
  // GPU, --transfers resident, pinned host buffers: who moves the input to the device and the output back. engine: the
  // copy engines (cudaMemcpyAsync), around the layers or their graph. kernel: two kernels that read the pinned input and
  // write the pinned output over the bus (cuda::bus_copy), inside the layers' graph with --cuda-graph: one submission
  // per pass and no hand-over between copy engine and kernels, worth ~10 us at batch 1 (experiments/batch1-latency.md),
  // at the SMs' bus rate, which is below the copy engines' at large batches. The breakdown books them as htod / dtoh.
  Copies copies = Copies::engine;
  // cudnn: fastest takes cuDNN's fastest FP32 (FMA-math) algorithm, FFT and Winograd included, whose rounding differs
  // from a direct sum (seen: 8e-4 relative on AlexNet conv2); exact keeps to the GEMM and direct algorithms, which
  // agree with cpu-ref to FP32 rounding.
  CudnnAlgos cudnn_algos = CudnnAlgos::fastest;
  // cuda: the tuning table auto reads (kernels/plan/tuning.hpp); empty: the device's default file, if there is one.
  std::string tuning_file;
  // The cpu backends are the fp32 reference and refuse anything else.
  Precision precision = Precision::fp32;
  // GPU backends, not with per-layer transfers; 16-bit only with the same precision: what forward's `in` holds. fp32:
  // FP32 values, converted on the device inside the first layer; u8: one byte per value (raw 8-bit pixels, (N, C, H,
  // W)), copied as they are (a quarter of the bytes) and widened to FP32 on the device inside the first layer's time;
  // fp16 / bf16: 16-bit values (raw IEEE binary16 or bfloat16 bits, (N, C, H, W), already converted on the host:
  // app/exec/input_precision.hpp), copied as they are (half the bytes) and read by the first layer.
  InputPrecision input_precision = InputPrecision::fp32;
  // cuda only. native: the weights as the model holds them, in the precision's type. int8: weight-only quantisation
  // (kernels/model/quantize.hpp), done at load: each output channel's convolution or fully connected weights become
  // q x scale, q a whole number in [-127, 127], scale = the channel's largest magnitude / 127; activations stay in the
  // precision. Versions marked int8_weights (fc v15) read q and the scales as 8-bit rows; the others read q x scale in
  // the precision's type, with the same values.
  WeightFormat weights = WeightFormat::native;
};

class Planner;

class Backend {
 public:
  Backend(BackendKind kind, const BackendOptions& o) : kind_(kind), opts_(o) {}
  virtual ~Backend() = default;
  BackendKind kind() const { return kind_; }
  std::string name() const { return name_of(kind_); }
  const BackendOptions& options() const { return opts_; }
  // Whether this backend, with its options (a forced version, a precision), can run the layer on its own: what the
  // planner would refuse it for (kernels/plan/plan.hpp: layer_support); never throws.
  Support supports(const Layer& layer) const;
  // Takes the model (uploads weights for device backends) and runs the plans of `planner` (made from the model, this
  // backend's kind and options); without one, it makes its own. Throws, naming the layer, when a layer is unsupported:
  // nothing falls back silently.
  virtual void load(const Model& model, std::shared_ptr<const Planner> planner = nullptr) = 0;
  // The planner whose plans this backend runs (after load).
  const Planner& planner() const;
  // Runs layers [0, n_layers) on n images. in: (N, C, H, W) host floats (bytes or 16-bit values with a u8 or 16-bit
  // input_precision); out: (N, features of the last layer run) host floats.
  virtual void forward(const float* in, int n, size_t n_layers, float* out, RunStats* stats) = 0;
  // Which implementation ran layer i at the last batch size ("im2col+sgemm", "auto (tuned): v6 implicit-gemm", ...),
  // for reports: the plan's words, or what a library chose at run time (cuDNN's algorithm).
  virtual std::string describe(size_t layer) const;
  // Extra facts for the results' metadata, e.g. the cuDNN algorithm chosen per convolution.
  virtual std::vector<std::string> notes() const { return {}; }
  // Records, per layer, what the backend does (a profiler listens). Null: nobody listens.
  void set_tracer(Tracer* t) { tracer_ = t; }

 protected:
  BackendKind kind_;
  BackendOptions opts_;
  Tracer* tracer_ = nullptr;
  std::shared_ptr<const Planner> planner_;
  int last_n_ = 1;  // the batch size of the last forward
  // Sets planner_ to `given`, or to a planner of its own for `m`.
  void adopt_planner(const Model& m, std::shared_ptr<const Planner> given);
};

std::vector<BackendKind> backend_kinds();  // those built into this binary
std::string backend_list();               // "cpu-ref, cpu, cuda, cudnn"
// Fails naming --precision, --transfers, ... on options the backend cannot run.
std::unique_ptr<Backend> make_backend(BackendKind kind, const BackendOptions& opts = {});
// By name (tests, tools): "--backend: unknown backend 'x' (this build has: ...)" for a name it does not have.
std::unique_ptr<Backend> make_backend(std::string_view name, const BackendOptions& opts = {});

}  // namespace bs
