#include "kernels/cuda/backends/gpu_pipeline.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>
#include <omp.h>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/engine/timeline.hpp"
#include "kernels/model/quantize.hpp"
#include "kernels/cuda/ops/const_bank.hpp"
#include "kernels/cuda/ops/ops.hpp"
#include "kernels/exec/device_info.hpp"
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

// Whether the runtime knows host memory as pinned (page-locked, allocated or registered through CUDA).
bool host_pinned(const void* p) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return a.type == cudaMemoryTypeHost;
}

// memcpy, over up to 12 OpenMP threads (OMP_NUM_THREADS limits them) for large copies, in 4 MB pieces handed out as
// threads come free, so that a thread the system preempts delays one piece rather than a whole slice of the copy.
// Measured on the H100 machine (16 cores; experiments/end-to-end.md, "Pageable staging"): AlexNet FP32 batch 1024,
// overlapped, pageable: equal slices on 8 threads 37.6-39.3 ms, on 16 threads 45.9-47.8 (the slowest slice waits for
// the driver's and the profiler's threads); pieces on 8 / 12 / 16 threads 37.4-37.5 / 36.3-36.7 / 36.6-37.5.
void host_copy(void* dst, const void* src, size_t bytes) {
  constexpr size_t kPiece = 4u << 20;
  const long long pieces = static_cast<long long>((bytes + kPiece - 1) / kPiece);
  const int threads = bytes >= (8u << 20) ? std::clamp(omp_get_max_threads(), 1, 12) : 1;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (long long p = 0; p < pieces; ++p) {
    const size_t at = static_cast<size_t>(p) * kPiece, len = std::min(bytes - at, kPiece);
    std::memcpy(static_cast<char*>(dst) + at, static_cast<const char*>(src) + at, len);
  }
}

}  // namespace

void require_cuda_device(const std::string& backend) {
  if (const std::string why = gpu_absence(); !why.empty()) fail("--backend " + backend, "needs an NVIDIA GPU, and " + why);
}

GpuPipelineBackend::GpuPipelineBackend(BackendKind kind, const BackendOptions& o) : Backend(kind, o) {
  check_backend_options(kind, o);
  require_cuda_device(name());
  CUDA_CHECK(cudaStreamCreate(&stream_));
  if (overlapped()) {
    CUDA_CHECK(cudaStreamCreateWithFlags(&copy_in_, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&copy_out_, cudaStreamNonBlocking));
  }
}

GpuPipelineBackend::~GpuPipelineBackend() {
#ifdef BS_TIMELINE
  cudaDeviceSynchronize();
  cuda::timeline::dump_all();
#endif
  drop_graphs();
  for (auto& d : dev_)
    if (d.tex) cudaDestroyTextureObject(d.tex);
  for (auto& e : events_) cudaEventDestroy(e);
  for (auto& e : chunk_events_) cudaEventDestroy(e);
  for (auto& dir : stage_)
    for (float* p : dir)
      if (p) cudaFreeHost(p);
  for (cudaStream_t s : {copy_in_, copy_out_, stream_})
    if (s) cudaStreamDestroy(s);
}

void GpuPipelineBackend::drop_graphs() {
  for (auto& [key, g] : graphs_) cudaGraphExecDestroy(g.exec);
  graphs_.clear();
}

