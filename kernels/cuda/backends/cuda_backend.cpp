// The cuda backend: this project's kernels behind the shared GPU pipeline (gpu_pipeline.hpp: resident, per-layer or
// overlapped transfers, one compute stream, event timing). It runs the planner's plan (kernels/plan/plan.hpp): per
// layer the registry descriptor the plan names (its launchers in Impl::hooks), with what the plan fused into it (the
// activation after a convolution or fully connected layer, a 2x2 max pool after a convolution, the pooling after an
// LRN). Versions that read prepared weights (the descriptor's prepared_floats) get them made on the device from the
// raw upload: once, at their first run, with resident transfers; for every layer run, in the layer's workspace, with
// per-layer transfers. Every call and launch is checked.
#include <cuda_runtime.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>

#include "kernels/cuda/backends/gpu_pipeline.hpp"
#include "kernels/cuda/check.hpp"
#include "kernels/cuda/impl_hooks.hpp"
#include "kernels/cuda/ops/act_code.hpp"
#include "weights_tools/error.hpp"

namespace bs {
namespace {

class CudaBackend : public GpuPipelineBackend {
 public:
  explicit CudaBackend(const BackendOptions& o)
      : GpuPipelineBackend(BackendKind::cuda, o), half_(is_half(o.precision)), bf16_(o.precision == Precision::bf16) {}

  ~CudaBackend() override {
    if (ovf_host_) cudaFreeHost(ovf_host_);
  }

  void forward(const float* in, int n, size_t n_layers, float* out, RunStats* stats) override {
    const size_t layers = model_ ? model_->layers.size() : 0;
    if (ovf_host_) std::fill(ovf_host_, ovf_host_ + layers, 0);
    GpuPipelineBackend::forward(in, n, n_layers, out, stats);
    for (size_t i = 0; ovf_host_ && i < std::min(n_layers, layers); ++i)
      if (static_cast<volatile int*>(ovf_host_)[i])
        fail("layer '" + model_->layers[i].name + "'", "an activation exceeds 65504, FP16's largest value (--precision fp16); "
                                                       "bf16 keeps FP32's range");
  }

  std::vector<std::string> notes() const override {
    if (!planner().tuning()) return {"auto: no tuning table, heuristic choices"};
    const auto& entries = planner().tuning()->entries;
    const bool unchecked = std::any_of(entries.begin(), entries.end(), [](const TuningEntry& e) { return e.errors.empty(); });
    return {"auto: tuning table " + planner().tuning_source() +
            (unchecked ? "; some of its choices were made on time alone (written before tune measured each version's error: "
                         "run batchscope tune again for choices within the error budget)"
                       : "")};
  }

 protected:
  void after_load() override {
    prep_.clear();
    if (!half_) return;
    if (!bf16_ && !ovf_host_) {  // fp16's overflow flags, one per layer, in mapped host memory: nothing to copy back
      CUDA_CHECK(cudaHostAlloc(&ovf_host_, sizeof(int) * std::max<size_t>(1, model_->layers.size()), cudaHostAllocMapped));
      CUDA_CHECK(cudaHostGetDevicePointer(&ovf_dev_, ovf_host_, 0));
      ovf_layers_ = model_->layers.size();
    }
    if (ovf_host_ && ovf_layers_ < model_->layers.size()) fail("cuda", "a second model with more layers than the first (internal)");
  }

