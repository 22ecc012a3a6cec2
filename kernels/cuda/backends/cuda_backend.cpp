// The cuda backend: this project's kernels (conv.hpp's and ops.hpp's menus) behind the shared GPU pipeline
// (gpu_pipeline.hpp: resident or per-layer transfers, one stream, event timing). Every call and launch is
// checked.
//
// Plan, then execute: for each batch size the backend decides once, per layer, which version runs (the flag's,
// or auto's: the tuning table's choice for the layer's signature and batch, else the heuristic of menus.cpp),
// and what it absorbs: the activation after a convolution (v8, v10-v14) or a fully connected layer (v5-v8),
// a 2x2 max pool after a convolution (v8, v10, v11), and the pooling after an LRN (one kernel). Absorbed
// layers report "fused into <layer>". Versions that read prepared weights (conv v12-v14, fc v6-v8) get them
// made on the device from the raw upload: once, at their first run, with resident transfers; for every layer
// run, in the layer's workspace, with per-layer transfers.
#include <cuda_runtime.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/ops/conv.hpp"
#include "kernels/cuda/ops/act_code.hpp"
#include "kernels/cuda/backends/gpu_pipeline.hpp"
#include "kernels/cuda/half/half_ops.hpp"
#include "kernels/cuda/ops/ops.hpp"
#include "kernels/plan/tuning.hpp"
#include "weights_tools/error.hpp"

namespace bs {
namespace {

std::string device_name() {
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp p{};
  CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
  return p.name;
}

class CudaBackend : public GpuPipelineBackend {
 public:
  explicit CudaBackend(const BackendOptions& o) : GpuPipelineBackend(o, "cuda") {
    conv_v_ = o.conv_variant.empty() ? cuda::kAutoConvVariant : parse_conv_variant(o.conv_variant);
    fc_v_ = o.fc_variant.empty() ? cuda::kAutoFcVariant : parse_fc_variant(o.fc_variant);
    // A version computes in one precision: asking for another is an error, not a silent change of arithmetic.
    check_variant_precision(conv_v_, true, o.precision, "--conv-variant");
    check_variant_precision(fc_v_, false, o.precision, "--fc-variant");
    half_ = is_half_precision(o.precision);
    bf16_ = o.precision == "bf16";
    if (half_ && o.per_layer_transfers)
      fail("--transfers", "per-layer transfers move FP32 tensors between layers; --precision " + o.precision +
                              " keeps 16-bit activations on the device: use --transfers resident");
    const std::string dev = device_name();
    if (!o.tuning_file.empty()) {
      tuning_ = read_tuning(o.tuning_file, dev);
      tuning_source_ = o.tuning_file;
    } else if (const std::string def = default_tuning_path(dev); std::ifstream(def).good()) {
      tuning_ = read_tuning(def, dev);
      tuning_source_ = def;
    }
  }

  ~CudaBackend() override {
    if (ovf_host_) cudaFreeHost(ovf_host_);
  }

  std::string name() const override { return "cuda"; }