void GpuPipelineBackend::load(const Model& m, std::shared_ptr<const Planner> planner) {
  adopt_planner(m, std::move(planner));
  planner_->pass(1);  // refuses, naming the layer, what no implementation of these options can run
  model_ = &m;
  quantized_ = Model{};
  if (opts_.weights == WeightFormat::int8) {  // every later step (uploads, per-layer copies, preparation) reads these
    quantized_ = quantize_weights(m);
    model_ = &quantized_;
  }
  cur_ = nullptr;
  for (auto& d : dev_)
    if (d.tex) cudaDestroyTextureObject(d.tex);
  dev_.clear();
  dev_.resize(m.layers.size());
  after_load();
  if (per_layer()) return;  // weights travel with each layer
  for (size_t i = 0; i < m.layers.size(); ++i) {
    const std::vector<float>* w;
    const std::vector<float>* b;
    host_weights(model_->layers[i], w, b);
    if (!w) continue;
    DevLayer& d = dev_[i];
    d.w.upload(w->data(), w->size(), stream_);
    if (!b->empty()) d.b.upload(b->data(), b->size(), stream_);
    if (planner_->may_read_texture(i)) d.tex = make_texture(d.w.get(), w->size());
    d.id = cuda::next_weights_id();
  }
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void GpuPipelineBackend::plan_batch(int n) {
  cur_ = &planner_->pass(n);
  last_n_ = n;
}

void GpuPipelineBackend::ensure_events(size_t n_layers) {
  while (events_.size() < 2 * n_layers) {
    cudaEvent_t e;
    CUDA_CHECK(cudaEventCreate(&e));
    events_.push_back(e);
  }
}

void GpuPipelineBackend::forward(const float* in, int n, size_t n_layers, float* out, RunStats* stats) {
  if (!model_) fail(name(), "forward() before load()");
  n_layers = std::min(n_layers, model_->layers.size());
  timed_ = stats != nullptr;  // no per-layer events unless someone reads them
  host_in_ = nullptr;  // set by forward_resident with --copies kernel
  host_out_ = nullptr;
  recorded_.clear();
  size_t passes = 1;          // layer passes whose events hold times: one, or one per chunk
  if (per_layer()) {
    plan_batch(n);
    ensure_events(n_layers);
    forward_per_layer(in, n, n_layers, out);
  } else if (overlapped() && n_layers > 0) {
    passes = planner_->chunks(n).size();
    ensure_events(n_layers * passes);
    forward_overlapped(in, n, n_layers, out);
  } else {
    plan_batch(n);
    ensure_events(n_layers);
    forward_resident(in, n, n_layers, out);
  }
  if (!stats) return;
  std::vector<char> was(events_.size(), 0);
  for (size_t e : recorded_) was[e] = 1;
  for (size_t i = 0; i < n_layers; ++i) {
    double s = 0;
    for (size_t p = 0; p < passes; ++p) {
      const size_t e = 2 * (p * n_layers + i);
      if (!was[e] || !was[e + 1]) continue;  // fused into another layer's kernel in this pass
      float ms = 0.0f;
      CUDA_CHECK(cudaEventElapsedTime(&ms, events_[e], events_[e + 1]));
      s += ms * 1e-3;
    }
    stats->add(i, s);
  }
}

void GpuPipelineBackend::size_buffers(int n, size_t n_layers, int in_images, const std::vector<int>& runs) {
  const Model& m = *model_;
  size_t max_act = 0, ws = 0;
  for (size_t i = 0; i < m.layers.size(); ++i) max_act = std::max<size_t>(max_act, m.layers[i].out.size());
  // Each size runs its own plan (a tuning table may give a smaller chunk a version with a larger workspace).
  for (int k : runs.empty() ? std::vector<int>{n} : runs)
    for (size_t i = 0; i < n_layers; ++i) ws = std::max(ws, workspace_floats(i, k));
  in_floats_ = static_cast<size_t>(m.input.size()) * in_images;
  act_floats_ = max_act * n;
  const size_t guard = opts_.guard_check ? kGuardFloats : 0;
  in_.resize(in_floats_ + guard);
  act_[0].resize(act_floats_ + guard);
  act_[1].resize(act_floats_ + guard);
  wide_floats_ = input8() ? static_cast<size_t>(m.input.size()) * n : 0;
  if (input8()) in_wide_.resize(wide_floats_ + guard);
  workspace_.resize(ws);
  ws_ptr_ = workspace_.get();
  ws_floats_ = workspace_.size();
  if (opts_.guard_check) poison(in_floats_, act_floats_);
}

void GpuPipelineBackend::record(size_t ev) {
  recorded_.push_back(ev);
  if (capturing_) CUDA_CHECK(cudaEventRecordWithFlags(events_[ev], stream_, cudaEventRecordExternal));
  else CUDA_CHECK(cudaEventRecord(events_[ev], stream_));
}

const float* GpuPipelineBackend::run_layers(const float* src, int n, size_t n_layers, Shape& cur, size_t ev, float* copy_to) {
  const Model& m = *model_;
  int which = 0;  // act_[which] is never src
  cur = m.input;
  if (host_in_)  // outside every layer: the profiler books it as the input's copy
    cuda::bus_copy(const_cast<float*>(src), host_in_, static_cast<size_t>(m.input.size()) * n * in_elem_bytes(), true, stream_);
  size_t last_run = 0;  // the last layer that runs its own kernel
  for (size_t i = 0; i < n_layers; ++i)
    if (!fused_away(i)) last_run = i;
  for (size_t i = 0; i < n_layers; ++i) {
    if (fused_away(i)) continue;
    if (tracer_) tracer_->layer_begin(static_cast<int>(i));
    if (timed_) record(ev + 2 * i);
    if (i == 0 && input8()) {  // raw 8-bit values widened to FP32, inside the first layer's time
      cuda::u8_to_float(reinterpret_cast<const unsigned char*>(src), static_cast<long long>(m.input.size()) * n, in_wide_.get(), stream_);
      src = in_wide_.get();
    }
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
    if (timed_) record(ev + 2 * i + 1);
    if (tracer_) tracer_->layer_end(static_cast<int>(i));
  }
  if (host_out_) cuda::bus_copy(host_out_, src, static_cast<size_t>(cur.size()) * n * sizeof(float), false, stream_);
  if (!copy_to) return src;
  CUDA_CHECK(cudaMemcpyAsync(copy_to, src, static_cast<size_t>(cur.size()) * n * sizeof(float), cudaMemcpyDeviceToDevice, stream_));
  return copy_to;
}

const float* GpuPipelineBackend::run_layers_graphed(const float* src, int n, size_t n_layers, Shape& cur, size_t ev, float* copy_to) {
  if (!opts_.cuda_graph) return run_layers(src, n, n_layers, cur, ev, copy_to);
  if (device_alloc_epoch() != graphs_epoch_) drop_graphs();  // a buffer some graph reads may have moved
  const auto key = std::make_tuple(src, n, n_layers, timed_, ev, copy_to, host_in_, host_out_);
  if (auto it = graphs_.find(key); it != graphs_.end()) {
    CUDA_CHECK(cudaGraphLaunch(it->second.exec, stream_));
    recorded_.insert(recorded_.end(), it->second.events.begin(), it->second.events.end());
    cur = it->second.cur;
    return it->second.result;
  }
  // First time: an eager pass does the first-use work (cuDNN's algorithm search, weight preparation, workspace growth,
  // which synchronise or allocate and cannot be captured) and gives this forward's output; then the same calls are
  // captured (not run) and instantiated for the next forwards.
  const float* result = run_layers(src, n, n_layers, cur, ev, copy_to);
  if (device_alloc_epoch() != graphs_epoch_) {
    drop_graphs();
    graphs_epoch_ = device_alloc_epoch();
  }
  const size_t recorded_before = recorded_.size();
  CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeRelaxed));
  capturing_ = true;
  Shape captured_cur;
  const float* captured = nullptr;
  std::vector<size_t> g_events;
  try {
    captured = run_layers(src, n, n_layers, captured_cur, ev, copy_to);
  } catch (...) {
    capturing_ = false;
    cudaGraph_t broken = nullptr;
    cudaStreamEndCapture(stream_, &broken);
    if (broken) cudaGraphDestroy(broken);
    cudaGetLastError();
    throw;
  }
  capturing_ = false;
  g_events.assign(recorded_.begin() + recorded_before, recorded_.end());  // recorded by the graph when it runs
  recorded_.resize(recorded_before);                                    // the eager pass recorded them this time
  cudaGraph_t graph = nullptr;
  CUDA_CHECK(cudaStreamEndCapture(stream_, &graph));
  if (device_alloc_epoch() != graphs_epoch_) fail(name(), "--cuda-graph: a layer allocated device memory while being captured (internal)");
  if (captured != result) fail(name(), "--cuda-graph: the captured pass leaves its output elsewhere than the eager pass (internal)");
  Graph g;
  g.events = std::move(g_events);
  g.result = captured;
  g.cur = captured_cur;
  const cudaError_t e = cudaGraphInstantiate(&g.exec, graph, 0);
  cudaGraphDestroy(graph);
  if (e != cudaSuccess) fail(name(), std::string("--cuda-graph: cannot instantiate the captured forward pass: ") + cudaGetErrorString(e));
  graphs_.emplace(key, g);
  return result;
}

