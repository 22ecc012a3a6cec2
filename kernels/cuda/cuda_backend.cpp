// The cuda backend: this project's kernels in a device-resident pipeline. Weights are uploaded once at
// load; activations stay on the device between layers (ping-pong buffers); only the input goes in and the
// output comes back. One stream; every call and launch checked. Per-layer device time from CUDA events.
#include <cuda_runtime.h>

#include <cstring>

#include "kernels/backend.hpp"
#include "kernels/cuda/buffer.hpp"
#include "kernels/cuda/check.hpp"
#include "kernels/cuda/conv.hpp"
#include "kernels/cuda/ops.hpp"
#include "weights_tools/error.hpp"

namespace bs {

void require_cuda_device(const std::string& backend);  // cudnn_backend.cpp shares it

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

class CudaBackend : public Backend {
 public:
  explicit CudaBackend(const BackendOptions& o) : opts_(o) {
    require_cuda_device("cuda");
    conv_v_ = o.conv_variant.empty() ? cuda::kAutoConvVariant : cuda::parse_conv_variant(o.conv_variant);
    fc_v_ = o.fc_variant.empty() ? cuda::kDefaultFcVariant : cuda::parse_fc_variant(o.fc_variant);
    CUDA_CHECK(cudaStreamCreate(&stream_));
  }
  ~CudaBackend() override {
    for (auto& d : dev_) if (d.tex) cudaDestroyTextureObject(d.tex);
    for (auto& e : events_) cudaEventDestroy(e);
    if (stream_) cudaStreamDestroy(stream_);
  }

  std::string name() const override { return "cuda"; }

  Support supports(const Layer& l) const override {
    if (l.kind() == LayerKind::conv && conv_v_ != cuda::kAutoConvVariant) return cuda::conv_supports(conv_v_, l);
    return {};  // every other layer kind has one kernel that handles every shape
  }

  std::string describe(const Layer& l) const override {
    for (size_t i = 0; i < model_->layers.size(); ++i) {
      if (&model_->layers[i] != &l) continue;
      const Plan& p = plan_[i];
      if (!p.fused_into.empty()) return "fused into " + p.fused_into;
      if (l.kind() == LayerKind::conv) {
        const auto& v = cuda::conv_versions()[p.conv_v - 1];
        std::string s = (conv_v_ == cuda::kAutoConvVariant ? "auto: v" : "v") + std::to_string(v.number) + " " + v.name;
        if (p.epi.has_act || p.epi.pool2x2) {
          s += " (conv";
          if (p.epi.has_act) s += "+" + model_->layers[i + 1].type_name();
          if (p.epi.pool2x2) s += "+max_pool";
          s += ")";
        }
        return s;
      }
      if (l.kind() == LayerKind::fc) return std::string("fc v") + std::to_string(fc_v_) + " " + cuda::fc_versions()[fc_v_ - 1].name;
      return std::string(kind_name(l.kind())) + " kernel";
    }
    return "cuda";
  }

