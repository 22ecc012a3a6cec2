// The reference operators: plain loops over NCHW activations, double accumulators, nothing clever.
// This is the oracle every other backend is tested against, so each function reads like its definition.
#pragma once
#include <cstdint>

#include "kernels/model/model.hpp"

namespace bs::ref {

// in (N, C, H, W), weight (M, C/groups, KH, KW), out (N, M, OH, OW)
void conv(const float* in, int n, Shape is, const ConvParams& p, Shape os, float* out);
// in-place on `count` values
void activation(float* x, int64_t count, Act act, float alpha = 0.01f);  // alpha: leaky_relu's slope below 0
// in (N, C, H, W) -> out (N, C, OH, OW); padded positions are ignored by max, counted by avg (Caffe)
void pool(const float* in, int n, Shape is, const PoolParams& p, Shape os, float* out);
// across channels, Caffe's convention; in and out (N, C, H, W)
void lrn(const float* in, int n, Shape s, const LrnParams& p, float* out);
// in (N, I), weight (O, I), out (N, O)
void fc(const float* in, int n, int64_t inputs, const FcParams& p, float* out);
// over the features of each image; in and out (N, F)
void softmax(const float* in, int n, int64_t features, float* out);

}  // namespace bs::ref
