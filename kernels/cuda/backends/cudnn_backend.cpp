// The cudnn backend, the library baseline: cuDNN convolution (algorithm chosen once per shape with
// cudnnFindConvolutionForwardAlgorithm, cached, FMA math so FP32 stays FP32; --cudnn-algos exact keeps to
// the GEMM and direct algorithms), cuBLAS SGEMM for fully
// connected layers, cuDNN pooling, activation, LRN and softmax. Same device-resident pipeline as cuda.
//
// Precisions: tf32 allows cuDNN's tensor-op math and cuBLAS's TF32 mode. fp16 / bf16 run the way PyTorch's
// half-precision channels-last does: every tensor between layers is a packed 16-bit NHWC tensor (cuDNN's
// tensor-core layout), the filters are (M, KH, KW, C/groups) 16-bit, convolutions use tensor-op math with FP32
// accumulation (cuDNN's pseudo-half configuration), fully connected layers cublasGemmEx with 16-bit operands and
// CUBLAS_COMPUTE_32F, and pooling, activation, LRN and softmax cuDNN's own 16-bit kernels. Weights (and biases)
// are converted once, at their first use; the FP32 input is converted on the device at the start of the first
// layer and the output back at the end of the last, inside their times, as the cuda backend does. fp16: an input
// beyond 65504 or an output that comes back inf or NaN stops the run (cuDNN's kernels give no per-layer flag; an
// overflow that matters reaches the output as inf or NaN).
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <map>

#include "kernels/exec/backend.hpp"
#include "kernels/cuda/check.hpp"
#include "kernels/cuda/backends/gpu_pipeline.hpp"
#include "kernels/cuda/half/half_ops.hpp"
#include "kernels/cuda/ops/ops.hpp"
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

// Output size rule shared by cuDNN and floor-mode pooling; ceil-mode pools that differ, and asymmetric padding, are not
// cuDNN's.
int floor_out(int in, int k, int s, int p) { return (in + 2 * p - k) / s + 1; }
// Whether cuDNN's pooling computes this layer: it has no ceil mode, so a ceil-mode pool whose output size differs
// from the floor rule runs on this project's pooling kernel instead (a second descriptor, named as such in the plan).
bool cudnn_pools(const Layer& l) {
  const PoolParams& p = std::get<PoolParams>(l.op);
  if (p.asymmetric()) return false;  // cuDNN's pooling descriptor pads symmetrically
  return floor_out(l.in.h, p.kh, p.sh, p.ph) == l.out.h && floor_out(l.in.w, p.kw, p.sw, p.pw) == l.out.w;
}

