// The two CPU backends, running the planner's plan (kernels/plan/plan.hpp). cpu-ref runs every layer with the reference
// loops on one thread. cpu runs convolution and fully connected layers through OpenBLAS (blas_ops) with bias and the
// activation after them in their epilogue, and the other layers with the same reference loops split over the batch
// with OpenMP.
#include <omp.h>

#include <chrono>
#include <cstring>

#include "kernels/exec/backend.hpp"
#include "kernels/cpu/blas_ops.hpp"
#include "kernels/cpu/ref_ops.hpp"
#include "kernels/plan/plan.hpp"
#include "weights_tools/error.hpp"

namespace bs {
namespace {

class CpuBackend : public Backend {
 public:
  CpuBackend(bool fast, const BackendOptions& o)
      : Backend(fast ? BackendKind::cpu : BackendKind::cpu_ref, o), fast_(fast), threads_(o.threads > 0 ? o.threads : omp_get_max_threads()) {}

  void load(const Model& m, std::shared_ptr<const Planner> planner) override {
    model_ = &m;
    adopt_planner(m, std::move(planner));
  }

  void forward(const float* in, int n, size_t n_layers, float* out, RunStats* stats) override {
    if (!model_) fail(name(), "forward() before load()");
    n_layers = std::min(n_layers, model_->layers.size());
    const Pass& plan = planner_->pass(n);
    last_n_ = n;
    const float* src = in;
    Shape cur = model_->input;
    int which = 0;
    for (size_t i = 0; i < n_layers; ++i) {
      const PlanStep& st = plan.steps[i];
      if (!st.runs()) continue;  // its kernel ran in the layer it is fused into
      const Layer& l = model_->layers[i];
      const Layer& last = model_->layers[i + st.absorbs];
      Buffer& dst_buf = which == 0 ? a_ : b_;
      which ^= 1;
      if (tracer_) {
        const double a0 = tracer_->now();
        if (dst_buf.reserve(static_cast<size_t>(last.out.size()) * n)) tracer_->cpu_phase("alloc", -1, a0, tracer_->now());
        tracer_->layer_begin(static_cast<int>(i));
      } else {
        dst_buf.reserve(static_cast<size_t>(last.out.size()) * n);
      }
      auto t0 = std::chrono::steady_clock::now();
      const double p0 = tracer_ ? tracer_->now() : 0.0;
      run(l, st, src, n, dst_buf.data());
      auto t1 = std::chrono::steady_clock::now();
      if (tracer_) {
        tracer_->cpu_phase(l.name, static_cast<int>(i), p0, tracer_->now());
        tracer_->layer_end(static_cast<int>(i));
      }
      if (stats) stats->add(i, std::chrono::duration<double>(t1 - t0).count());
      src = dst_buf.data();
      cur = last.out;
    }
    const double c0 = tracer_ ? tracer_->now() : 0.0;
    std::memcpy(out, src, sizeof(float) * static_cast<size_t>(cur.size()) * n);
    if (tracer_) tracer_->cpu_phase("copy out", -1, c0, tracer_->now());
  }

 private:
  // Splits images over threads for the per-image reference loops (cpu only).
  template <class F>
  void per_image(int n, F&& f) {
    if (!fast_) return f(0, n);
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (int b = 0; b < n; ++b) f(b, 1);
  }

  void run(const Layer& l, const PlanStep& st, const float* src, int n, float* dst) {
    const Shape is = l.in, os = l.out;
    const Act* act = st.epi.has_act ? &st.epi.act : nullptr;
    if (auto* c = std::get_if<ConvParams>(&l.op)) {
      if (fast_) blas::conv(src, n, is, *c, os, dst, threads_, act);
      else ref::conv(src, n, is, *c, os, dst);
    } else if (auto* a = std::get_if<ActParams>(&l.op)) {
      std::memcpy(dst, src, sizeof(float) * static_cast<size_t>(is.size()) * n);
      per_image(n, [&](int b, int k) { ref::activation(dst + b * is.size(), k * is.size(), a->act, a->alpha); });
    } else if (auto* p = std::get_if<PoolParams>(&l.op)) {
      per_image(n, [&](int b, int k) { ref::pool(src + b * is.size(), k, is, *p, os, dst + b * os.size()); });
    } else if (auto* r = std::get_if<LrnParams>(&l.op)) {
      per_image(n, [&](int b, int k) { ref::lrn(src + b * is.size(), k, is, *r, dst + b * os.size()); });
    } else if (std::holds_alternative<FlattenParams>(l.op)) {
      std::memcpy(dst, src, sizeof(float) * static_cast<size_t>(is.size()) * n);  // NCHW is already flat
    } else if (auto* f = std::get_if<FcParams>(&l.op)) {
      if (fast_) blas::fc(src, n, is.size(), *f, dst, threads_, act);
      else ref::fc(src, n, is.size(), *f, dst);
    } else if (std::holds_alternative<SoftmaxParams>(l.op)) {
      per_image(n, [&](int b, int k) { ref::softmax(src + b * is.size(), k, is.size(), dst + b * os.size()); });
    }
  }

  bool fast_;
  int threads_;
  const Model* model_ = nullptr;
  // Grows only. A 10000-image batch needs ~0.5 GB per buffer: its pages are touched here, in parallel and
  // outside the layer timings, so that page faults are not billed to whichever layer writes first.
  struct Buffer {
    std::unique_ptr<float[]> p;
    size_t cap = 0;
    bool reserve(size_t n) {  // true when it had to allocate
      if (n <= cap) return false;
      p.reset(new float[n]);
      cap = n;
      float* d = p.get();
#pragma omp parallel for schedule(static)
      for (int64_t i = 0; i < static_cast<int64_t>(n); i += 1024) d[i] = 0.0f;
      return true;
    }
    float* data() { return p.get(); }
  };
  Buffer a_, b_;  // ping-pong activations (N, C, H, W)
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(bool fast, const BackendOptions& opts) {
  return std::make_unique<CpuBackend>(fast, opts);
}

}  // namespace bs
