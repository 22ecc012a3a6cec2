// The two CPU backends. cpu-ref runs every layer with the reference loops on one thread. cpu runs
// convolution and fully connected layers through OpenBLAS (blas_ops) and the other layers with the same
// reference loops split over the batch with OpenMP (their cost is a few percent of the network).
#include <omp.h>

#include <chrono>
#include <cstring>

#include "kernels/exec/backend.hpp"
#include "kernels/cpu/blas_ops.hpp"
#include "kernels/cpu/ref_ops.hpp"
#include "weights_tools/error.hpp"

namespace bs {
namespace {

class CpuBackend : public Backend {
 public:
  CpuBackend(bool fast, int threads) : fast_(fast), threads_(threads > 0 ? threads : omp_get_max_threads()) {}

  std::string name() const override { return fast_ ? "cpu" : "cpu-ref"; }
  Support supports(const Layer&) const override { return {}; }
  std::string describe(const Layer& l) const override {
    if (!fast_) return "reference loops";
    if (l.kind() == LayerKind::conv) return blas::conv_is_direct(std::get<ConvParams>(l.op)) ? "direct (register-blocked)" : "im2col+sgemm";
    if (l.kind() == LayerKind::fc) return "sgemm";
    if (l.kind() == LayerKind::flatten) return "no-op (copy)";
    return "reference loops (OpenMP over the batch)";
  }
  void load(const Model& m) override { model_ = &m; }

  void forward(const float* in, int n, size_t n_layers, float* out, RunStats* stats) override {
    if (!model_) fail(name(), "forward() before load()");
    n_layers = std::min(n_layers, model_->layers.size());
    const float* src = in;
    for (size_t i = 0; i < n_layers; ++i) {
      const Layer& l = model_->layers[i];
      Buffer& dst_buf = (i % 2 == 0) ? a_ : b_;
      if (tracer_) {
        const double a0 = tracer_->now();
        if (dst_buf.reserve(static_cast<size_t>(l.out.size()) * n)) tracer_->cpu_phase("alloc", -1, a0, tracer_->now());
        tracer_->layer_begin(static_cast<int>(i));
      } else {
        dst_buf.reserve(static_cast<size_t>(l.out.size()) * n);
      }
      auto t0 = std::chrono::steady_clock::now();
      const double p0 = tracer_ ? tracer_->now() : 0.0;
      run(l, src, n, dst_buf.data());
      auto t1 = std::chrono::steady_clock::now();
      if (tracer_) {
        tracer_->cpu_phase(l.name, static_cast<int>(i), p0, tracer_->now());
        tracer_->layer_end(static_cast<int>(i));
      }
      if (stats) stats->add(i, std::chrono::duration<double>(t1 - t0).count());
      src = dst_buf.data();
    }
    const int64_t features = n_layers ? model_->layers[n_layers - 1].out.size() : model_->input.size();
    const double c0 = tracer_ ? tracer_->now() : 0.0;
    std::memcpy(out, src, sizeof(float) * static_cast<size_t>(features) * n);
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

  void run(const Layer& l, const float* src, int n, float* dst) {
    const Shape is = l.in, os = l.out;
    if (auto* c = std::get_if<ConvParams>(&l.op)) {
      if (fast_) blas::conv(src, n, is, *c, os, dst, threads_);
      else ref::conv(src, n, is, *c, os, dst);
    } else if (auto* a = std::get_if<ActParams>(&l.op)) {
      std::memcpy(dst, src, sizeof(float) * static_cast<size_t>(is.size()) * n);
      per_image(n, [&](int b, int k) { ref::activation(dst + b * is.size(), k * is.size(), a->act); });
    } else if (auto* p = std::get_if<PoolParams>(&l.op)) {
      per_image(n, [&](int b, int k) { ref::pool(src + b * is.size(), k, is, *p, os, dst + b * os.size()); });
    } else if (auto* r = std::get_if<LrnParams>(&l.op)) {
      per_image(n, [&](int b, int k) { ref::lrn(src + b * is.size(), k, is, *r, dst + b * os.size()); });
    } else if (std::holds_alternative<FlattenParams>(l.op)) {
      std::memcpy(dst, src, sizeof(float) * static_cast<size_t>(is.size()) * n);  // NCHW is already flat
    } else if (auto* f = std::get_if<FcParams>(&l.op)) {
      if (fast_) blas::fc(src, n, is.size(), *f, dst, threads_);
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
  return std::make_unique<CpuBackend>(fast, opts.threads);
}

}  // namespace bs
