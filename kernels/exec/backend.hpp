// One interface, several backends: cpu-ref (plain loops, the oracle), cpu (im2col + OpenBLAS), and, where
// built with CUDA, cuda (this project's kernels) and cudnn (cuDNN + cuBLAS).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "kernels/model/model.hpp"
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

struct BackendOptions {
  std::string conv_variant;  // cuda: a version number or name; empty = the default
  int threads = 0;           // cpu: 0 = all cores
  std::string fc_variant;    // cuda: fully connected version; empty = the default
  bool guard_check = false;  // GPU: poison activations with NaN, guard zones after them, checked after each run
  // GPU: the study's structure, allocate / copy in / run / copy out / free around every layer (intermediate
  // activations go back to the host), instead of keeping weights and activations resident on the device.
  bool per_layer_transfers = false;
  bool pinned_host = false;  // per-layer: host intermediates in pinned memory (cudaMallocHost / cudaFreeHost)
  // GPU, resident weights: the batch split into chunks of `chunk` images (0: quarters of the batch reached by doubling from a sixteenth), whose
  // host-to-device copies run on one stream, compute on another and device-to-host copies on a third, so that chunk
  // i+1's copy in and chunk i-1's copy out overlap chunk i's compute. Host buffers that are not pinned are staged
  // through pinned ones (gpu_pipeline.hpp).
  bool overlapped_transfers = false;
  int chunk = 0;
  // GPU, not per-layer: each batch (or chunk) size's layers captured once into a CUDA graph and replayed; the first
  // forward of a size runs eagerly (first-use work: algorithm searches, weight preparation) and then captures.
  bool cuda_graph = false;
  // cudnn: "fastest" takes cuDNN's fastest FP32 (FMA-math) algorithm, FFT and Winograd included, whose
  // rounding differs from a direct sum (seen: 8e-4 relative on AlexNet conv2); "exact" keeps to the GEMM
  // and direct algorithms, which agree with cpu-ref to FP32 rounding.
  std::string cudnn_algos = "fastest";
  // cuda: the tuning table auto reads (kernels/plan/tuning.hpp); empty: the device's default file, if there is one.
  std::string tuning_file;
  // fp32 | tf32 (menus.hpp: precision_menu); the cpu backends are the fp32 reference and refuse anything else.
  std::string precision = "fp32";
  // fp32 | u8 | fp16 | bf16 (GPU backends, not with per-layer transfers; 16-bit only with the same --precision): what
  // forward's `in` holds. fp32: FP32 values, converted on the device inside the first layer; u8: one byte per value
  // (raw 8-bit pixels, (N, C, H, W)), copied as they are (a quarter of the bytes) and widened to FP32 on the device
  // inside the first layer's time; fp16 / bf16: 16-bit values (raw IEEE binary16 or bfloat16 bits, (N, C, H, W),
  // already converted on the host: app/exec/input_precision.hpp), copied as they are (half the bytes) and read by the
  // first layer.
  std::string input_precision = "fp32";
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // Whether this backend (with its chosen variants) can run the layer; never throws.
  virtual Support supports(const Layer& layer) const = 0;
  // Takes the model (uploads weights for device backends). Throws, naming the layer, when a layer is
  // unsupported: nothing falls back silently.
  virtual void load(const Model& model) = 0;
  // Runs layers [0, n_layers) on n images. in: (N, C, H, W) host floats (bytes or 16-bit values with a u8 or 16-bit
  // input_precision); out: (N, features of the last layer run) host floats.
  virtual void forward(const float* in, int n, size_t n_layers, float* out, RunStats* stats) = 0;
  // Which implementation ran a layer ("im2col+sgemm", "v6 implicit-gemm", ...), for reports.
  virtual std::string describe(const Layer& layer) const { (void)layer; return name(); }
  // Device memory a forward of n images needs (0 for CPU backends), and what the device has free.
  virtual size_t device_bytes_needed(int n) const { (void)n; return 0; }
  virtual size_t device_bytes_free() const { return 0; }
  // Why two instances of this backend must not run batches of n images at the same time on one device
  // (process-wide device state, such as a __constant__ weight bank that two layers take turns in); empty
  // when they may.
  virtual std::string concurrency_hazard(int n) const { (void)n; return ""; }
  // Extra facts for the results' metadata, e.g. the cuDNN algorithm chosen per convolution.
  virtual std::vector<std::string> notes() const { return {}; }
  // Records, per layer, what the backend does (a profiler listens). Null: nobody listens.
  void set_tracer(Tracer* t) { tracer_ = t; }

 protected:
  Tracer* tracer_ = nullptr;
};

std::vector<std::string> backend_names();  // those built into this binary
std::unique_ptr<Backend> make_backend(const std::string& name, const BackendOptions& opts = {});

}  // namespace bs