  Support supports(const Layer& l) const override {
    if (l.kind() == LayerKind::conv && half_) return cuda::conv_supports(conv_v_ != cuda::kAutoConvVariant ? conv_v_ : 20, l);  // auto: v20 takes any
    if (l.kind() == LayerKind::conv && conv_v_ != cuda::kAutoConvVariant) return cuda::conv_supports(conv_v_, l);
    return {};  // every fc version and every other layer kind's kernel handle every shape
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

  std::string describe(const Layer& l) const override {
    const std::vector<Step>& plan = plan_for(last_n_);
    for (size_t i = 0; i < model_->layers.size(); ++i) {
      if (&model_->layers[i] != &l) continue;
      const Step& st = plan[i];
      if (!st.fused_into.empty()) return "fused into " + st.fused_into;
      std::string absorbed;
      for (size_t k = 1; k <= st.absorbs; ++k) absorbed += "+" + model_->layers[i + k].type_name();
      if (l.kind() == LayerKind::conv) {
        const MenuEntry& v = conv_entry(st.version);
        return st.how + "v" + std::to_string(v.number) + " " + v.name + (absorbed.empty() ? "" : " (conv" + absorbed + ")");
      }
      if (l.kind() == LayerKind::fc) {
        const MenuEntry& v = fc_entry(st.version);
        return st.how + "fc v" + std::to_string(v.number) + " " + v.name + (absorbed.empty() ? "" : " (fc" + absorbed + ")");
      }
      if (l.kind() == LayerKind::lrn && st.absorbs) return "lrn" + absorbed + " kernel";
      if (l.kind() == LayerKind::flatten) return half_ ? "no-op (the next layer reads NHWC order)" : "no-op (NCHW is already flat)";
      return std::string(kind_name(l.kind())) + " kernel";
    }
    return "cuda";
  }

  // conv v3, v7 and v8 copy each layer's weights into one __constant__ bank (c_weights) before its kernel,
  // v9-v11 conv1's (one input channel) into another (c_tiled_w). A bank only one layer uses holds the same
  // bytes in every instance of the same model, so concurrent instances rewrite it with what it holds; two
  // layers taking turns in it (or v3's chunks of a layer over 64 KiB) would swap weights under a running
  // kernel of another stream.
  std::string concurrency_hazard(int n) const override {
    if (half_ || !model_) return "";
    const std::vector<Step>& plan = plan_for(n);
    std::vector<std::string> bank, tiled;
    for (size_t i = 0; i < model_->layers.size(); ++i) {
      const Layer& l = model_->layers[i];
      const int v = plan[i].version;
      if (l.kind() != LayerKind::conv || !plan[i].fused_into.empty()) continue;
      const std::string who = "'" + l.name + "' (conv v" + std::to_string(v) + ")";
      if (v == 3 && l.weight_count() > 16384) return "layer " + who + " copies its weights in chunks through the one __constant__ bank every instance shares";
      if (v == 3 || v == 7 || v == 8) bank.push_back(who);
      if ((v == 9 || v == 10 || v == 11) && l.in.c == 1) tiled.push_back(who);
    }
    for (const auto* users : {&bank, &tiled})
      if (users->size() >= 2) return "layers " + (*users)[0] + " and " + (*users)[1] + " take turns in one __constant__ weight bank that every instance shares";
    return "";
  }

  std::vector<std::string> notes() const override {
    if (tuning_source_.empty()) return {"auto: no tuning table, heuristic choices"};
    return {"auto: tuning table " + tuning_source_ + " (measured " + tuning_->date + ", commit " + tuning_->commit + ")"};
  }

 protected:
  struct Step {
    int version = 0;         // conv or fc version, resolved
    std::string how;         // "auto (tuned): ", "auto (heuristic): " or "" for a version given by flag
    cuda::Epilogue epi;      // conv: what its kernel absorbs
    int act = -1;            // fc: the activation its kernel applies (-1: none)
    size_t absorbs = 0;      // how many following layers run inside this one's kernel
    std::string fused_into;  // non-empty: this layer runs inside that layer's kernel
  };

  void after_load() override {
    plans_.clear();
    prep_.clear();
    prep_.resize(model_->layers.size());
    prepared_.assign(model_->layers.size(), false);
    prep_layout_.assign(model_->layers.size(), 0);
    if (!half_) return;
    phys_ = stored_input_shapes(*model_);
    if (!bf16_ && !ovf_host_) {  // fp16's overflow flags, one per layer, in mapped host memory: nothing to copy back
      CUDA_CHECK(cudaHostAlloc(&ovf_host_, sizeof(int) * std::max<size_t>(1, model_->layers.size()), cudaHostAllocMapped));
      CUDA_CHECK(cudaHostGetDevicePointer(&ovf_dev_, ovf_host_, 0));
      ovf_layers_ = model_->layers.size();
    }
    if (ovf_host_ && ovf_layers_ < model_->layers.size()) fail("cuda", "a second model with more layers than the first (internal)");
  }
  void plan_batch(int n) override {
    cur_ = &plan_for(n);
    last_n_ = n;
  }
  bool fused_away(size_t i) const override { return !(*cur_)[i].fused_into.empty(); }
  bool wants_texture(size_t i) const override {
    const Layer& l = model_->layers[i];
    const int wanted = l.kind() == LayerKind::conv ? 4 : l.kind() == LayerKind::fc ? 3 : -1;
    const int given = l.kind() == LayerKind::conv ? conv_v_ : fc_v_;
    if (wanted < 0) return false;
    if (given != cuda::kAutoConvVariant) return given == wanted;
    if (!tuning_) return false;  // the heuristics never take the texture versions
    const std::string sig = tuning_signature(*model_, i, opts_.precision);
    for (const TuningEntry& e : tuning_->entries)
      if (e.signature == sig && e.best == wanted) return true;
    return false;
  }
  size_t workspace_floats(size_t i, int n) const override {
    const Layer& l = model_->layers[i];
    const Step& st = plan_for(n)[i];
    if (!st.fused_into.empty()) return 0;
    const bool per_layer = opts_.per_layer_transfers;
    if (half_) {
      if (auto* f = std::get_if<FcParams>(&l.op)) return cuda::half::fc_half_workspace_floats(st.version, n, phys_[i], f->outputs, bf16_);
      if (l.kind() == LayerKind::conv) return cuda::half::conv_half_workspace_floats(st.version, l, n, bf16_);
      return 0;
    }
    if (auto* f = std::get_if<FcParams>(&l.op)) {
      const int in = static_cast<int>(l.in.size());
      return cuda::fc_workspace_floats(st.version, n, in, f->outputs) + (per_layer ? cuda::fc_prepared_floats(st.version, in, f->outputs) : 0);
    }
    if (l.kind() == LayerKind::conv)
      return cuda::conv_workspace_floats(st.version, l, n) + (per_layer ? cuda::conv_prepared_floats(st.version, l) : 0);
    return 0;
  }
  size_t resident_extra_floats(int n) const override {
    size_t floats = half_ ? input_words(n) : 0;
    const std::vector<Step>& plan = plan_for(n);
    for (size_t i = 0; i < model_->layers.size(); ++i) {
      const Layer& l = model_->layers[i];
      if (half_) {
        if (auto* f = std::get_if<FcParams>(&l.op)) floats += cuda::half::fc_half_prepared_floats(phys_[i], f->outputs);
        if (l.kind() == LayerKind::conv) floats += cuda::half::conv_half_prepared_floats(plan[i].version, l);
        continue;
      }
      if (auto* f = std::get_if<FcParams>(&l.op)) floats += cuda::fc_prepared_floats(plan[i].version, static_cast<int>(l.in.size()), f->outputs);
      if (l.kind() == LayerKind::conv) floats += cuda::conv_prepared_floats(plan[i].version, l);
    }
    return floats;
  }

  const float* run_layer(size_t i, const float* src, int n, float* dst, Shape& cur, const LayerWeights& w) override {
    if (half_) return run_half(i, src, n, dst, cur, w);
    const Layer& l = model_->layers[i];
    const Step& st = (*cur_)[i];
    if (auto* c = std::get_if<ConvParams>(&l.op)) {
      cuda::ConvArgs a;
      a.in = src; a.w = w.w; a.weights_id = w.id; a.bias = w.b; a.out = dst;
      a.n = n; a.is = l.in; a.os = l.out; a.p = c; a.wtex = w.tex;
      a.workspace = ws_ptr_; a.workspace_floats = ws_floats_;
      a.epi = st.epi;
      if (const size_t pf = cuda::conv_prepared_floats(st.version, l)) {
        a.prepared = prepared(i, pf, [&](float* dst_prep) { cuda::conv_prepare(st.version, a, dst_prep, stream_); },
                              cuda::conv_prep_layout(st.version));
        if (opts_.per_layer_transfers) { a.workspace += pf; a.workspace_floats -= pf; }
      }
      cuda::conv_forward(st.version, a, stream_);
      cur = a.epi.pool2x2 ? Shape{l.out.c, l.out.h / 2, l.out.w / 2} : l.out;
      return dst;
    }
    if (auto* a = std::get_if<ActParams>(&l.op)) {
      cuda::activation_forward(const_cast<float*>(src), static_cast<long long>(l.in.size()) * n, a->act, stream_);
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
      a.workspace = ws_ptr_; a.workspace_floats = ws_floats_; a.act = st.act;
      if (const size_t pf = cuda::fc_prepared_floats(st.version, a.inputs, a.outputs)) {
        a.prepared = prepared(i, pf, [&](float* dst_prep) { cuda::fc_prepare(st.version, w.w, a.inputs, a.outputs, dst_prep, stream_); });
        if (opts_.per_layer_transfers) { a.workspace += pf; a.workspace_floats -= pf; }
      }
      cuda::fc_forward(st.version, a, stream_);
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
    const Step& st = (*cur_)[i];
    int* ovf = ovf_dev_ ? ovf_dev_ + i : nullptr;
    // v22 on conv1's shape reads the input itself (FP32 or, with --input-precision, 16-bit) as it stages it: no pass
    // of its own.
    const bool raw_in = i == 0 && l.kind() == LayerKind::conv && h::conv_half_reads_model_input(st.version, l);
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
      a.prepared = prepared(i, h::conv_half_prepared_floats(st.version, l),
                            [&](float* p) { h::conv_half_prepare(st.version, w.w, l, bf16_, p, stream_); }, st.version == 22 ? 22 : 0);
      h::conv_half_forward(st.version, a, stream_);
      if (st.epi.pool2x2) cur = model_->layers[i + st.absorbs].out;
    } else if (auto* ap = std::get_if<ActParams>(&l.op)) {
      h::act_half(const_cast<uint16_t*>(in), n, phys_[i], ap->act, bf16_, stream_);
      result = src;  // in place
    } else if (auto* p = std::get_if<PoolParams>(&l.op)) {
      h::pool_half(in, n, l.in, *p, l.out, out, bf16_, stream_);
    } else if (auto* r = std::get_if<LrnParams>(&l.op)) {
      h::lrn_half(in, n, l.in, *r, out, bf16_, ovf, stream_);
    } else if (std::holds_alternative<FlattenParams>(l.op)) {
      result = src;
    } else if (auto* f = std::get_if<FcParams>(&l.op)) {
      h::HalfFcArgs a;
      a.in = in; a.n = n; a.outputs = f->outputs; a.is = phys_[i]; a.bias = w.b; a.out = out; a.act = st.act;
      a.workspace = ws_ptr_; a.workspace_floats = ws_floats_; a.ovf = ovf; a.bf16 = bf16_;
      a.prepared = prepared(i, h::fc_half_prepared_floats(phys_[i], f->outputs),
                            [&](float* p) { h::fc_half_prepare(w.w, phys_[i], f->outputs, bf16_, p, stream_); });
      h::fc_half_forward(st.version, a, stream_);
      cur = model_->layers[i + st.absorbs].out;
    } else if (std::holds_alternative<SoftmaxParams>(l.op)) {
      h::softmax_half(in, n, phys_[i], out, bf16_, stream_);
    }
    out_phys_ = std::holds_alternative<FlattenParams>(l.op) ? phys_[i] : cur;
    return result;
  }

  const float* finish_output(const float* src, Shape, int n, float* spare) override {
    if (!half_) return src;
    cuda::half::from_half_nhwc(reinterpret_cast<const uint16_t*>(src), n, out_phys_, spare, bf16_, stream_);
    return spare;
  }

  // Layer i's weights in the layout its version reads: made once with resident transfers (kept in prep_),
  // made in the head of the workspace for each run with per-layer transfers.
  // `layout` names the layout: versions that read different ones (v22 against v19-v21, v23-v25 against v12-v18) may
  // take turns on a layer when a tuning table picks them for different batch sizes.
  template <class Make>
  const float* prepared(size_t i, size_t floats, Make&& make, int layout = 0) {
    if (opts_.per_layer_transfers) {
      make(ws_ptr_);
      return ws_ptr_;
    }
    if (!prepared_[i] || prep_[i].size() < floats || prep_layout_[i] != layout) {
      prep_[i].resize(floats);
      make(prep_[i].get());
      prepared_[i] = true;
      prep_layout_[i] = layout;
    }
    return prep_[i].get();
  }

  // auto's choice for layer i at batch n, and how it was made.
  int choose(size_t i, int n, std::string& how) const {
    const Layer& l = model_->layers[i];
    const bool conv = l.kind() == LayerKind::conv;
    if (tuning_) {
      if (auto v = tuning_->lookup(conv ? "conv" : "fc", tuning_signature(*model_, i, opts_.precision), n);
          v && (!conv || cuda::conv_supports(*v, l).ok) && variant_allowed(conv ? conv_entry(*v) : fc_entry(*v), conv, opts_.precision)) {
        how = "auto (tuned): ";
        return *v;
      }
    }
    how = "auto (heuristic): ";
    if (half_) {  // menus.cpp: conv_auto_heuristic_half, fc_auto_heuristic_half
      if (!conv) return n <= 256 ? 13 : 12;
      if (cuda::conv_supports(22, l).ok) return 22;  // ECE 408's shapes
      const ConvParams& c = std::get<ConvParams>(l.op);
      const long long pixels = static_cast<long long>(n) * l.out.h * l.out.w;
      const long long blocks = (pixels + 127) / 128 * ((c.filters / c.groups + 63) / 64) * c.groups;
      return blocks < 2LL * cuda::sm_count() ? 21 : 20;
    }
    const bool tf32 = opts_.precision == "tf32";
    if (conv) {
      if (tf32 && cuda::conv_supports(33, l).ok) {  // menus.cpp: conv_auto_heuristic_tf32
        const ConvParams& c = std::get<ConvParams>(l.op);
        const long long pixels = static_cast<long long>(n) * l.out.h * l.out.w;
        if ((pixels + 255) / 256 * ((c.filters / c.groups + 95) / 96) * c.groups >= 2LL * cuda::sm_count()) return 33;
      }
      const int v = cuda::heuristic_conv_variant(l, n);
      return tf32 ? (v == 14 ? 18 : 17) : v;
    }
    const int v = cuda::heuristic_fc_variant(n, static_cast<int>(l.in.size()), std::get<FcParams>(l.op).outputs);
    return tf32 ? (v == 5 ? 5 : v == 8 ? 11 : 10) : v;
  }

  const std::vector<Step>& plan_for(int n) const {
    if (auto it = plans_.find(n); it != plans_.end()) return it->second;
    const Model& m = *model_;
    std::vector<Step> plan(m.layers.size());
    for (size_t i = 0; i < m.layers.size(); ++i) {
      if (!plan[i].fused_into.empty()) continue;
      const Layer& l = m.layers[i];
      Step& st = plan[i];
      const bool next_is_act = i + 1 < m.layers.size() && m.layers[i + 1].kind() == LayerKind::act;
      if (l.kind() == LayerKind::conv) {
        st.version = conv_v_;
        if (conv_v_ == cuda::kAutoConvVariant) st.version = choose(i, n, st.how);
        plan_conv_epilogue(i, st);
      } else if (l.kind() == LayerKind::fc) {
        st.version = fc_v_;
        if (fc_v_ == cuda::kAutoFcVariant) st.version = choose(i, n, st.how);
        if (cuda::fc_fuses_act(st.version) && next_is_act) {
          st.act = cuda::act_code(std::get<ActParams>(m.layers[i + 1].op).act);
          st.absorbs = 1;
        }
      } else if (l.kind() == LayerKind::lrn && !half_ && i + 1 < m.layers.size() && m.layers[i + 1].kind() == LayerKind::pool &&
                 cuda::lrn_pool_fusable(l.in)) {
        st.absorbs = 1;
      }
      for (size_t k = 1; k <= st.absorbs; ++k) plan[i + k].fused_into = l.name;
    }
    return plans_.emplace(n, std::move(plan)).first->second;
  }

  // What a convolution's kernel absorbs: the activation after it (v8, v10-v14), then a 2x2 max pool
  // (v8, v10, v11).
  void plan_conv_epilogue(size_t i, Step& st) const {
    const Model& m = *model_;
    const int v = st.version;
    if (v != 8 && v != 10 && v != 11 && !cuda::conv_is_engine(v) && !cuda::conv_is_half(v) && !cuda::conv_is_wgmma(v)) return;
    cuda::Epilogue e;
    size_t j = i + 1;
    if (j < m.layers.size() && m.layers[j].kind() == LayerKind::act) {
      cuda::Epilogue with_act;
      with_act.has_act = true;
      with_act.act = std::get<ActParams>(m.layers[j].op).act;
      if (!cuda::conv_supports(v, m.layers[i], with_act).ok) return;  // the pool cannot follow alone
      e = with_act;
      ++j;
    }
    if (j < m.layers.size() && m.layers[j].kind() == LayerKind::pool) {
      const PoolParams& pp = std::get<PoolParams>(m.layers[j].op);
      cuda::Epilogue with_pool = e;
      with_pool.pool2x2 = true;
      if (pp.kind == PoolKind::max && pp.kh == 2 && pp.kw == 2 && pp.sh == 2 && pp.sw == 2 && pp.ph == 0 && pp.pw == 0 &&
          !pp.ceil_mode && cuda::conv_supports(v, m.layers[i], with_pool).ok)
        e = with_pool;
    }
    st.epi = e;
    st.absorbs = (e.has_act ? 1 : 0) + (e.pool2x2 ? 1 : 0);
  }

  int conv_v_ = cuda::kAutoConvVariant, fc_v_ = cuda::kAutoFcVariant;
  std::optional<TuningTable> tuning_;
  std::string tuning_source_;
  mutable std::map<int, std::vector<Step>> plans_;  // per batch size
  const std::vector<Step>* cur_ = nullptr;           // the forward in progress
  int last_n_ = 1;
  std::vector<DeviceBuffer<float>> prep_;            // prepared weights (resident transfers)
  std::vector<bool> prepared_;
  std::vector<int> prep_layout_;
  // fp16 / bf16
  bool half_ = false, bf16_ = false;
  std::vector<Shape> phys_;      // per layer: the NHWC shape its input is stored in
  Shape out_phys_;               // the stored shape of the last layer run's output
  DeviceBuffer<float> half_in_;  // the input as 16-bit NHWC (words)
  int* ovf_host_ = nullptr;      // fp16: per layer, set by a kernel whose output left FP16's range (mapped)
  int* ovf_dev_ = nullptr;
  size_t ovf_layers_ = 0;
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend(const BackendOptions& opts) { return std::make_unique<CudaBackend>(opts); }

}  // namespace bs
