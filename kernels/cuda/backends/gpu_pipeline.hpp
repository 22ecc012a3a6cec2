// What the two GPU backends (cuda, cudnn) share: weights on the device, the forward pass in one stream with
// CUDA-event timing per layer, tracer calls around layers, and the two transfer structures:
//   resident   weights uploaded once at load; activations stay on the device (ping-pong buffers); only
//              the input goes in (cudaMemcpyAsync) and the output comes back.
//   per-layer  the study's structure: around every layer cudaMalloc the input, output and weights,
//              cudaMemcpy them in, run, cudaMemcpy the output back to the host, cudaFree everything.
//   overlapped resident weights; the batch in chunks: chunk c's input copy runs on a copy-in stream, its layers on
//              the compute stream once that copy is done, its output (copied to a per-batch output buffer at the end
//              of its compute) goes back on a copy-out stream. Chunk c+1's copy in and chunk c-1's copy out overlap
//              chunk c's compute. Host buffers that are not pinned go through two pinned staging slots per direction,
//              filled and drained by the host (OpenMP threads) while the device works on other chunks.
// With cuda_graph, the layers of each batch or chunk size (and input place) are captured once into a CUDA graph
// after one eager pass and replayed from then on; the copy engines' copies stay outside the graph. --copies kernel
// (resident, pinned host buffers): the input and output are moved by two kernels (cuda::bus_copy) that run_layers
// launches around the layers, inside their graph with cuda_graph, so that a pass is one graph launch.
// --input-precision u8 (resident, overlapped): the bytes are copied as they are (a quarter of FP32's) and widened to
// FP32 by one kernel inside the first layer's time (and graph), into a buffer of their own.
// The plan (kernels/plan/plan.hpp) says what runs: which layers run inside another's kernel, each layer's workspace and
// implementation; a derived backend runs a layer of it (run_layer).
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/exec/backend.hpp"
#include "kernels/cuda/buffer.hpp"
#include "kernels/plan/plan.hpp"

namespace bs {

void require_cuda_device(const std::string& backend);

struct LayerWeights {
  const float* w = nullptr;  // (M, C/groups, KH, KW) or (O, I), on the device
  const float* b = nullptr;  // (M,) or (O,), or null
  cudaTextureObject_t tex = 0;
  uint64_t id = 0;  // cuda::next_weights_id() of resident weights; 0 for weights uploaded per layer run
};

class GpuPipelineBackend : public Backend {
 public:
  GpuPipelineBackend(BackendKind kind, const BackendOptions& o);
  ~GpuPipelineBackend() override;

  void load(const Model& m, std::shared_ptr<const Planner> planner) override;
  void forward(const float* in, int n, size_t n_layers, float* out, RunStats* stats) override;

 protected:
  // Runs layer i (and any layers fused into it) from src; returns where the output is (dst, or src for
  // in-place layers) and sets `cur` to the output shape.
  virtual const float* run_layer(size_t i, const float* src, int n, float* dst, Shape& cur, const LayerWeights& w) = 0;
  virtual void after_load() {}  // once the weights are known
  // The pass of n images (a batch, or a chunk) that the next layers run: cur_.
  void plan_batch(int n);
  bool fused_away(size_t i) const { return !cur_->steps[i].runs(); }  // runs inside an earlier layer's kernel
  size_t workspace_floats(size_t i, int n) const { return planner_->pass(n).steps[i].workspace_floats; }
  // After the last layer that runs (inside its timing): the output in the FP32 (N, C, H, W) the caller reads.
  // src: where the last layer left it; spare: an activation buffer that is not src. Default: src as it is.
  virtual const float* finish_output(const float* src, Shape, int, float*) { return src; }

  // Bytes per value of the input forward receives and copies: 4, 2 with a 16-bit --input-precision, 1 with u8 (whose
  // bytes run_layers widens to FP32 before the first layer sees them: derived backends see FP32 values).
  bool input16() const { return input_value_bytes(opts_.input_precision) == 2; }
  bool input8() const { return opts_.input_precision == InputPrecision::u8; }
  size_t in_elem_bytes() const { return input_value_bytes(opts_.input_precision); }
  bool per_layer() const { return opts_.transfers == Transfers::per_layer; }
  bool overlapped() const { return opts_.transfers == Transfers::overlapped; }
  bool kernel_copies() const { return opts_.copies == Copies::kernel; }