  const float* run_layer(size_t i, const float* src, int n, float* dst, Shape& cur, const LayerWeights& w) override {
    if (half_) return run_half(i, src, n, dst, cur, w);
    const Layer& l = model_->layers[i];
    const PlanStep& st = cur_->steps[i];
    const ImplHooks* hooks = st.impl->hooks;  // conv and fc versions carry theirs; other layers have one kernel each
    if (auto* c = std::get_if<ConvParams>(&l.op)) {
      cuda::ConvArgs a;
      a.in = src; a.w = w.w; a.weights_id = w.id; a.bias = w.b; a.out = dst;
      a.n = n; a.is = l.in; a.os = l.out; a.p = c; a.wtex = w.tex;
      a.workspace = ws_ptr_; a.workspace_floats = ws_floats_;
      a.epi = st.epi;
      if (const size_t pf = st.prepared_floats) {
        a.prepared = prepared(i, pf, [&](float* dst_prep) { hooks->conv_prepare(st.impl->number, a, dst_prep, stream_); },
                              st.impl->prep_layout);
        if (per_layer()) { a.workspace += pf; a.workspace_floats -= pf; }
      }
      hooks->conv_forward(st.impl->number, a, stream_);
      cur = a.epi.pool2x2 ? Shape{l.out.c, l.out.h / 2, l.out.w / 2} : l.out;
      return dst;
    }
    if (auto* a = std::get_if<ActParams>(&l.op)) {
      cuda::activation_forward(const_cast<float*>(src), static_cast<long long>(l.in.size()) * n, *a, stream_);
      cur = l.out;
      return src;  // in place: src is always a device buffer of the pipeline's
    }
    if (auto* p = std::get_if<PoolParams>(&l.op)) {
      cuda::pool_forward(src, n, l.in, *p, l.out, dst, stream_);
    } else if (auto* r = std::get_if<LrnParams>(&l.op)) {
      if (st.absorbs) {
        const Layer& pool = model_->layers[i + 1];
        cuda::lrn_pool_forward(src, n, l.in, *r, std::get<PoolParams>(pool.op), pool.out, dst, stream_);
        cur = pool.out;
        return dst;
      }
      cuda::lrn_forward(src, n, l.in, *r, dst, stream_);
    } else if (std::holds_alternative<FlattenParams>(l.op)) {
      cur = l.out;
      return src;  // NCHW is already flat
    } else if (auto* f = std::get_if<FcParams>(&l.op)) {
      cuda::FcArgs a;
      a.in = src; a.n = n; a.inputs = static_cast<int>(l.in.size()); a.outputs = f->outputs;
      a.w = w.w; a.wtex = w.tex; a.bias = w.b; a.out = dst;
      a.workspace = ws_ptr_; a.workspace_floats = ws_floats_; a.act = st.epi.has_act ? cuda::act_code(st.epi.act) : -1;
      if (const size_t pf = st.prepared_floats) {
        a.prepared = prepared(i, pf, [&](float* dst_prep) { hooks->fc_prepare(st.impl->number, w.w, a.inputs, a.outputs, dst_prep, stream_); },
                              st.impl->prep_layout);
        if (per_layer()) { a.workspace += pf; a.workspace_floats -= pf; }
      }
      hooks->fc_forward(st.impl->number, a, stream_);
      cur = st.absorbs ? model_->layers[i + st.absorbs].out : l.out;
      return dst;
    } else if (std::holds_alternative<SoftmaxParams>(l.op)) {
      cuda::softmax_forward(src, n, static_cast<int>(l.in.size()), dst, stream_);
    }
    cur = l.out;
    return dst;
  }

 private:
  size_t input_words(int n) const {
    const Shape& s = model_->input;
    return static_cast<size_t>(n) * s.h * s.w * cuda::half::stored_channels(s.c) / 2;
  }

