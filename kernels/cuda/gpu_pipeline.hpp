// What the two GPU backends (cuda, cudnn) share: weights on the device, the forward pass in one stream with
// CUDA-event timing per layer, tracer calls around layers, and the two transfer structures:
//   resident   weights uploaded once at load; activations stay on the device (ping-pong buffers); only
//              the input goes in (cudaMemcpyAsync) and the output comes back.
//   per-layer  the study's structure: around every layer cudaMalloc the input, output and weights,
//              cudaMemcpy them in, run, cudaMemcpy the output back to the host, cudaFree everything.
// A derived backend says which layers it runs (supports), how (run_layer), and names them (describe).
#pragma once
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "kernels/backend.hpp"
#include "kernels/cuda/buffer.hpp"

namespace bs {

void require_cuda_device(const std::string& backend);

// Per layer, the shape its input is stored in on the 16-bit NHWC paths: the layer's own input shape, except after a
// flatten, which moves nothing (the next layer reads the NHWC tensor before it).
std::vector<Shape> stored_input_shapes(const Model& m);

struct LayerWeights {
  const float* w = nullptr;  // (M, C/groups, KH, KW) or (O, I), on the device
  const float* b = nullptr;  // (M,) or (O,), or null
  cudaTextureObject_t tex = 0;
  uint64_t id = 0;  // cuda::next_weights_id() of resident weights; 0 for weights uploaded per layer run
};

class GpuPipelineBackend : public Backend {
 public:
  GpuPipelineBackend(const BackendOptions& o, const std::string& name);
  ~GpuPipelineBackend() override;

  void load(const Model& m) override;
  void forward(const float* in, int n, size_t n_layers, float* out, RunStats* stats) override;
  size_t device_bytes_needed(int n) const override;
  size_t device_bytes_free() const override;

 protected:
  // Runs layer i (and any layers fused into it) from src; returns where the output is (dst, or src for
  // in-place layers) and sets `cur` to the output shape.
  virtual const float* run_layer(size_t i, const float* src, int n, float* dst, Shape& cur, const LayerWeights& w) = 0;
  virtual void after_load() {}                                   // plans, once weights are known
  virtual void plan_batch(int) {}                                // at the start of each forward: its batch size
  virtual size_t resident_extra_floats(int) const { return 0; }  // device floats kept beside the weights (prepared copies)
  virtual bool fused_away(size_t) const { return false; }        // runs inside an earlier layer's kernel
  virtual bool wants_texture(size_t) const { return false; }     // layer reads weights through a texture
  virtual size_t workspace_floats(size_t, int) const { return 0; }
  // After the last layer that runs (inside its timing): the output in the FP32 (N, C, H, W) the caller reads.
  // src: where the last layer left it; spare: an activation buffer that is not src. Default: src as it is.
  virtual const float* finish_output(const float* src, Shape, int, float*) { return src; }

  const Model* model_ = nullptr;
  BackendOptions opts_;
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
  void forward_per_layer(const float* in, int n, size_t n_layers, float* out);
  void ensure_events(size_t n_layers);
  void poison(size_t in_floats, size_t act_floats);
  void check_guards(size_t in_floats, size_t act_floats);

  std::string name_;
  std::vector<DevLayer> dev_;
  DeviceBuffer<float> in_, act_[2];  // resident: (N, C, H, W) input; ping-pong activations
  DeviceBuffer<float> workspace_;
  std::vector<cudaEvent_t> events_;  // start and end of each layer
  bool timed_ = false;               // record them in this forward
};

}  // namespace bs