  const Model* model_ = nullptr;  // the model loaded, or quantized_ (--weights int8)
  Model quantized_;               // --weights int8: the loaded model with its weights quantised (kernels/model/quantize.hpp)
  const Pass* cur_ = nullptr;  // the pass in progress
  cudaStream_t stream_ = nullptr;
  float* ws_ptr_ = nullptr;  // workspace for the layer being run (v5's im2col)
  size_t ws_floats_ = 0;

 private:
  struct DevLayer {
    DeviceBuffer<float> w, b;
    cudaTextureObject_t tex = 0;
    uint64_t id = 0;
  };
  void forward_resident(const float* in, int n, size_t n_layers, float* out);
  void forward_overlapped(const float* in, int n, size_t n_layers, float* out);
  void forward_per_layer(const float* in, int n, size_t n_layers, float* out);
  // Sizes the resident buffers for batches (or chunks) of at most n and an input of in_images images, the workspace
  // for every size in `runs` (default: n); poisons them if asked.
  void size_buffers(int n, size_t n_layers, int in_images, const std::vector<int>& runs = {});
  // Layers [0, n_layers) of n images from the device input src on stream_, with events from events_[ev]; the last
  // result is copied to copy_to when given (and that is returned). Sets cur to the output shape. With host_in_ set
  // (--copies kernel), a copy kernel first fills src from it; with host_out_ set, one writes the result there last.
  const float* run_layers(const float* src, int n, size_t n_layers, Shape& cur, size_t ev, float* copy_to);
  // run_layers, through a captured CUDA graph when cuda_graph is set.
  const float* run_layers_graphed(const float* src, int n, size_t n_layers, Shape& cur, size_t ev, float* copy_to);
  void record(size_t ev);
  void ensure_events(size_t n_layers);
  void poison(size_t in_floats, size_t act_floats);
  void check_guards(size_t in_floats, size_t act_floats);

  std::vector<DevLayer> dev_;
  DeviceBuffer<float> in_, act_[2];  // resident: (N, C, H, W) input; ping-pong activations
  DeviceBuffer<float> in_wide_;      // --input-precision u8: the batch's (or chunk's) bytes widened to FP32
  DeviceBuffer<float> out_;          // overlapped: the whole batch's output, each chunk's copied in at its end
  size_t in_floats_ = 0, act_floats_ = 0, wide_floats_ = 0;  // what this forward uses of in_, act_, in_wide_ (guards follow)
  // overlapped
  cudaStream_t copy_in_ = nullptr, copy_out_ = nullptr;
  std::vector<cudaEvent_t> chunk_events_;  // per chunk: input copied, compute done, output copied
  float* stage_[2][2] = {{nullptr, nullptr}, {nullptr, nullptr}};  // [in|out][slot]: pinned staging, stage_floats_[dir] each
  size_t stage_floats_[2] = {0, 0};
  // --copies kernel: the caller's pinned input and output during a resident forward (null otherwise), and the last pair
  // found pinned (host_pinned asks the runtime, once per pair of buffers).
  const void* host_in_ = nullptr;
  float* host_out_ = nullptr;
  std::pair<const void*, const void*> pinned_pair_{nullptr, nullptr};
  // cuda_graph: instantiated graphs per (src, n, layers, timed, first event, copy_to, host_in_, host_out_), with the
  // result and shape
  struct Graph {
    cudaGraphExec_t exec = nullptr;
    const float* result = nullptr;
    Shape cur;
    std::vector<size_t> events;  // indices into events_ the graph records
  };
  std::map<std::tuple<const float*, int, size_t, bool, size_t, float*, const void*, float*>, Graph> graphs_;
  uint64_t graphs_epoch_ = 0;  // device_alloc_epoch() when the graphs were captured
  bool capturing_ = false;
  void drop_graphs();
  DeviceBuffer<float> workspace_;
  std::vector<cudaEvent_t> events_;  // start and end of each layer
  bool timed_ = false;               // record them in this forward
  // The stream's gate in a timed resident forward (gpu_pipeline.cpp, StreamGate): 0 held, 1 open. A member, so that
  // it outlives the host function that waits on it.
  std::atomic<int> gate_{1};
  uint64_t gate_epoch_ = ~uint64_t{0};  // device_alloc_epoch() after the last resident pass: gate only if unchanged
  std::vector<size_t> recorded_;     // the events recorded in this forward (layers fused away have none)
};

}  // namespace bs