namespace {
// Layer times are events recorded around each layer's launches. Where the stream is idle when the first layer's start
// event is recorded (a copy from pageable memory returns once it is done), the host's own time until that layer's
// kernel reaches the GPU would count as the layer's: up to about 40 us of ECE 408's conv1 on an H200, varying from run to run
// (experiments/ece408-gpu.md, "The first layer's Op Time"). A gate holds the stream behind a host function until every
// layer is enqueued; the host function only spins on the flag (no CUDA calls, as the runtime requires). A pass that
// allocates (cudaFree synchronises) or uploads from pageable memory waits for the stream from the host, so behind a
// gate it would wait for itself: forward_resident gates only where the pass before allocated nothing, and the host
// function lets go by itself after kGateMaxWait whatever happens. The stream's release from the host function took
// 4-7 us of GPU time, which the first layer's events counted (ECE 408's conv1 on an H200: 0.0715-0.0723 ms, 0.0670 with
// an empty kernel between the gate and the layer; conv2 unchanged; experiments/ece408-gpu.md, "The gate's release"): an
// empty kernel now takes it.
constexpr auto kGateMaxWait = std::chrono::milliseconds(20);
class StreamGate {
 public:
  StreamGate(std::atomic<int>& flag, cudaStream_t s, bool on) : flag_(flag), held_(on) {
    if (!held_) return;
    flag_.store(0, std::memory_order_relaxed);
    CUDA_CHECK(cudaLaunchHostFunc(s, wait, &flag_));
    cuda::empty_launch(s);
  }
  void open() {
    if (held_) flag_.store(1, std::memory_order_release);
    held_ = false;
  }
  ~StreamGate() { open(); }  // a failed launch must not leave the stream held
  StreamGate(const StreamGate&) = delete;
  StreamGate& operator=(const StreamGate&) = delete;

