// The cudnn backend, the library baseline: cuDNN convolution (algorithm chosen once per shape with
// cudnnFindConvolutionForwardAlgorithm, cached, FMA math so FP32 stays FP32; --cudnn-algos exact keeps to
// the GEMM and direct algorithms), cuBLAS SGEMM for fully
// connected layers, cuDNN pooling, activation, LRN and softmax. Same device-resident pipeline as cuda.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <map>

#include "kernels/backend.hpp"
#include "kernels/cuda/check.hpp"
#include "kernels/cuda/gpu_pipeline.hpp"
#include "kernels/menus.hpp"
#include "weights_tools/error.hpp"

namespace bs {
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

class CudnnBackend : public GpuPipelineBackend {
 public:
  explicit CudnnBackend(const BackendOptions& o) : GpuPipelineBackend(o, "cudnn") {
    if (o.cudnn_algos != "fastest" && o.cudnn_algos != "exact")
      fail("--cudnn-algos", "expected fastest or exact, found '" + o.cudnn_algos + "'");
    exact_ = o.cudnn_algos == "exact";
    check_precision(o.precision);
    if (is_half_precision(o.precision))
      fail("--precision", o.precision + " runs on the cuda backend; the cudnn backend runs fp32 and tf32 (its half-precision "
                                        "path is not implemented yet)");
    tf32_ = o.precision == "tf32";
    CUDNN_CHECK(cudnnCreate(&cudnn_));
    CUDNN_CHECK(cudnnSetStream(cudnn_, stream_));
    CUBLAS_CHECK(cublasCreate(&cublas_));
    CUBLAS_CHECK(cublasSetStream(cublas_, stream_));
    // fp32: FP32, no TF32. tf32: cuBLAS's TF32 tensor-core math, as PyTorch's allow_tf32 sets it.
    CUBLAS_CHECK(cublasSetMathMode(cublas_, tf32_ ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
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

  // The algorithm cuDNN picked for each convolution at the last batch size: "<layer>=<ALGO>" entries.
  std::vector<std::string> notes() const override {
    std::vector<std::string> out;
    for (size_t i = 0; i < last_algo_.size(); ++i)
      if (!last_algo_[i].empty()) out.push_back(model_->layers[i].name + "=" + last_algo_[i]);
    return out;
  }

 protected:
  void after_load() override { last_algo_.assign(model_->layers.size(), ""); }

  void set4d(cudnnTensorDescriptor_t d, int n, Shape s) {
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, s.c, s.h, s.w));
  }

  struct Algo {
    cudnnConvolutionFwdAlgo_t algo;
    size_t workspace;
    cudnnMathType_t math = CUDNN_FMA_MATH;
  };

  const float* run_layer(size_t i, const float* src, int n, float* dst, Shape& cur, const LayerWeights& lw) override {
    const Layer& l = model_->layers[i];
    cur = l.out;
    const float one = 1.0f, zero = 0.0f;
    if (auto* c = std::get_if<ConvParams>(&l.op)) {
      set4d(x_, n, l.in);
      set4d(y_, n, l.out);
      CUDNN_CHECK(cudnnSetFilter4dDescriptor(w_, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, c->filters, l.in.c / c->groups, c->kh, c->kw));
      CUDNN_CHECK(cudnnSetConvolution2dDescriptor(conv_, c->ph, c->pw, c->sh, c->sw, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
      CUDNN_CHECK(cudnnSetConvolutionGroupCount(conv_, c->groups));
      CUDNN_CHECK(cudnnSetConvolutionMathType(conv_, tf32_ ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH));
      const Algo a = find_algo(i, n);
      CUDNN_CHECK(cudnnSetConvolutionMathType(conv_, a.math));  // the math the algorithm was found with
      cudnn_ws_.resize(a.workspace / sizeof(float) + 1);
      CUDNN_CHECK(cudnnConvolutionForward(cudnn_, &one, x_, src, w_, lw.w, conv_, a.algo, cudnn_ws_.get(),
                                          a.workspace, &zero, y_, dst));
      if (!c->bias.empty()) {
        CUDNN_CHECK(cudnnSetTensor4dDescriptor(b_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, c->filters, 1, 1));
        CUDNN_CHECK(cudnnAddTensor(cudnn_, &one, b_, lw.b, &one, y_, dst));
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
      CUBLAS_CHECK(cublasSgemm(cublas_, CUBLAS_OP_T, CUBLAS_OP_N, f->outputs, n, in, &one, lw.w, in, src, in,
                               &zero, dst, f->outputs));
      if (!f->bias.empty()) {
        CUDNN_CHECK(cudnnSetTensor4dDescriptor(b_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, f->outputs, 1, 1));
        set4d(y_, n, l.out);
        CUDNN_CHECK(cudnnAddTensor(cudnn_, &one, b_, lw.b, &one, y_, dst));
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
      last_algo_[layer] = algo_name(it->second.algo) + std::string(it->second.math == CUDNN_FMA_MATH ? "" : " (tensor-op math)");
      return it->second;
    }
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int found = 0;
    CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithm(cudnn_, x_, w_, conv_, y_, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, perf));
    for (int k = 0; k < found; ++k) {
      if (perf[k].status != CUDNN_STATUS_SUCCESS || (!tf32_ && perf[k].mathType != CUDNN_FMA_MATH)) continue;
      if (exact_ && !exact_algo(perf[k].algo)) continue;
      Algo a{perf[k].algo, perf[k].memory, perf[k].mathType};
      algo_cache_[key] = a;
      last_algo_[layer] = algo_name(a.algo) + std::string(a.math == CUDNN_FMA_MATH ? "" : " (tensor-op math)");
      return a;
    }
    fail("layer '" + model_->layers[layer].name + "'",
         std::string(tf32_ ? "cuDNN found no convolution algorithm" : "cuDNN found no FP32 (FMA) convolution algorithm") +
             (exact_ ? " among the GEMM and direct ones" : ""));
  }

  static bool exact_algo(cudnnConvolutionFwdAlgo_t a) {
    return a == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM || a == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM ||
           a == CUDNN_CONVOLUTION_FWD_ALGO_GEMM || a == CUDNN_CONVOLUTION_FWD_ALGO_DIRECT;
  }

  bool exact_ = false, tf32_ = false;
  cudnnHandle_t cudnn_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  cudnnTensorDescriptor_t x_, y_, b_;
  cudnnFilterDescriptor_t w_;
  cudnnConvolutionDescriptor_t conv_;
  cudnnPoolingDescriptor_t pool_;
  cudnnActivationDescriptor_t actd_;
  cudnnLRNDescriptor_t lrn_;
  DeviceBuffer<float> cudnn_ws_;  // grows to the largest algorithm workspace asked for
  std::map<std::pair<size_t, int>, Algo> algo_cache_;
  std::vector<std::string> last_algo_;
};

}  // namespace

std::unique_ptr<Backend> make_cudnn_backend(const BackendOptions& opts) { return std::make_unique<CudnnBackend>(opts); }

}  // namespace bs
