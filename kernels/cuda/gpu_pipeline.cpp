#include "kernels/cuda/gpu_pipeline.hpp"

#include <algorithm>
#include <cstring>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/const_bank.hpp"
#include "weights_tools/error.hpp"

namespace bs {
namespace {

constexpr size_t kGuardFloats = 4096;
constexpr unsigned char kGuardByte = 0x7f;

cudaTextureObject_t make_texture(const float* dev, size_t count) {
  cudaResourceDesc res{};
  res.resType = cudaResourceTypeLinear;
  res.res.linear.devPtr = const_cast<float*>(dev);
  res.res.linear.desc = cudaCreateChannelDesc<float>();
  res.res.linear.sizeInBytes = count * sizeof(float);
  cudaTextureDesc td{};
  td.readMode = cudaReadModeElementType;
  cudaTextureObject_t t = 0;
  CUDA_CHECK(cudaCreateTextureObject(&t, &res, &td, nullptr));
  return t;
}

// The host weights of a layer, or null.
void host_weights(const Layer& l, const std::vector<float>*& w, const std::vector<float>*& b) {
  w = b = nullptr;
  if (auto* c = std::get_if<ConvParams>(&l.op)) { w = &c->weight; b = &c->bias; }
  if (auto* f = std::get_if<FcParams>(&l.op)) { w = &f->weight; b = &f->bias; }
}

}  // namespace

void require_cuda_device(const std::string& backend) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0)
    fail("--backend " + backend, std::string("no CUDA GPU is available (") +
                                     (e != cudaSuccess ? cudaGetErrorString(e) : "no devices") + ")");
}

std::vector<Shape> stored_input_shapes(const Model& m) {
  std::vector<Shape> out(m.layers.size(), m.input);
  Shape stored = m.input;
  for (size_t i = 0; i < m.layers.size(); ++i) {
    out[i] = stored;
    if (m.layers[i].kind() != LayerKind::flatten) stored = m.layers[i].out;
  }
  return out;
}

GpuPipelineBackend::GpuPipelineBackend(const BackendOptions& o, const std::string& name) : opts_(o), name_(name) {
  require_cuda_device(name);
  CUDA_CHECK(cudaStreamCreate(&stream_));
}

GpuPipelineBackend::~GpuPipelineBackend() {
  for (auto& d : dev_)
    if (d.tex) cudaDestroyTextureObject(d.tex);
  for (auto& e : events_) cudaEventDestroy(e);
  if (stream_) cudaStreamDestroy(stream_);
}