class CudnnBackend : public GpuPipelineBackend {
 public:
  explicit CudnnBackend(const BackendOptions& o) : GpuPipelineBackend(BackendKind::cudnn, o) {
    exact_ = o.cudnn_algos == CudnnAlgos::exact;
    tf32_ = o.precision == Precision::tf32;
    half_ = is_half(o.precision);
    bf16_ = o.precision == Precision::bf16;
    dtype_ = !half_ ? CUDNN_DATA_FLOAT : bf16_ ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_HALF;
    format_ = half_ ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
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
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&t_));
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&t32_));
    if (half_ && !bf16_) {  // fp16's flag, in mapped host memory: nothing to copy back
      CUDA_CHECK(cudaHostAlloc(&flag_host_, sizeof(int), cudaHostAllocMapped));
      CUDA_CHECK(cudaHostGetDevicePointer(&flag_dev_, flag_host_, 0));
    }
  }
  ~CudnnBackend() override {
    if (flag_host_) cudaFreeHost(flag_host_);
    for (cudaEvent_t e : lrn_ev_)
      if (e) cudaEventDestroy(e);
    cudnnDestroyTensorDescriptor(t32_);
    cudnnDestroyTensorDescriptor(t_);
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

  std::string describe(size_t i) const override {
    const Layer& l = model_->layers[i];
    if (l.kind() == LayerKind::conv) {
      const std::string algo = last_algo_[i].empty() ? "cudnnConvolutionForward" : "cuDNN " + last_algo_[i];
      return std::get<ConvParams>(l.op).asymmetric() ? algo + " on a zero-padded copy (asymmetric padding)" : algo;
    }
    if (l.kind() == LayerKind::fc) return half_ ? std::string("cublasGemmEx (") + (bf16_ ? "BF16" : "FP16") + ", FP32 accumulation)" : "cublasSgemm";
    if (l.kind() == LayerKind::lrn && !last_lrn_[i].empty()) return last_lrn_[i];
    return std::string("cuDNN ") + kind_name(l.kind());
  }

  void forward(const float* in, int n, size_t n_layers, float* out, RunStats* stats) override {
    if (flag_host_) *flag_host_ = 0;
    GpuPipelineBackend::forward(in, n, n_layers, out, stats);
    if (flag_host_ && *static_cast<volatile int*>(flag_host_))
      fail("cudnn", "--precision fp16: a value exceeds 65504, FP16's largest value (in the input, or an activation whose inf or "
                    "NaN reached the output; the cuda backend names the layer); bf16 keeps FP32's range");
  }

  // The algorithm cuDNN picked for each convolution at the last batch size: "<layer>=<ALGO>" entries.
  std::vector<std::string> notes() const override {
    std::vector<std::string> out;
    for (size_t i = 0; i < last_algo_.size(); ++i)
      if (!last_algo_[i].empty()) out.push_back(model_->layers[i].name + "=" + last_algo_[i]);
    return out;
  }

 protected:
  void after_load() override {
    last_algo_.assign(model_->layers.size(), "");
    last_lrn_.assign(model_->layers.size(), "");
    lrn_ways_.clear();
    hw_.clear();
    hw_.resize(model_->layers.size());
    hb_.clear();
    hb_.resize(model_->layers.size());
  }

  // Every tensor of the run: FP32 NCHW, or 16-bit packed NHWC.
  void set4d(cudnnTensorDescriptor_t d, int n, Shape s) { CUDNN_CHECK(cudnnSetTensor4dDescriptor(d, format_, dtype_, n, s.c, s.h, s.w)); }

  struct Algo {
    cudnnConvolutionFwdAlgo_t algo;
    size_t workspace;
    cudnnMathType_t math = CUDNN_FMA_MATH;
  };

  const float* run_layer(size_t i, const float* src, int n, float* dst, Shape& cur, const LayerWeights& lw) override {
    const Layer& l = model_->layers[i];
    cur = l.out;
    const float one = 1.0f, zero = 0.0f;
    if (half_ && i == 0) {  // the (N, C, H, W) input becomes 16-bit (N, H, W, C), inside the first layer's time
      half_in_.resize(static_cast<size_t>(model_->input.size()) * n);
      if (input16())  // --input-precision: already 16-bit values, only the layout changes
        cuda::half::input16_to_nhwc(reinterpret_cast<const uint16_t*>(src), n, model_->input, true, half_in_.get(), stream_);
      else
        cuda::half::to_half_packed(src, n, model_->input, half_in_.get(), bf16_, flag_dev_, stream_);
      src = reinterpret_cast<const float*>(half_in_.get());
    }
    const Shape stored = cur_->steps[i].stored_in;
    if (half_) out_phys_ = std::holds_alternative<FlattenParams>(l.op) ? stored : l.out;
    if (auto* c = std::get_if<ConvParams>(&l.op)) {
      set4d(x_, n, l.in);
      set4d(y_, n, l.out);
      CUDNN_CHECK(cudnnSetFilter4dDescriptor(w_, dtype_, format_, c->filters, l.in.c / c->groups, c->kh, c->kw));
      const bool asym = c->asymmetric();
      if (asym) src = padded_copy(src, n, l.in, *c);  // x_ now describes the padded copy
      CUDNN_CHECK(cudnnSetConvolution2dDescriptor(conv_, asym ? 0 : c->ph, asym ? 0 : c->pw, c->sh, c->sw, c->dh, c->dw,
                                                  CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
      CUDNN_CHECK(cudnnSetConvolutionGroupCount(conv_, c->groups));
      CUDNN_CHECK(cudnnSetConvolutionMathType(conv_, tf32_ || half_ ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH));
      const Algo a = find_algo(i, n);
      CUDNN_CHECK(cudnnSetConvolutionMathType(conv_, a.math));  // the math the algorithm was found with
      cudnn_ws_.resize(a.workspace / sizeof(float) + 1);
      // 16-bit: the filters (M, KH, KW, C/groups), an NHWC tensor of M images.
      const void* w = half_ ? static_cast<const void*>(half_weights(i, lw.w, c->filters, Shape{l.in.c / c->groups, c->kh, c->kw}, hw_)) : lw.w;
      CUDNN_CHECK(cudnnConvolutionForward(cudnn_, &one, x_, src, w_, w, conv_, a.algo, cudnn_ws_.get(), a.workspace, &zero, y_, dst));
      if (!c->bias.empty()) add_bias(i, lw.b, c->filters, n, l.out, dst);
      return dst;
    }
    if (auto* a = std::get_if<ActParams>(&l.op); a && a->act == Act::leaky_relu) {  // cuDNN has none: batchscope's kernel
      if (half_) cuda::half::act_half(reinterpret_cast<uint16_t*>(const_cast<float*>(src)), n, stored, *a, bf16_, stream_, true);
      else cuda::activation_forward(const_cast<float*>(src), static_cast<long long>(l.in.size()) * n, *a, stream_);
      return src;
    }
    if (auto* a = std::get_if<ActParams>(&l.op)) {
      const cudnnActivationMode_t mode = a->act == Act::relu ? CUDNN_ACTIVATION_RELU
                                         : a->act == Act::tanh ? CUDNN_ACTIVATION_TANH : CUDNN_ACTIVATION_SIGMOID;
      CUDNN_CHECK(cudnnSetActivationDescriptor(actd_, mode, CUDNN_NOT_PROPAGATE_NAN, 0.0));
      set4d(x_, n, half_ ? stored : l.in);  // elementwise: any layout of the same values
      CUDNN_CHECK(cudnnActivationForward(cudnn_, actd_, &one, x_, src, &zero, x_, const_cast<float*>(src)));
      return src;
    }
    if (auto* p = std::get_if<PoolParams>(&l.op); p && !cudnn_pools(l)) {  // ceil mode: batchscope's kernel
      if (half_) cuda::half::pool_half(reinterpret_cast<const uint16_t*>(src), n, l.in, *p, l.out, reinterpret_cast<uint16_t*>(dst), bf16_, stream_, true);
      else cuda::pool_forward(src, n, l.in, *p, l.out, dst, stream_);
      return dst;
    }
    if (auto* p = std::get_if<PoolParams>(&l.op)) {
      CUDNN_CHECK(cudnnSetPooling2dDescriptor(pool_, p->kind == PoolKind::max ? CUDNN_POOLING_MAX_DETERMINISTIC
                                                     : p->count_include_pad ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                                                            : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING,
                                              CUDNN_NOT_PROPAGATE_NAN, p->kh, p->kw, p->ph, p->pw, p->sh, p->sw));
      set4d(x_, n, l.in);
      set4d(y_, n, l.out);
      CUDNN_CHECK(cudnnPoolingForward(cudnn_, pool_, &one, x_, src, &zero, y_, dst));
      return dst;
    }
    if (auto* r = std::get_if<LrnParams>(&l.op)) {
      CUDNN_CHECK(cudnnSetLRNDescriptor(lrn_, static_cast<unsigned>(r->size), r->alpha, r->beta, r->k));
      set4d(x_, n, l.in);
      if (half_) return lrn_half(i, src, n, l.in, dst);
      CUDNN_CHECK(cudnnLRNCrossChannelForward(cudnn_, lrn_, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, x_, src, &zero, x_, dst));
      return dst;
    }
    if (std::holds_alternative<FlattenParams>(l.op)) return src;
    if (auto* f = std::get_if<FcParams>(&l.op)) {
      const int in = static_cast<int>(l.in.size());
      // Column-major view: out (O x N) = W^T... W row-major (O, I) is col-major (I, O); in row-major (N, I)
      // is col-major (I, N). out col-major (O, N) = op_T(W) (O, I) x in (I, N).
      if (half_) {
        // The input is the NHWC flattening of `stored`: the weights, (O, C*H*W) in the model's NCHW order, are
        // permuted to (O, H*W*C) as they are converted (an NHWC tensor of O images of shape `stored`).
        const void* w = half_weights(i, lw.w, f->outputs, stored, hw_);
        const cudaDataType_t t = bf16_ ? CUDA_R_16BF : CUDA_R_16F;
        CUBLAS_CHECK(cublasGemmEx(cublas_, CUBLAS_OP_T, CUBLAS_OP_N, f->outputs, n, in, &one, w, t, in, src, t, in, &zero, dst, t,
                                  f->outputs, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
      } else {
        CUBLAS_CHECK(cublasSgemm(cublas_, CUBLAS_OP_T, CUBLAS_OP_N, f->outputs, n, in, &one, lw.w, in, src, in, &zero, dst, f->outputs));
      }
      if (!f->bias.empty()) add_bias(i, lw.b, f->outputs, n, l.out, dst);
      return dst;
    }
    // softmax
    set4d(x_, n, half_ ? stored : l.in);
    CUDNN_CHECK(cudnnSoftmaxForward(cudnn_, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_INSTANCE, &one, x_, src, &zero, x_, dst));
    return dst;
  }

  // cuDNN's convolution descriptor pads symmetrically. An asymmetric padding (ONNX pads [top, left, bottom, right],
  // TensorFlow's SAME at an even kernel) runs as cuDNN's own copy of the input into a zeroed tensor of the padded size
  // in the workspace (cudnnTransformTensor into a strided view of its interior), convolved without padding. Points x_
  // at the copy and returns it.
  const float* padded_copy(const float* src, int n, Shape s, const Padding& p) {
    const Shape ps{s.c, s.h + p.ph + p.pad_bottom(), s.w + p.pw + p.pad_right()};
    const size_t elem = half_ ? 2 : 4;
    CUDA_CHECK(cudaMemsetAsync(ws_ptr_, 0, static_cast<size_t>(ps.size()) * n * elem, stream_));
    const long long plane = static_cast<long long>(ps.h) * ps.w;
    // The interior view: the input's dimensions at the padded tensor's strides, from element (0, 0, ph, pw).
    const int ns = static_cast<int>(plane * ps.c), cs = half_ ? 1 : static_cast<int>(plane), hs = half_ ? ps.w * ps.c : ps.w,
              ws = half_ ? ps.c : 1;
    CUDNN_CHECK(cudnnSetTensor4dDescriptorEx(t_, dtype_, n, s.c, s.h, s.w, ns, cs, hs, ws));
    char* interior = reinterpret_cast<char*>(ws_ptr_) + (static_cast<size_t>(p.ph) * hs + static_cast<size_t>(p.pw) * ws) * elem;
    const float one = 1.0f, zero = 0.0f;
    CUDNN_CHECK(cudnnTransformTensor(cudnn_, &one, x_, src, &zero, t_, interior));
    set4d(x_, n, ps);
    return ws_ptr_;
  }

  // y (N, C, H, W) += bias (C,), broadcast; 16-bit runs add a 16-bit copy of the bias.
  void add_bias(size_t i, const float* b, int c, int n, Shape out, float* y) {
    const float one = 1.0f;
    const void* bias = half_ ? static_cast<const void*>(half_weights(i, b, 1, Shape{c, 1, 1}, hb_)) : b;
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(b_, format_, dtype_, 1, c, 1, 1));
    set4d(y_, n, out);
    CUDNN_CHECK(cudnnAddTensor(cudnn_, &one, b_, bias, &one, y_, y));
  }

  // Layer i's FP32 weights w, seen as `images` NCHW tensors of `shape`, as 16-bit NHWC in store[i]: converted once.
  const uint16_t* half_weights(size_t i, const float* w, int images, Shape shape, std::vector<DeviceBuffer<uint16_t>>& store) {
    const size_t count = static_cast<size_t>(images) * shape.size();
    if (store[i].size() < count) {
      store[i].resize(count);
      cuda::half::to_half_packed(w, images, shape, store[i].get(), bf16_, nullptr, stream_);
    }
    return store[i].get();
  }

  // 16-bit LRN across channels. cuDNN's LRN reads FP16 in either layout but, on the H100, slowly in NHWC (14.6 ms
  // for AlexNet's norm1 at batch 1024, against 1.2 ms for FP32 NCHW), and refuses BF16. So, as cudnnFind does for
  // convolutions, the first run of each (layer, batch) times every way that works (its second run: the first loads
  // the kernels) and keeps the fastest:
  //   nhwc   cuDNN's LRN on the NHWC tensor itself (fp16)
  //   nchw   cudnnTransformTensor to NCHW, the LRN, and back (fp16)
  //   fp32   to 16-bit NCHW (cudnnTransformTensor), widened to FP32, cuDNN's FP32 LRN, and back (fp16, bf16)
  // x_ describes the NHWC tensor; the workspace holds the detours' NCHW copies.
  enum class LrnWay { nhwc, nchw, fp32 };
  static const char* lrn_way_name(LrnWay w) {
    return w == LrnWay::nhwc ? "cuDNN lrn (NHWC)" : w == LrnWay::nchw ? "cuDNN lrn (NHWC -> NCHW -> NHWC by cudnnTransformTensor)"
                                                                       : "cuDNN lrn in FP32 (NHWC -> NCHW -> FP32 -> back)";
  }
  cudnnStatus_t lrn_way(LrnWay way, const float* src, int n, Shape s, float* dst) {
    const float one = 1.0f, zero = 0.0f;
    if (way == LrnWay::nhwc) return cudnnLRNCrossChannelForward(cudnn_, lrn_, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, x_, src, &zero, x_, dst);
    const size_t count = static_cast<size_t>(s.size()) * n;
    if (way == LrnWay::nchw) {
      auto* a = reinterpret_cast<uint16_t*>(ws_ptr_);
      CUDNN_CHECK(cudnnSetTensor4dDescriptor(t_, CUDNN_TENSOR_NCHW, dtype_, n, s.c, s.h, s.w));
      CUDNN_CHECK(cudnnTransformTensor(cudnn_, &one, x_, src, &zero, t_, a));
      const cudnnStatus_t st = cudnnLRNCrossChannelForward(cudnn_, lrn_, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, t_, a, &zero, t_, a + count);
      if (st == CUDNN_STATUS_SUCCESS) CUDNN_CHECK(cudnnTransformTensor(cudnn_, &one, t_, a + count, &zero, x_, dst));
      return st;
    }
    // fp32: the 16-bit NCHW copy as above, widened to FP32 in order (a flat tensor: contiguous reads and writes),
    // cuDNN's FP32 LRN, narrowed back, and transformed to NHWC.
    auto* a16 = reinterpret_cast<uint16_t*>(ws_ptr_);                 // count 16-bit values
    float* a32 = ws_ptr_ + (count + 1) / 2;                           // count floats
    float* b32 = a32 + count;                                         // count floats
    const Shape flat{1, 1, static_cast<int>(s.size())};  // n flat images
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(t_, CUDNN_TENSOR_NCHW, dtype_, n, s.c, s.h, s.w));
    CUDNN_CHECK(cudnnTransformTensor(cudnn_, &one, x_, src, &zero, t_, a16));
    cuda::half::from_half_packed(a16, n, flat, a32, bf16_, nullptr, stream_);
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(t32_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, s.c, s.h, s.w));
    const cudnnStatus_t st = cudnnLRNCrossChannelForward(cudnn_, lrn_, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, t32_, a32, &zero, t32_, b32);
    if (st != CUDNN_STATUS_SUCCESS) return st;
    cuda::half::to_half_packed(b32, n, flat, a16, bf16_, flag_dev_, stream_);
    CUDNN_CHECK(cudnnTransformTensor(cudnn_, &one, t_, a16, &zero, x_, dst));
    return st;
  }
  const float* lrn_half(size_t i, const float* src, int n, Shape s, float* dst) {
    const auto key = std::make_pair(i, n);
    if (auto it = lrn_ways_.find(key); it != lrn_ways_.end()) {
      CUDNN_CHECK(lrn_way(it->second, src, n, s, dst));
      last_lrn_[i] = lrn_way_name(it->second);
      return dst;
    }
    if (!lrn_ev_[0]) for (auto& e : lrn_ev_) CUDA_CHECK(cudaEventCreate(&e));
    float best_ms = 0.0f;
    bool found = false;
    for (LrnWay way : {LrnWay::nhwc, LrnWay::nchw, LrnWay::fp32}) {
      // Once untimed: a kernel's first launch loads its module (lazy loading), which would decide the race.
      const cudnnStatus_t first = lrn_way(way, src, n, s, dst);
      if (first == CUDNN_STATUS_NOT_SUPPORTED || first == CUDNN_STATUS_BAD_PARAM) continue;
      CUDNN_CHECK(first);
      CUDA_CHECK(cudaEventRecord(lrn_ev_[0], stream_));
      const cudnnStatus_t st = lrn_way(way, src, n, s, dst);
      CUDNN_CHECK(st);
      CUDA_CHECK(cudaEventRecord(lrn_ev_[1], stream_));
      CUDA_CHECK(cudaEventSynchronize(lrn_ev_[1]));
      float ms = 0.0f;
      CUDA_CHECK(cudaEventElapsedTime(&ms, lrn_ev_[0], lrn_ev_[1]));
      if (!found || ms < best_ms) { best_ms = ms; lrn_ways_[key] = way; found = true; }
    }
    if (!found) fail("layer '" + model_->layers[i].name + "'", "cuDNN ran its LRN in no layout or precision");
    CUDNN_CHECK(lrn_way(lrn_ways_[key], src, n, s, dst));  // the chosen way's output, whatever ran last
    last_lrn_[i] = lrn_way_name(lrn_ways_[key]);
    return dst;
  }

  // After the last layer (inside its time): 16-bit NHWC back to the FP32 NCHW the caller reads.
  const float* finish_output(const float* src, Shape, int n, float* spare) override {
    if (!half_) return src;
    cuda::half::from_half_packed(reinterpret_cast<const uint16_t*>(src), n, out_phys_, spare, bf16_, flag_dev_, stream_);
    return spare;
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
      if (perf[k].status != CUDNN_STATUS_SUCCESS || (!tf32_ && !half_ && perf[k].mathType != CUDNN_FMA_MATH)) continue;
      if (exact_ && !exact_algo(perf[k].algo)) continue;
      Algo a{perf[k].algo, perf[k].memory, perf[k].mathType};
      algo_cache_[key] = a;
      last_algo_[layer] = algo_name(a.algo) + std::string(a.math == CUDNN_FMA_MATH ? "" : " (tensor-op math)");
      return a;
    }
    fail("layer '" + model_->layers[layer].name + "'",
         std::string(tf32_ || half_ ? "cuDNN found no convolution algorithm" : "cuDNN found no FP32 (FMA) convolution algorithm") +
             (exact_ ? " among the GEMM and direct ones" : ""));
  }

  static bool exact_algo(cudnnConvolutionFwdAlgo_t a) {
    return a == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM || a == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM ||
           a == CUDNN_CONVOLUTION_FWD_ALGO_GEMM || a == CUDNN_CONVOLUTION_FWD_ALGO_DIRECT;
  }

  bool exact_ = false, tf32_ = false, half_ = false, bf16_ = false;
  cudnnDataType_t dtype_ = CUDNN_DATA_FLOAT;
  cudnnTensorFormat_t format_ = CUDNN_TENSOR_NCHW;
  // fp16 / bf16
  Shape out_phys_;                                // the stored shape of the last layer run's output
  std::vector<DeviceBuffer<uint16_t>> hw_, hb_;  // per layer: 16-bit weights and bias, converted at first use
  DeviceBuffer<uint16_t> half_in_;                // the input as 16-bit (N, H, W, C)
  std::map<std::pair<size_t, int>, LrnWay> lrn_ways_;  // (layer, batch): the fastest way found
  std::vector<std::string> last_lrn_;
  cudaEvent_t lrn_ev_[2] = {nullptr, nullptr};
  cudnnTensorDescriptor_t t_, t32_;               // the NCHW views of the LRN detours (16-bit, FP32)
  int* flag_host_ = nullptr;                      // fp16: raised by an input beyond 65504 or a non-finite output
  int* flag_dev_ = nullptr;
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

// The library calls each layer kind makes, as registry descriptors: the convolution's two algorithm policies, and one
// call for every other kind. With fp16 / bf16 every tensor is packed 16-bit NHWC and the weights are converted at their
// first use (prepared).
void register_cudnn_impls(Registry& r) {
  const std::vector<Precision> all = {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16};
  auto add = [&](LayerKind op, const char* name, const char* summary, std::function<Support(const Layer&, const Epilogue&)> supports = nullptr) {
    Impl i;
    i.op = op;
    i.backend = BackendKind::cudnn;
    i.name = name;
    i.summary = summary;
    i.math = "library";
    i.precisions = all;
    i.supports = std::move(supports);
    i.dilation = op == LayerKind::conv;  // cuDNN's convolution descriptor takes the dilation
    if (op == LayerKind::conv || op == LayerKind::fc)  // 16-bit copies of the weights
      i.prepared_floats = [](const Layer& l, Shape, Precision p) { return is_half(p) ? static_cast<size_t>(l.weight_count() + 1) / 2 + 1 : 0; };
    if (op == LayerKind::conv)  // an asymmetrically padded input's zero-padded copy (padded_copy)
      i.workspace_floats = [](const Layer& l, Shape, int n, Precision p) -> size_t {
        const ConvParams& c = std::get<ConvParams>(l.op);
        if (!c.asymmetric()) return 0;
        const size_t count = static_cast<size_t>(l.in.c) * (l.in.h + c.ph + c.pad_bottom()) * (l.in.w + c.pw + c.pad_right()) * n;
        return is_half(p) ? (count + 1) / 2 : count;
      };
    if (op == LayerKind::lrn)  // 16-bit LRN's detours (lrn_half): a 16-bit and two FP32 NCHW copies at most
      i.workspace_floats = [](const Layer& l, Shape, int n, Precision p) { return is_half(p) ? 3 * static_cast<size_t>(l.in.size()) * n : 0; };
    r.add(std::move(i));
  };
  add(LayerKind::conv, "fastest", "cuDNN's fastest FP32 (FMA-math) algorithm, FFT and Winograd included (their rounding differs: up to "
                                  "8e-4 relative measured on AlexNet conv2)");
  add(LayerKind::conv, "exact", "only the GEMM and direct algorithms, which agree with cpu-ref to FP32 rounding");
  add(LayerKind::fc, "cuBLAS GEMM", "cublasSgemm (fp32, tf32 math with tf32), cublasGemmEx with 16-bit operands and FP32 compute");
  add(LayerKind::act, "cudnnActivationForward", "cuDNN activation, in place", [](const Layer& l, const Epilogue&) {
    if (std::get<ActParams>(l.op).act == Act::leaky_relu) return Support{false, "cuDNN's activations have no leaky ReLU"};
    return Support{};
  });
  add(LayerKind::act, "batchscope activation", "not cuDNN: this project's activation kernel (FP32 NCHW or 16-bit NHWC), for "
      "the leaky ReLU cuDNN lacks", [](const Layer& l, const Epilogue&) {
    return std::get<ActParams>(l.op).act != Act::leaky_relu ? Support{false, "cuDNN computes this activation"} : Support{};
  });
  add(LayerKind::pool, "cudnnPoolingForward", "cuDNN pooling", [](const Layer& l, const Epilogue&) {
    if (std::get<PoolParams>(l.op).asymmetric()) return Support{false, "cuDNN's pooling descriptor pads symmetrically"};
    if (!cudnn_pools(l)) return Support{false, "cuDNN pooling has no ceil mode, and this layer's ceil-mode output size differs"};
    return Support{};
  });
  add(LayerKind::pool, "batchscope pooling", "not cuDNN: this project's pooling kernel (FP32 NCHW or 16-bit NHWC), for the "
      "ceil-mode and asymmetrically padded pools cuDNN cannot compute", [](const Layer& l, const Epilogue&) {
    return cudnn_pools(l) ? Support{false, "cuDNN pools this layer"} : Support{};
  });
  add(LayerKind::lrn, "cudnnLRNCrossChannelForward", "cuDNN LRN (16-bit: the fastest of three ways, timed at first use)",
      [](const Layer& l, const Epilogue&) {
        const LrnParams& p = std::get<LrnParams>(l.op);
        return p.size < 1 || p.size > 16 ? Support{false, "cuDNN LRN supports window sizes 1 to 16"} : Support{};
      });
  add(LayerKind::flatten, "no-op", "the next layer reads the tensor as it is");
  add(LayerKind::softmax, "cudnnSoftmaxForward", "cuDNN softmax (accurate, per image)");
}

}  // namespace bs
