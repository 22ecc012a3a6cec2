// The cudnn backend, the library baseline: cuDNN convolution (algorithm chosen once per shape with
// cudnnFindConvolutionForwardAlgorithm, cached, FMA math so FP32 stays FP32), cuBLAS SGEMM for fully
// connected layers, cuDNN pooling, activation, LRN and softmax. Same device-resident pipeline as cuda.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <map>

#include "kernels/backend.hpp"
#include "kernels/cuda/buffer.hpp"
#include "kernels/cuda/check.hpp"
#include "weights_tools/error.hpp"

namespace bs {

void require_cuda_device(const std::string& backend);

namespace {

const char* algo_name(cudnnConvolutionFwdAlgo_t a) {
  switch (a) {
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM: return "IMPLICIT_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM: return "IMPLICIT_PRECOMP_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_GEMM: return "GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT: return "DIRECT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT: return "FFT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING: return "FFT_TILING";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD: return "WINOGRAD";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED: return "WINOGRAD_NONFUSED";
    default: return "?";
  }
}

// Output size rule shared by cuDNN and floor-mode pooling; ceil-mode pools that differ are unsupported.
int floor_out(int in, int k, int s, int p) { return (in + 2 * p - k) / s + 1; }

class CudnnBackend : public Backend {
 public:
  explicit CudnnBackend(const BackendOptions&) {
    require_cuda_device("cudnn");
    CUDA_CHECK(cudaStreamCreate(&stream_));
    CUDNN_CHECK(cudnnCreate(&cudnn_));
    CUDNN_CHECK(cudnnSetStream(cudnn_, stream_));
    CUBLAS_CHECK(cublasCreate(&cublas_));
    CUBLAS_CHECK(cublasSetStream(cublas_, stream_));
    CUBLAS_CHECK(cublasSetMathMode(cublas_, CUBLAS_DEFAULT_MATH));  // FP32, no TF32
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&x_));
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&y_));
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&b_));
    CUDNN_CHECK(cudnnCreateFilterDescriptor(&w_));
    CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&conv_));
    CUDNN_CHECK(cudnnCreatePoolingDescriptor(&pool_));
    CUDNN_CHECK(cudnnCreateActivationDescriptor(&actd_));
    CUDNN_CHECK(cudnnCreateLRNDescriptor(&lrn_));
  }
  ~CudnnBackend() override {
    for (auto& e : events_) cudaEventDestroy(e);
    cudnnDestroyLRNDescriptor(lrn_);
    cudnnDestroyActivationDescriptor(actd_);
    cudnnDestroyPoolingDescriptor(pool_);
    cudnnDestroyConvolutionDescriptor(conv_);
    cudnnDestroyFilterDescriptor(w_);
    cudnnDestroyTensorDescriptor(b_);
    cudnnDestroyTensorDescriptor(y_);
    cudnnDestroyTensorDescriptor(x_);
    cublasDestroy(cublas_);
    cudnnDestroy(cudnn_);
    cudaStreamDestroy(stream_);
  }

  std::string name() const override { return "cudnn"; }

  Support supports(const Layer& l) const override {
    if (auto* p = std::get_if<PoolParams>(&l.op)) {
      if (floor_out(l.in.h, p->kh, p->sh, p->ph) != l.out.h || floor_out(l.in.w, p->kw, p->sw, p->pw) != l.out.w)
        return {false, "cuDNN pooling has no ceil mode, and this layer's ceil-mode output size differs"};
    }
    if (auto* r = std::get_if<LrnParams>(&l.op))
      if (r->size < 1 || r->size > 16) return {false, "cuDNN LRN supports window sizes 1 to 16"};
    return {};
  }

  std::string describe(const Layer& l) const override {
    for (size_t i = 0; i < model_->layers.size(); ++i)
      if (&model_->layers[i] == &l) {
        if (l.kind() == LayerKind::conv) return last_algo_[i].empty() ? "cudnnConvolutionForward" : "cuDNN " + last_algo_[i];
        if (l.kind() == LayerKind::fc) return "cublasSgemm";
      }
    return std::string("cuDNN ") + kind_name(l.kind());
  }

  void load(const Model& m) override {
    model_ = &m;
    dev_w_.clear(); dev_b_.clear();
    dev_w_.resize(m.layers.size()); dev_b_.resize(m.layers.size());
    last_algo_.assign(m.layers.size(), "");
    for (size_t i = 0; i < m.layers.size(); ++i) {
      const Layer& l = m.layers[i];
      Support s = supports(l);
      if (!s.ok) fail("layer '" + l.name + "'", "backend cudnn does not support it: " + s.reason);
      const std::vector<float>* w = nullptr;
      const std::vector<float>* b = nullptr;
      if (auto* c = std::get_if<ConvParams>(&l.op)) { w = &c->weight; b = &c->bias; }
      if (auto* f = std::get_if<FcParams>(&l.op)) { w = &f->weight; b = &f->bias; }
      if (w) {
        dev_w_[i].upload(w->data(), w->size(), stream_);
        if (!b->empty()) dev_b_[i].upload(b->data(), b->size(), stream_);
      }
    }
    CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  // The algorithm cuDNN picked for each convolution at the last batch size: "<layer>=<ALGO>" entries.
  std::vector<std::string> chosen_algorithms() const {
    std::vector<std::string> out;
    for (size_t i = 0; i < last_algo_.size(); ++i)
      if (!last_algo_[i].empty()) out.push_back(model_->layers[i].name + "=" + last_algo_[i]);
    return out;
  }

  void forward(const float* in, int n, size_t n_layers, float* out, RunStats* stats) override {
    if (!model_) fail("cudnn", "forward() before load()");
    const Model& m = *model_;
    n_layers = std::min(n_layers, m.layers.size());
    size_t max_act = 0;
    for (const Layer& l : m.layers) max_act = std::max<size_t>(max_act, l.out.size());
    in_.resize(static_cast<size_t>(m.input.size()) * n);
    act_[0].resize(max_act * n);
    act_[1].resize(max_act * n);
    while (events_.size() < 2 * n_layers) {
      cudaEvent_t e;
      CUDA_CHECK(cudaEventCreate(&e));
      events_.push_back(e);
    }
    CUDA_CHECK(cudaMemcpyAsync(in_.get(), in, static_cast<size_t>(m.input.size()) * n * sizeof(float), cudaMemcpyHostToDevice, stream_));
    const float* src = in_.get();
    int which = 0;
    for (size_t i = 0; i < n_layers; ++i) {
      CUDA_CHECK(cudaEventRecord(events_[2 * i], stream_));
      float* dst = act_[which].get();
      const float* next = run_layer(i, src, n, dst);
      if (next == dst) which ^= 1;
      src = next;
      CUDA_CHECK(cudaEventRecord(events_[2 * i + 1], stream_));
    }
    const int64_t f = n_layers ? m.layers[n_layers - 1].out.size() : m.input.size();
    CUDA_CHECK(cudaMemcpyAsync(out, src, static_cast<size_t>(f) * n * sizeof(float), cudaMemcpyDeviceToHost, stream_));
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    for (size_t i = 0; i < n_layers; ++i) {
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, events_[2 * i], events_[2 * i + 1]));
      if (stats) stats->add(i, ms * 1e-3);
    }
  }

 private:
  void set4d(cudnnTensorDescriptor_t d, int n, Shape s) {
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, s.c, s.h, s.w));
  }

  struct Algo {
    cudnnConvolutionFwdAlgo_t algo;
    size_t workspace;
  };

  const float* run_layer(size_t i, const float* src, int n, float* dst) {
    const Layer& l = model_->layers[i];
    const float one = 1.0f, zero = 0.0f;
    if (auto* c = std::get_if<ConvParams>(&l.op)) {
      set4d(x_, n, l.in);
      set4d(y_, n, l.out);
      CUDNN_CHECK(cudnnSetFilter4dDescriptor(w_, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, c->filters, l.in.c / c->groups, c->kh, c->kw));
      CUDNN_CHECK(cudnnSetConvolution2dDescriptor(conv_, c->ph, c->pw, c->sh, c->sw, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
      CUDNN_CHECK(cudnnSetConvolutionGroupCount(conv_, c->groups));
      CUDNN_CHECK(cudnnSetConvolutionMathType(conv_, CUDNN_FMA_MATH));
      const Algo a = find_algo(i, n);
      workspace_.resize(a.workspace / sizeof(float) + 1);
      CUDNN_CHECK(cudnnConvolutionForward(cudnn_, &one, x_, src, w_, dev_w_[i].get(), conv_, a.algo, workspace_.get(),
                                          a.workspace, &zero, y_, dst));
      if (!c->bias.empty()) {
        CUDNN_CHECK(cudnnSetTensor4dDescriptor(b_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, c->filters, 1, 1));
        CUDNN_CHECK(cudnnAddTensor(cudnn_, &one, b_, dev_b_[i].get(), &one, y_, dst));
      }
      return dst;
    }
    if (auto* a = std::get_if<ActParams>(&l.op)) {
      const cudnnActivationMode_t mode = a->act == Act::relu ? CUDNN_ACTIVATION_RELU
                                         : a->act == Act::tanh ? CUDNN_ACTIVATION_TANH : CUDNN_ACTIVATION_SIGMOID;
      CUDNN_CHECK(cudnnSetActivationDescriptor(actd_, mode, CUDNN_NOT_PROPAGATE_NAN, 0.0));
      set4d(x_, n, l.in);
      CUDNN_CHECK(cudnnActivationForward(cudnn_, actd_, &one, x_, src, &zero, x_, const_cast<float*>(src)));
      return src;
    }
    if (auto* p = std::get_if<PoolParams>(&l.op)) {
      CUDNN_CHECK(cudnnSetPooling2dDescriptor(pool_, p->kind == PoolKind::max ? CUDNN_POOLING_MAX_DETERMINISTIC
                                                                               : CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING,
                                              CUDNN_NOT_PROPAGATE_NAN, p->kh, p->kw, p->ph, p->pw, p->sh, p->sw));
      set4d(x_, n, l.in);
      set4d(y_, n, l.out);
      CUDNN_CHECK(cudnnPoolingForward(cudnn_, pool_, &one, x_, src, &zero, y_, dst));
      return dst;
    }
    if (auto* r = std::get_if<LrnParams>(&l.op)) {
      CUDNN_CHECK(cudnnSetLRNDescriptor(lrn_, static_cast<unsigned>(r->size), r->alpha, r->beta, r->k));
      set4d(x_, n, l.in);
      CUDNN_CHECK(cudnnLRNCrossChannelForward(cudnn_, lrn_, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, x_, src, &zero, x_, dst));
      return dst;
    }
    if (std::holds_alternative<FlattenParams>(l.op)) return src;
    if (auto* f = std::get_if<FcParams>(&l.op)) {
      const int in = static_cast<int>(l.in.size());
      // Column-major view: out (O x N) = W^T... W row-major (O, I) is col-major (I, O); in row-major (N, I)
      // is col-major (I, N). out col-major (O, N) = op_T(W) (O, I) x in (I, N).
      CUBLAS_CHECK(cublasSgemm(cublas_, CUBLAS_OP_T, CUBLAS_OP_N, f->outputs, n, in, &one, dev_w_[i].get(), in, src, in,
                               &zero, dst, f->outputs));
      if (!f->bias.empty()) {
        CUDNN_CHECK(cudnnSetTensor4dDescriptor(b_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, f->outputs, 1, 1));
        set4d(y_, n, l.out);
        CUDNN_CHECK(cudnnAddTensor(cudnn_, &one, b_, dev_b_[i].get(), &one, y_, dst));
      }
      return dst;
    }
    // softmax
    set4d(x_, n, l.in);
    CUDNN_CHECK(cudnnSoftmaxForward(cudnn_, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_INSTANCE, &one, x_, src, &zero, x_, dst));
    return dst;
  }

  // cudnnFindConvolutionForwardAlgorithm runs every algorithm once per (layer, batch) and is cached.
  Algo find_algo(size_t layer, int n) {
    auto key = std::make_pair(layer, n);
    if (auto it = algo_cache_.find(key); it != algo_cache_.end()) {
      last_algo_[layer] = algo_name(it->second.algo);
      return it->second;
    }
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int found = 0;
    CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithm(cudnn_, x_, w_, conv_, y_, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, perf));
    for (int k = 0; k < found; ++k) {
      if (perf[k].status != CUDNN_STATUS_SUCCESS || perf[k].mathType != CUDNN_FMA_MATH) continue;
      Algo a{perf[k].algo, perf[k].memory};
      algo_cache_[key] = a;
      last_algo_[layer] = algo_name(a.algo);
      return a;
    }
    fail("layer '" + model_->layers[layer].name + "'", "cuDNN found no FP32 (FMA) convolution algorithm");
  }

  cudaStream_t stream_ = nullptr;
  cudnnHandle_t cudnn_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  cudnnTensorDescriptor_t x_, y_, b_;
  cudnnFilterDescriptor_t w_;
  cudnnConvolutionDescriptor_t conv_;
  cudnnPoolingDescriptor_t pool_;
  cudnnActivationDescriptor_t actd_;
  cudnnLRNDescriptor_t lrn_;
  const Model* model_ = nullptr;
  std::vector<DeviceBuffer<float>> dev_w_, dev_b_;  // (M, C/g, KH, KW) or (O, I); biases
  DeviceBuffer<float> in_, act_[2];
  DeviceBuffer<float> workspace_;
  std::map<std::pair<size_t, int>, Algo> algo_cache_;
  std::vector<std::string> last_algo_;
  std::vector<cudaEvent_t> events_;
};

}  // namespace

std::unique_ptr<Backend> make_cudnn_backend(const BackendOptions& opts) { return std::make_unique<CudnnBackend>(opts); }

}  // namespace bs
