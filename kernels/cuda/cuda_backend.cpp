// The cuda backend: this project's kernels (conv.hpp's menu, ops.hpp) behind the shared GPU pipeline
// (gpu_pipeline.hpp: resident or per-layer transfers, one stream, event timing). Every call and launch is
// checked. With conv v8/v10/v11 the activation and 2x2 max pool after a convolution run inside its kernel.
#include <cuda_runtime.h>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/conv.hpp"
#include "kernels/cuda/gpu_pipeline.hpp"
#include "kernels/cuda/ops.hpp"
#include "weights_tools/error.hpp"

namespace bs {
namespace {

class CudaBackend : public GpuPipelineBackend {
 public:
  explicit CudaBackend(const BackendOptions& o) : GpuPipelineBackend(o, "cuda") {
    conv_v_ = o.conv_variant.empty() ? cuda::kAutoConvVariant : cuda::parse_conv_variant(o.conv_variant);
    fc_v_ = o.fc_variant.empty() ? cuda::kAutoFcVariant : cuda::parse_fc_variant(o.fc_variant);
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
      if (l.kind() == LayerKind::fc) {
        if (fc_v_ == cuda::kAutoFcVariant) return "fc auto: v4 warp (batch <= 16) or v2 tiled (split-K)";
        return std::string("fc v") + std::to_string(fc_v_) + " " + cuda::fc_versions()[fc_v_ - 1].name;
      }
      if (l.kind() == LayerKind::flatten) return "no-op (NCHW is already flat)";
      return std::string(kind_name(l.kind())) + " kernel";
    }
    return "cuda";
  }

 protected:
  void after_load() override {
    plan_.assign(model_->layers.size(), Plan{});
    for (size_t i = 0; i < model_->layers.size(); ++i)
      if (model_->layers[i].kind() == LayerKind::conv) plan_conv(i);
  }
  bool fused_away(size_t i) const override { return !plan_[i].fused_into.empty(); }
  bool wants_texture(size_t i) const override {
    const LayerKind k = model_->layers[i].kind();
    return (k == LayerKind::conv && plan_[i].conv_v == 4) || (k == LayerKind::fc && fc_v_ == 3);
  }
  size_t workspace_floats(size_t i, int n) const override {
    const Layer& l = model_->layers[i];
    if (l.kind() == LayerKind::fc)
      return cuda::fc_workspace_floats(fc_v_, n, static_cast<int>(l.in.size()), std::get<FcParams>(l.op).outputs);
    return l.kind() == LayerKind::conv ? cuda::conv_workspace_floats(plan_[i].conv_v, l, n) : 0;
  }

  const float* run_layer(size_t i, const float* src, int n, float* dst, Shape& cur, const LayerWeights& w) override {
    const Layer& l = model_->layers[i];
    if (auto* c = std::get_if<ConvParams>(&l.op)) {
      cuda::ConvArgs a;
      a.in = src; a.w = w.w; a.weights_id = w.id; a.bias = w.b; a.out = dst;
      a.n = n; a.is = l.in; a.os = l.out; a.p = c; a.wtex = w.tex;
      a.workspace = ws_ptr_; a.workspace_floats = ws_floats_;
      a.epi = plan_[i].epi;
      cuda::conv_forward(plan_[i].conv_v, a, stream_);
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
      cuda::lrn_forward(src, n, l.in, *r, dst, stream_);
    } else if (std::holds_alternative<FlattenParams>(l.op)) {
      cur = l.out;
      return src;  // NCHW is already flat
    } else if (auto* f = std::get_if<FcParams>(&l.op)) {
      cuda::fc_forward(fc_v_, src, n, static_cast<int>(l.in.size()), w.w, w.tex, w.b, f->outputs, dst, ws_ptr_, ws_floats_, stream_);
    } else if (std::holds_alternative<SoftmaxParams>(l.op)) {
      cuda::softmax_forward(src, n, static_cast<int>(l.in.size()), dst, stream_);
    }
    cur = l.out;
    return dst;
  }

 private:
  struct Plan {
    int conv_v = 0;
    cuda::Epilogue epi;
    std::string fused_into;  // non-empty: this layer runs inside that convolution's kernel
  };

  void plan_conv(size_t i) {
    const Model& m = *model_;
    Plan& p = plan_[i];
    p.conv_v = conv_v_ == cuda::kAutoConvVariant ? cuda::auto_conv_variant(m.layers[i]) : conv_v_;
    if (p.conv_v != 8 && p.conv_v != 10 && p.conv_v != 11) return;
    cuda::Epilogue e;
    size_t j = i + 1;
    if (j < m.layers.size() && m.layers[j].kind() == LayerKind::act) {
      cuda::Epilogue with_act;
      with_act.has_act = true;
      with_act.act = std::get<ActParams>(m.layers[j].op).act;
      if (!cuda::conv_supports(p.conv_v, m.layers[i], with_act).ok) return;  // the pool cannot follow alone
      e = with_act;
      ++j;
    }
    if (j < m.layers.size() && m.layers[j].kind() == LayerKind::pool) {
      const PoolParams& pp = std::get<PoolParams>(m.layers[j].op);
      cuda::Epilogue with_pool = e;
      with_pool.pool2x2 = true;
      if (pp.kind == PoolKind::max && pp.kh == 2 && pp.kw == 2 && pp.sh == 2 && pp.sw == 2 && pp.ph == 0 && pp.pw == 0 &&
          !pp.ceil_mode && cuda::conv_supports(p.conv_v, m.layers[i], with_pool).ok)
        e = with_pool;
    }
    p.epi = e;
    const size_t absorbed = (e.has_act ? 1 : 0) + (e.pool2x2 ? 1 : 0);
    for (size_t k = 1; k <= absorbed; ++k) plan_[i + k].fused_into = m.layers[i].name;
  }

  int conv_v_ = cuda::kAutoConvVariant, fc_v_ = cuda::kAutoFcVariant;
  std::vector<Plan> plan_;
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend(const BackendOptions& opts) { return std::make_unique<CudaBackend>(opts); }

}  // namespace bs