  void load(const Model& m) override {
    model_ = &m;
    dev_.clear();
    dev_.resize(m.layers.size());
    plan_.assign(m.layers.size(), Plan{});
    for (size_t i = 0; i < m.layers.size(); ++i) {
      const Layer& l = m.layers[i];
      Support s = supports(l);
      if (!s.ok) fail("layer '" + l.name + "'", "backend cuda does not support it: " + s.reason);
      DevLayer& d = dev_[i];
      const std::vector<float>* w = nullptr;
      const std::vector<float>* b = nullptr;
      if (auto* c = std::get_if<ConvParams>(&l.op)) { w = &c->weight; b = &c->bias; }
      if (auto* f = std::get_if<FcParams>(&l.op)) { w = &f->weight; b = &f->bias; }
      if (w) {
        d.w.upload(w->data(), w->size(), stream_);
        if (!b->empty()) d.b.upload(b->data(), b->size(), stream_);
        if ((l.kind() == LayerKind::conv && conv_v_ == 4) || (l.kind() == LayerKind::fc && fc_v_ == 3))
          d.tex = make_texture(d.w.get(), w->size());
      }
      if (l.kind() == LayerKind::conv) plan_conv(i);
    }
    CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  void forward(const float* in, int n, size_t n_layers, float* out, RunStats* stats) override {
    if (!model_) fail("cuda", "forward() before load()");
    const Model& m = *model_;
    n_layers = std::min(n_layers, m.layers.size());
    size_t max_act = 0;
    for (const Layer& l : m.layers) max_act = std::max<size_t>(max_act, l.out.size());
    const size_t in_floats = static_cast<size_t>(m.input.size()) * n, act_floats = max_act * n;
    const size_t guard = opts_.guard_check ? kGuardFloats : 0;
    in_.resize(in_floats + guard);
    act_[0].resize(act_floats + guard);
    act_[1].resize(act_floats + guard);
    size_t ws = 0;
    for (size_t i = 0; i < n_layers; ++i)
      if (m.layers[i].kind() == LayerKind::conv) ws = std::max(ws, cuda::conv_workspace_floats(plan_[i].conv_v, m.layers[i], n));
    workspace_.resize(ws);
    if (opts_.guard_check) poison(in_floats, act_floats);
    while (events_.size() < 2 * n_layers) {
      cudaEvent_t e;
      CUDA_CHECK(cudaEventCreate(&e));
      events_.push_back(e);
    }

    CUDA_CHECK(cudaMemcpyAsync(in_.get(), in, in_floats * sizeof(float), cudaMemcpyHostToDevice, stream_));
    const float* src = in_.get();
    int which = 0;
    Shape cur = m.input;
    for (size_t i = 0; i < n_layers; ++i) {
      if (!plan_[i].fused_into.empty()) continue;
      CUDA_CHECK(cudaEventRecord(events_[2 * i], stream_));
      float* dst = act_[which].get();
      const float* next = run_layer(i, src, n, dst, cur);
      if (next == dst) which ^= 1;
      src = next;
      CUDA_CHECK(cudaEventRecord(events_[2 * i + 1], stream_));
    }
    CUDA_CHECK(cudaMemcpyAsync(out, src, static_cast<size_t>(cur.size()) * n * sizeof(float), cudaMemcpyDeviceToHost, stream_));
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    for (size_t i = 0; i < n_layers; ++i) {
      float ms = 0.0f;
      if (plan_[i].fused_into.empty()) CUDA_CHECK(cudaEventElapsedTime(&ms, events_[2 * i], events_[2 * i + 1]));
      if (stats) stats->add(i, ms * 1e-3);
    }
    if (opts_.guard_check) check_guards(in_floats, act_floats);
  }

 private:
  struct DevLayer {
    DeviceBuffer<float> w, b;  // (M, C/groups, KH, KW) or (O, I); (M,) or (O,)
    cudaTextureObject_t tex = 0;
  };
  struct Plan {
    int conv_v = 0;
    cuda::Epilogue epi;
    std::string fused_into;  // non-empty: this layer runs inside that convolution's kernel
  };

  void plan_conv(size_t i) {
    const Model& m = *model_;
    Plan& p = plan_[i];
    p.conv_v = conv_v_ == cuda::kAutoConvVariant ? cuda::auto_conv_variant(m.layers[i]) : conv_v_;
    if (p.conv_v != 8 && p.conv_v != 10) return;
    cuda::Epilogue e;
    size_t j = i + 1;
    if (j < m.layers.size() && m.layers[j].kind() == LayerKind::act) {
      e.has_act = true;
      e.act = std::get<ActParams>(m.layers[j].op).act;
      ++j;
    }
    if (j < m.layers.size() && m.layers[j].kind() == LayerKind::pool) {
      const PoolParams& pp = std::get<PoolParams>(m.layers[j].op);
      cuda::Epilogue with_pool = e;
      with_pool.pool2x2 = true;
      if (pp.kind == PoolKind::max && pp.kh == 2 && pp.kw == 2 && pp.sh == 2 && pp.sw == 2 && pp.ph == 0 && pp.pw == 0 &&
          cuda::conv_supports(p.conv_v, m.layers[i], with_pool).ok)
        e = with_pool;
    }
    p.epi = e;
    const size_t absorbed = (e.has_act ? 1 : 0) + (e.pool2x2 ? 1 : 0);
    for (size_t k = 1; k <= absorbed; ++k) plan_[i + k].fused_into = m.layers[i].name;
  }

  // Runs layer i from src; returns where its output is (dst, or src for in-place layers). Updates `cur`.
  const float* run_layer(size_t i, const float* src, int n, float* dst, Shape& cur) {
    const Layer& l = model_->layers[i];
    const DevLayer& d = dev_[i];
    if (auto* c = std::get_if<ConvParams>(&l.op)) {
      cuda::ConvArgs a;
      a.in = src; a.w = d.w.get(); a.bias = c->bias.empty() ? nullptr : d.b.get(); a.out = dst;
      a.n = n; a.is = l.in; a.os = l.out; a.p = c; a.wtex = d.tex;
      a.workspace = workspace_.get(); a.workspace_floats = workspace_.size();
      a.epi = plan_[i].epi;
      cuda::conv_forward(plan_[i].conv_v, a, stream_);
      cur = l.out;
      if (a.epi.pool2x2) cur = {l.out.c, l.out.h / 2, l.out.w / 2};
      return dst;
    }
    if (auto* a = std::get_if<ActParams>(&l.op)) {
      cuda::activation_forward(const_cast<float*>(src), static_cast<long long>(l.in.size()) * n, a->act, stream_);
      return src;  // in place: src is always one of our device buffers
    }
    if (auto* p = std::get_if<PoolParams>(&l.op)) {
      cuda::pool_forward(src, n, l.in, *p, l.out, dst, stream_);
    } else if (auto* r = std::get_if<LrnParams>(&l.op)) {
      cuda::lrn_forward(src, n, l.in, *r, dst, stream_);
    } else if (std::holds_alternative<FlattenParams>(l.op)) {
      cur = l.out;
      return src;  // NCHW is already flat
    } else if (auto* f = std::get_if<FcParams>(&l.op)) {
      cuda::fc_forward(fc_v_, src, n, static_cast<int>(l.in.size()), d.w.get(), d.tex, f->bias.empty() ? nullptr : d.b.get(),
                       f->outputs, dst, stream_);
    } else if (std::holds_alternative<SoftmaxParams>(l.op)) {
      cuda::softmax_forward(src, n, static_cast<int>(l.in.size()), dst, stream_);
    }
    cur = l.out;
    return dst;
  }

  void poison(size_t in_floats, size_t act_floats) {
    CUDA_CHECK(cudaMemsetAsync(in_.get() + in_floats, kGuardByte, kGuardFloats * sizeof(float), stream_));
    for (auto& a : act_) {
      CUDA_CHECK(cudaMemsetAsync(a.get(), 0xff, act_floats * sizeof(float), stream_));  // NaN everywhere
      CUDA_CHECK(cudaMemsetAsync(a.get() + act_floats, kGuardByte, kGuardFloats * sizeof(float), stream_));
    }
  }

  void check_guards(size_t in_floats, size_t act_floats) {
    std::vector<unsigned char> host(kGuardFloats * sizeof(float));
    const std::pair<const float*, const char*> zones[] = {
        {in_.get() + in_floats, "input"}, {act_[0].get() + act_floats, "activation A"}, {act_[1].get() + act_floats, "activation B"}};
    for (const auto& [ptr, what] : zones) {
      CUDA_CHECK(cudaMemcpy(host.data(), ptr, host.size(), cudaMemcpyDeviceToHost));
      for (unsigned char c : host)
        if (c != kGuardByte) fail("cuda", std::string("a kernel wrote past the end of the ") + what + " buffer");
    }
  }

  BackendOptions opts_;
  int conv_v_ = cuda::kAutoConvVariant, fc_v_ = cuda::kDefaultFcVariant;
  cudaStream_t stream_ = nullptr;
  const Model* model_ = nullptr;
  std::vector<DevLayer> dev_;
  std::vector<Plan> plan_;
  DeviceBuffer<float> in_, act_[2], workspace_;  // (N, C, H, W) input; ping-pong activations; v5 im2col
  std::vector<cudaEvent_t> events_;              // start/end per layer
};

}  // namespace

void require_cuda_device(const std::string& backend) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0)
    fail("--backend " + backend, std::string("no CUDA GPU is available (") +
                                     (e != cudaSuccess ? cudaGetErrorString(e) : "no devices") + ")");
}

std::unique_ptr<Backend> make_cuda_backend(const BackendOptions& opts) { return std::make_unique<CudaBackend>(opts); }

}  // namespace bs