 private:
  static void CUDART_CB wait(void* p) {
    const auto* f = static_cast<const std::atomic<int>*>(p);
    const auto until = std::chrono::steady_clock::now() + kGateMaxWait;
    while (f->load(std::memory_order_acquire) == 0 && std::chrono::steady_clock::now() < until) std::this_thread::yield();
  }
  std::atomic<int>& flag_;
  bool held_;
};
}  // namespace

void GpuPipelineBackend::forward_resident(const float* in, int n, size_t n_layers, float* out) {
  size_buffers(n, n_layers, n);
  const bool by_kernels = kernel_copies() && n_layers > 0;
  if (by_kernels) {
    if (pinned_pair_ != std::make_pair(static_cast<const void*>(in), static_cast<const void*>(out))) {
      if (!host_pinned(in) || !host_pinned(out))
        fail(name(), "--copies kernel needs the input and the output in pinned host memory (cudaMallocHost or "
                     "cudaHostRegister); one of them is pageable");
      pinned_pair_ = {in, out};
    }
    host_in_ = in;
    host_out_ = out;
  } else {
    CUDA_CHECK(cudaMemcpyAsync(in_.get(), in, in_floats_ * in_elem_bytes(), cudaMemcpyHostToDevice, stream_));
  }
  Shape cur;
  StreamGate gate(gate_, stream_, timed_ && n_layers > 0 && gate_epoch_ == device_alloc_epoch().load());
  const float* src = n_layers ? run_layers_graphed(in_.get(), n, n_layers, cur, 0, nullptr) : in_.get();
  gate.open();
  host_in_ = nullptr;
  host_out_ = nullptr;
  if (!n_layers) cur = model_->input;
  if (!by_kernels)
    CUDA_CHECK(cudaMemcpyAsync(out, src, static_cast<size_t>(cur.size()) * n * sizeof(float), cudaMemcpyDeviceToHost, stream_));
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  gate_epoch_ = device_alloc_epoch().load();
  if (opts_.guard_check) check_guards(in_floats_, act_floats_);
}