  // --precision fp16 / bf16 (half_ops.hpp): 16-bit NHWC tensors between layers; the FP32 input is converted on the
  // device at the start of the first layer (inside its timing), the output back at the end of the last.
  const float* run_half(size_t i, const float* src, int n, float* dst, Shape& cur, const LayerWeights& w) {
    namespace h = cuda::half;
    const Layer& l = model_->layers[i];
    const PlanStep& st = cur_->steps[i];
    const ImplHooks* hooks = st.impl->hooks;  // conv and fc versions carry theirs
    const Shape stored = st.stored_in;
    int* ovf = ovf_dev_ ? ovf_dev_ + i : nullptr;
    // v22 on conv1's shape reads the input itself (FP32 or, with --input-precision, 16-bit) as it stages it: no pass
    // of its own.
    const bool raw_in = i == 0 && l.kind() == LayerKind::conv && hooks->half_reads_model_input &&
                        hooks->half_reads_model_input(st.impl->number, l);
    const float* model_in = src;
    if (i == 0 && !raw_in) {
      half_in_.resize(input_words(n));
      auto* dst16 = reinterpret_cast<uint16_t*>(half_in_.get());
      if (input16()) h::input16_to_nhwc(reinterpret_cast<const uint16_t*>(src), n, model_->input, false, dst16, stream_);
      else h::to_half_nhwc(src, n, model_->input, dst16, bf16_, ovf, stream_);
      src = half_in_.get();
    }
    const auto* in = reinterpret_cast<const uint16_t*>(src);
    auto* out = reinterpret_cast<uint16_t*>(dst);
    const float* result = dst;
    cur = l.out;
    if (l.kind() == LayerKind::conv) {
      h::HalfConvArgs a;
      a.in = in; a.bias = w.b; a.out = out; a.n = n; a.is = l.in; a.os = l.out; a.p = &std::get<ConvParams>(l.op);
      a.act = st.epi.has_act ? cuda::act_code(st.epi.act) : -1;
      a.workspace = ws_ptr_; a.workspace_floats = ws_floats_; a.ovf = ovf; a.bf16 = bf16_;
      a.in_f32 = raw_in && !input16() ? model_in : nullptr;
      a.in_nchw16 = raw_in && input16() ? reinterpret_cast<const uint16_t*>(model_in) : nullptr;
      a.pool = st.epi.pool2x2;
      a.prepared = prepared(i, st.prepared_floats,
                            [&](float* p) { hooks->half_conv_prepare(st.impl->number, w.w, l, bf16_, p, stream_); }, st.impl->prep_layout);
      hooks->half_conv_forward(st.impl->number, a, stream_);
      if (st.epi.pool2x2) cur = model_->layers[i + st.absorbs].out;
    } else if (auto* ap = std::get_if<ActParams>(&l.op)) {
      h::act_half(const_cast<uint16_t*>(in), n, stored, *ap, bf16_, stream_);
      result = src;  // in place
    } else if (auto* p = std::get_if<PoolParams>(&l.op)) {
      h::pool_half(in, n, l.in, *p, l.out, out, bf16_, stream_);
    } else if (auto* r = std::get_if<LrnParams>(&l.op)) {
      if (st.absorbs) {  // the pooling after it
        const Layer& pool = model_->layers[i + 1];
        h::lrn_pool_half(in, n, l.in, *r, std::get<PoolParams>(pool.op), pool.out, out, bf16_, ovf, stream_);
        cur = pool.out;
      } else {
        h::lrn_half(in, n, l.in, *r, out, bf16_, ovf, stream_);
      }
    } else if (std::holds_alternative<FlattenParams>(l.op)) {
      result = src;
    } else if (auto* f = std::get_if<FcParams>(&l.op)) {
      h::HalfFcArgs a;
      a.in = in; a.n = n; a.outputs = f->outputs; a.is = stored; a.bias = w.b; a.out = out;
      a.act = st.epi.has_act ? cuda::act_code(st.epi.act) : -1;
      a.workspace = ws_ptr_; a.workspace_floats = ws_floats_; a.ovf = ovf; a.bf16 = bf16_;
      a.prepared = prepared(i, st.prepared_floats, [&](float* p) { hooks->half_fc_prepare(w.w, stored, f->outputs, bf16_, p, stream_); },
                            st.impl->prep_layout);
      hooks->half_fc_forward(st.impl->number, a, stream_);
      cur = model_->layers[i + st.absorbs].out;
    } else if (std::holds_alternative<SoftmaxParams>(l.op)) {
      h::softmax_half(in, n, stored, out, bf16_, stream_);
    }
    out_phys_ = std::holds_alternative<FlattenParams>(l.op) ? stored : cur;
    return result;
  }

  const float* finish_output(const float* src, Shape, int n, float* spare) override {
    if (!half_) return src;
    cuda::half::from_half_nhwc(reinterpret_cast<const uint16_t*>(src), n, out_phys_, spare, bf16_, stream_);
    return spare;
  }

  // Layer i's weights in the layout its version reads: made once per layout with resident transfers (kept in prep_),
  // made in the head of the workspace for each run with per-layer transfers.
  // `layout` names the layout: versions that read different ones (fc v14 against v12-v13, v22 against v19-v21, v23-v25
  // against v12-v18) take turns on a layer when batch sizes have different plans (auto, a tuning table). Each layout
  // keeps a buffer of its own: remaking one buffer in the other layout would change, under the same address, weights
  // that a CUDA graph captured at the other batch size still reads (found with --copies kernel's tests: fp16 with
  // --cuda-graph at 9, 1 and again 9 images gave 9's replay weights in 1's layout).
  template <class Make>
  const float* prepared(size_t i, size_t floats, Make&& make, int layout) {
    if (per_layer()) {
      make(ws_ptr_);
      return ws_ptr_;
    }
    Prepared& p = prep_[{i, layout}];
    if (!p.made || p.buf.size() < floats) {  // growing reallocates: graphs are dropped (device_alloc_epoch)
      p.buf.resize(floats);
      make(p.buf.get());
      p.made = true;
    }
    return p.buf.get();
  }

  struct Prepared {
    DeviceBuffer<float> buf;
    bool made = false;
  };
  std::map<std::pair<size_t, int>, Prepared> prep_;  // prepared weights by (layer, layout) (resident transfers)
  // fp16 / bf16
  bool half_ = false, bf16_ = false;
  Shape out_phys_;               // the stored shape of the last layer run's output
  DeviceBuffer<float> half_in_;  // the input as 16-bit NHWC (words)
  int* ovf_host_ = nullptr;      // fp16: per layer, set by a kernel whose output left FP16's range (mapped)
  int* ovf_dev_ = nullptr;
  size_t ovf_layers_ = 0;
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend(const BackendOptions& opts) { return std::make_unique<CudaBackend>(opts); }

}  // namespace bs