void GpuPipelineBackend::load(const Model& m) {
  model_ = &m;
  for (auto& d : dev_)
    if (d.tex) cudaDestroyTextureObject(d.tex);
  dev_.clear();
  dev_.resize(m.layers.size());
  for (const Layer& l : m.layers) {
    Support s = supports(l);
    if (!s.ok) fail("layer '" + l.name + "'", "backend " + name_ + " does not support it: " + s.reason);
  }
  after_load();
  if (opts_.per_layer_transfers) return;  // weights travel with each layer
  for (size_t i = 0; i < m.layers.size(); ++i) {
    const std::vector<float>* w;
    const std::vector<float>* b;
    host_weights(m.layers[i], w, b);
    if (!w) continue;
    DevLayer& d = dev_[i];
    d.w.upload(w->data(), w->size(), stream_);
    if (!b->empty()) d.b.upload(b->data(), b->size(), stream_);
    if (wants_texture(i)) d.tex = make_texture(d.w.get(), w->size());
    d.id = cuda::next_weights_id();
  }
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

size_t GpuPipelineBackend::device_bytes_needed(int n) const {
  if (!model_) return 0;
  const Model& m = *model_;
  size_t weights = 0, max_act = static_cast<size_t>(m.input.size()), ws = 0, per_layer = 0;
  for (size_t i = 0; i < m.layers.size(); ++i) {
    const Layer& l = m.layers[i];
    weights += static_cast<size_t>(l.weight_count());
    max_act = std::max<size_t>(max_act, l.out.size());
    ws = std::max(ws, workspace_floats(i, n));
    per_layer = std::max(per_layer, static_cast<size_t>(l.weight_count()) + static_cast<size_t>(l.in.size() + l.out.size()) * n +
                                        workspace_floats(i, n));
  }
  if (opts_.per_layer_transfers) return sizeof(float) * per_layer;
  return sizeof(float) * (weights + resident_extra_floats(n) + static_cast<size_t>(m.input.size()) * n + 2 * max_act * n + ws);
}

size_t GpuPipelineBackend::device_bytes_free() const {
  size_t free = 0, total = 0;
  CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return free;
}

void GpuPipelineBackend::ensure_events(size_t n_layers) {
  while (events_.size() < 2 * n_layers) {
    cudaEvent_t e;
    CUDA_CHECK(cudaEventCreate(&e));
    events_.push_back(e);
  }
}

void GpuPipelineBackend::forward(const float* in, int n, size_t n_layers, float* out, RunStats* stats) {
  if (!model_) fail(name_, "forward() before load()");
  n_layers = std::min(n_layers, model_->layers.size());
  plan_batch(n);
  timed_ = stats != nullptr;  // no per-layer events unless someone reads them
  ensure_events(n_layers);
  if (opts_.per_layer_transfers) forward_per_layer(in, n, n_layers, out);
  else forward_resident(in, n, n_layers, out);
  for (size_t i = 0; stats && i < n_layers; ++i) {
    float ms = 0.0f;
    if (!fused_away(i)) CUDA_CHECK(cudaEventElapsedTime(&ms, events_[2 * i], events_[2 * i + 1]));
    stats->add(i, ms * 1e-3);
  }
}

void GpuPipelineBackend::forward_resident(const float* in, int n, size_t n_layers, float* out) {
  const Model& m = *model_;
  size_t max_act = 0, ws = 0;
  for (size_t i = 0; i < m.layers.size(); ++i) max_act = std::max<size_t>(max_act, m.layers[i].out.size());
  for (size_t i = 0; i < n_layers; ++i) ws = std::max(ws, workspace_floats(i, n));
  const size_t in_floats = static_cast<size_t>(m.input.size()) * n, act_floats = max_act * n;
  const size_t guard = opts_.guard_check ? kGuardFloats : 0;
  in_.resize(in_floats + guard);
  act_[0].resize(act_floats + guard);
  act_[1].resize(act_floats + guard);
  workspace_.resize(ws);
  ws_ptr_ = workspace_.get();
  ws_floats_ = workspace_.size();
  if (opts_.guard_check) poison(in_floats, act_floats);

  CUDA_CHECK(cudaMemcpyAsync(in_.get(), in, in_floats * sizeof(float), cudaMemcpyHostToDevice, stream_));
  const float* src = in_.get();
  int which = 0;  // act_[which] is never src
  Shape cur = m.input;
  size_t last_run = 0;  // the last layer that runs its own kernel
  for (size_t i = 0; i < n_layers; ++i)
    if (!fused_away(i)) last_run = i;
  for (size_t i = 0; i < n_layers; ++i) {
    if (fused_away(i)) continue;
    if (tracer_) tracer_->layer_begin(static_cast<int>(i));
    if (timed_) CUDA_CHECK(cudaEventRecord(events_[2 * i], stream_));
    float* dst = act_[which].get();
    const DevLayer& d = dev_[i];
    const float* next = run_layer(i, src, n, dst, cur, LayerWeights{d.w.get(), d.b.size() ? d.b.get() : nullptr, d.tex, d.id});
    if (next == dst) which ^= 1;
    src = next;
    if (i == last_run) {
      const float* fin = finish_output(src, cur, n, act_[which].get());
      if (fin == act_[which].get()) which ^= 1;
      src = fin;
    }
    if (timed_) CUDA_CHECK(cudaEventRecord(events_[2 * i + 1], stream_));
    if (tracer_) tracer_->layer_end(static_cast<int>(i));
  }
  CUDA_CHECK(cudaMemcpyAsync(out, src, static_cast<size_t>(cur.size()) * n * sizeof(float), cudaMemcpyDeviceToHost, stream_));
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  if (opts_.guard_check) check_guards(in_floats, act_floats);
}

void GpuPipelineBackend::forward_per_layer(const float* in, int n, size_t n_layers, float* out) {
  const Model& m = *model_;
  const float* host_src = in;  // (N, C, H, W) on the host
  float* owned = nullptr;      // the host intermediate we allocated, freed after the next layer read it
  std::vector<float> pageable[2];
  int flip = 0;
  Shape cur = m.input;
  size_t last_run = 0;  // the last layer that runs its own kernel (layers fused into it may follow)
  for (size_t i = 0; i < n_layers; ++i)
    if (!fused_away(i)) last_run = i;
  for (size_t i = 0; i < n_layers; ++i) {
    if (fused_away(i)) continue;
    const Layer& l = m.layers[i];
    if (tracer_) tracer_->layer_begin(static_cast<int>(i));
    if (timed_) CUDA_CHECK(cudaEventRecord(events_[2 * i], stream_));
    const size_t in_floats = static_cast<size_t>(cur.size()) * n;
    size_t out_floats = static_cast<size_t>(l.out.size()) * n;
    float *d_in = nullptr, *d_out = nullptr, *d_w = nullptr, *d_b = nullptr, *d_ws = nullptr;
    CUDA_CHECK(cudaMalloc(&d_in, in_floats * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_out, std::max<size_t>(out_floats, 1) * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_in, host_src, in_floats * sizeof(float), cudaMemcpyHostToDevice));
    const std::vector<float>* w;
    const std::vector<float>* b;
    host_weights(l, w, b);
    cudaTextureObject_t tex = 0;
    if (w) {
      CUDA_CHECK(cudaMalloc(&d_w, w->size() * sizeof(float)));
      CUDA_CHECK(cudaMemcpy(d_w, w->data(), w->size() * sizeof(float), cudaMemcpyHostToDevice));
      if (!b->empty()) {
        CUDA_CHECK(cudaMalloc(&d_b, b->size() * sizeof(float)));
        CUDA_CHECK(cudaMemcpy(d_b, b->data(), b->size() * sizeof(float), cudaMemcpyHostToDevice));
      }
      if (wants_texture(i)) tex = make_texture(d_w, w->size());
    }
    ws_floats_ = workspace_floats(i, n);
    if (ws_floats_) CUDA_CHECK(cudaMalloc(&d_ws, ws_floats_ * sizeof(float)));
    ws_ptr_ = d_ws;
    const float* res = run_layer(i, d_in, n, d_out, cur, LayerWeights{d_w, d_b, tex});
    out_floats = static_cast<size_t>(cur.size()) * n;
    const bool last = i == last_run;
    float* host_dst;
    if (last) host_dst = out;
    else if (opts_.pinned_host) CUDA_CHECK(cudaMallocHost(&host_dst, out_floats * sizeof(float)));
    else {
      pageable[flip].resize(out_floats);
      host_dst = pageable[flip].data();
      flip ^= 1;
    }
    CUDA_CHECK(cudaMemcpy(host_dst, res, out_floats * sizeof(float), cudaMemcpyDeviceToHost));
    if (tex) CUDA_CHECK(cudaDestroyTextureObject(tex));
    for (float* p : {d_in, d_out, d_w, d_b, d_ws})
      if (p) CUDA_CHECK(cudaFree(p));
    ws_ptr_ = nullptr;
    ws_floats_ = 0;
    if (owned) CUDA_CHECK(cudaFreeHost(owned));
    owned = (!last && opts_.pinned_host) ? host_dst : nullptr;
    host_src = host_dst;
    if (timed_) CUDA_CHECK(cudaEventRecord(events_[2 * i + 1], stream_));
    if (tracer_) tracer_->layer_end(static_cast<int>(i));
  }
  if (n_layers == 0) std::memcpy(out, in, sizeof(float) * static_cast<size_t>(m.input.size()) * n);
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void GpuPipelineBackend::poison(size_t in_floats, size_t act_floats) {
  CUDA_CHECK(cudaMemsetAsync(in_.get() + in_floats, kGuardByte, kGuardFloats * sizeof(float), stream_));
  for (auto& a : act_) {
    CUDA_CHECK(cudaMemsetAsync(a.get(), 0xff, act_floats * sizeof(float), stream_));  // NaN everywhere
    CUDA_CHECK(cudaMemsetAsync(a.get() + act_floats, kGuardByte, kGuardFloats * sizeof(float), stream_));
  }
}

void GpuPipelineBackend::check_guards(size_t in_floats, size_t act_floats) {
  std::vector<unsigned char> host(kGuardFloats * sizeof(float));
  const std::pair<const float*, const char*> zones[] = {
      {in_.get() + in_floats, "input"}, {act_[0].get() + act_floats, "activation A"}, {act_[1].get() + act_floats, "activation B"}};
  for (const auto& [ptr, what] : zones) {
    CUDA_CHECK(cudaMemcpy(host.data(), ptr, host.size(), cudaMemcpyDeviceToHost));
    for (unsigned char c : host)
      if (c != kGuardByte) fail(name_, std::string("a kernel wrote past the end of the ") + what + " buffer");
  }
}

}  // namespace bs
