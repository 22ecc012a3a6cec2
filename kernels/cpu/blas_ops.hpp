// The cpu backend's fast operators: convolution as im2col + OpenBLAS SGEMM (one image per OpenMP thread,
// OpenBLAS single-threaded inside), fully connected as one multi-threaded SGEMM over the batch.
#pragma once
#include <cstdint>

#include "kernels/model.hpp"

namespace bs::blas {

// in (N, C, H, W), weight (M, C/groups, KH, KW), out (N, M, OH, OW)
void conv(const float* in, int n, Shape is, const ConvParams& p, Shape os, float* out, int threads);
// in (N, I), weight (O, I), out (N, O)
void fc(const float* in, int n, int64_t inputs, const FcParams& p, float* out, int threads);
// col ((C/groups)*KH*KW, OH*OW) for group g of one image (C, H, W); exposed for tests
void im2col(const float* img, Shape is, const ConvParams& p, Shape os, int g, float* col);

}  // namespace bs::blas
