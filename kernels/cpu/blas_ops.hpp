// The cpu backend's fast operators: convolution as im2col + OpenBLAS SGEMM (one image per OpenMP thread,
// OpenBLAS single-threaded inside) or, for small layers, a direct register-blocked kernel; fully connected as
// one SGEMM over the batch. Both add the bias and apply the activation that follows in their epilogue.
#pragma once
#include <cstdint>

#include "kernels/model/model.hpp"

namespace bs::blas {

// in (N, C, H, W), weight (M, C/groups, KH, KW), out (N, M, OH, OW). Layers with 6 or 16 filters, stride 1,
// no padding and one group (where the GEMM would be tiny) run a register-blocked direct convolution instead.
// act: the activation after the layer, applied to each image's output after its bias while it is still in cache (the
// plan fuses it; null: none).
bool conv_is_direct(const ConvParams& p);
void conv(const float* in, int n, Shape is, const ConvParams& p, Shape os, float* out, int threads, const Act* act = nullptr);
// in (N, I), weight (O, I), out (N, O); act as for conv.
void fc(const float* in, int n, int64_t inputs, const FcParams& p, float* out, int threads, const Act* act = nullptr);
// col ((C/groups)*KH*KW, OH*OW) for group g of one image (C, H, W); exposed for tests
void im2col(const float* img, Shape is, const ConvParams& p, Shape os, int g, float* col);

}  // namespace bs::blas
