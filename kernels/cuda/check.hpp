// One error core for CUDA, cuDNN, cuBLAS and CUPTI calls: every failing call throws bs::Error naming the
// source location, the call and the library's own message. Launches are followed by CUDA_CHECK_LAUNCH().
#pragma once
#include <string>

namespace bs {

[[noreturn]] void gpu_fail(const char* lib, const char* call, const char* file, int line, const std::string& msg);

}  // namespace bs

#define BS_GPU_CHECK(lib, call, ok_expr, msg_expr)                                   \
  do {                                                                              \
    auto bs_status_ = (call);                                                       \
    if (!(ok_expr)) ::bs::gpu_fail(lib, #call, __FILE__, __LINE__, (msg_expr));     \
  } while (0)

#define CUDA_CHECK(call) BS_GPU_CHECK("CUDA", call, bs_status_ == cudaSuccess, cudaGetErrorString(bs_status_))
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
#define CUDNN_CHECK(call) \
  BS_GPU_CHECK("cuDNN", call, bs_status_ == CUDNN_STATUS_SUCCESS, cudnnGetErrorString(bs_status_))
#define CUBLAS_CHECK(call) \
  BS_GPU_CHECK("cuBLAS", call, bs_status_ == CUBLAS_STATUS_SUCCESS, cublasGetStatusString(bs_status_))
#define CUPTI_CHECK(call)                                                             \
  BS_GPU_CHECK("CUPTI", call, bs_status_ == CUPTI_SUCCESS, [&] {                      \
    const char* s_ = nullptr;                                                       \
    cuptiGetResultString(bs_status_, &s_);                                          \
    return std::string(s_ ? s_ : "unknown CUPTI error");                            \
  }())