void GpuPipelineBackend::forward_overlapped(const float* in, int n, size_t n_layers, float* out) {
  const Model& m = *model_;
  const std::vector<int> count = planner_->chunks(n);
  const int chunks = static_cast<int>(count.size()), chunk = *std::max_element(count.begin(), count.end());
  std::vector<size_t> first(chunks, 0);  // each chunk's first image
  for (int c = 1; c < chunks; ++c) first[c] = first[c - 1] + count[c - 1];
  const size_t in_per = m.input.size(), out_per = m.layers[n_layers - 1].out.size();
  size_buffers(chunk, n_layers, n, count);
  out_.resize(out_per * n);
  const bool in_pinned = host_pinned(in), out_pinned = host_pinned(out);
  const size_t stage_need[2] = {in_pinned ? 0 : in_per * chunk, out_pinned ? 0 : out_per * chunk};
  for (int dir = 0; dir < 2; ++dir)
    if (stage_need[dir] > stage_floats_[dir]) {
      for (float*& p : stage_[dir]) {
        if (p) CUDA_CHECK(cudaFreeHost(p));
        p = nullptr;
        CUDA_CHECK(cudaMallocHost(&p, stage_need[dir] * sizeof(float)));
      }
      stage_floats_[dir] = stage_need[dir];
    }
  while (chunk_events_.size() < 3 * static_cast<size_t>(chunks)) {
    cudaEvent_t e;
    CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    chunk_events_.push_back(e);
  }
  auto copied_in = [&](int c) { return chunk_events_[3 * c]; };
  auto computed = [&](int c) { return chunk_events_[3 * c + 1]; };
  auto copied_out = [&](int c) { return chunk_events_[3 * c + 2]; };
  // Pageable output: chunk c's output waits in staging slot c % 2 until the host moves it to the caller's buffer.
  auto drain = [&](int c) {
    CUDA_CHECK(cudaEventSynchronize(copied_out(c)));
    host_copy(out + first[c] * out_per, stage_[1][c % 2], out_per * count[c] * sizeof(float));
  };
  for (int c = 0; c < chunks; ++c) {
    const size_t at = first[c];
    const int k = count[c];
    float* dev_in = in_.get() + at * in_per;  // the chunk's values from there on (16-bit ones fill half of it)
    const size_t in_bytes = in_per * k * in_elem_bytes(), out_bytes = out_per * k * sizeof(float);
    const char* host_in = reinterpret_cast<const char*>(in) + at * in_per * in_elem_bytes();
    if (in_pinned) {
      CUDA_CHECK(cudaMemcpyAsync(dev_in, host_in, in_bytes, cudaMemcpyHostToDevice, copy_in_));
    } else {
      if (c >= 2) CUDA_CHECK(cudaEventSynchronize(copied_in(c - 2)));  // the slot's last copy has left it
      host_copy(stage_[0][c % 2], host_in, in_bytes);
      CUDA_CHECK(cudaMemcpyAsync(dev_in, stage_[0][c % 2], in_bytes, cudaMemcpyHostToDevice, copy_in_));
    }
    CUDA_CHECK(cudaEventRecord(copied_in(c), copy_in_));
    CUDA_CHECK(cudaStreamWaitEvent(stream_, copied_in(c), 0));
    plan_batch(k);
    Shape cur;
    run_layers_graphed(dev_in, k, n_layers, cur, 2 * n_layers * c, out_.get() + at * out_per);
    CUDA_CHECK(cudaEventRecord(computed(c), stream_));
    CUDA_CHECK(cudaStreamWaitEvent(copy_out_, computed(c), 0));
    if (out_pinned) {
      CUDA_CHECK(cudaMemcpyAsync(out + at * out_per, out_.get() + at * out_per, out_bytes, cudaMemcpyDeviceToHost, copy_out_));
    } else {
      if (c >= 2) drain(c - 2);
      CUDA_CHECK(cudaMemcpyAsync(stage_[1][c % 2], out_.get() + at * out_per, out_bytes, cudaMemcpyDeviceToHost, copy_out_));
    }
    CUDA_CHECK(cudaEventRecord(copied_out(c), copy_out_));
  }
  last_n_ = chunk;  // describe() names what the largest chunks ran
  if (!out_pinned)
    for (int c = std::max(0, chunks - 2); c < chunks; ++c) drain(c);
  CUDA_CHECK(cudaStreamSynchronize(copy_out_));
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  if (opts_.guard_check) check_guards(in_floats_, act_floats_);
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
      if (planner_->may_read_texture(i)) tex = make_texture(d_w, w->size());
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
  if (input8()) {
    CUDA_CHECK(cudaMemsetAsync(in_wide_.get(), 0xff, wide_floats_ * sizeof(float), stream_));  // NaN until widened
    CUDA_CHECK(cudaMemsetAsync(in_wide_.get() + wide_floats_, kGuardByte, kGuardFloats * sizeof(float), stream_));
  }
  for (auto& a : act_) {
    CUDA_CHECK(cudaMemsetAsync(a.get(), 0xff, act_floats * sizeof(float), stream_));  // NaN everywhere
    CUDA_CHECK(cudaMemsetAsync(a.get() + act_floats, kGuardByte, kGuardFloats * sizeof(float), stream_));
  }
}

void GpuPipelineBackend::check_guards(size_t in_floats, size_t act_floats) {
  std::vector<unsigned char> host(kGuardFloats * sizeof(float));
  std::vector<std::pair<const float*, const char*>> zones = {
      {in_.get() + in_floats, "input"}, {act_[0].get() + act_floats, "activation A"}, {act_[1].get() + act_floats, "activation B"}};
  if (input8()) zones.push_back({in_wide_.get() + wide_floats_, "widened u8 input"});
  for (const auto& [ptr, what] : zones) {
    CUDA_CHECK(cudaMemcpy(host.data(), ptr, host.size(), cudaMemcpyDeviceToHost));
    for (unsigned char c : host)
      if (c != kGuardByte) fail(name(), std::string("a kernel wrote past the end of the ") + what + " buffer");
  }
}

}  // namespace bs
