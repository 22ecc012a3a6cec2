// The cuda backend's typed launchers, as the registry's descriptors carry them (kernels/plan/registry.hpp: Impl::hooks).
// One set per kernel family: a family's functions take the version number, so one set serves all its versions. The
// backend launches a layer as impl.hooks->conv_forward(impl.number, args, stream), never through a switch of its own.
#pragma once
#include <cuda_runtime.h>

#include "kernels/cuda/half/half_ops.hpp"
#include "kernels/cuda/ops/conv.hpp"
#include "kernels/cuda/ops/ops.hpp"
#include "kernels/plan/registry.hpp"

namespace bs {

struct ImplHooks {
  // Convolution on FP32 NCHW tensors. prepare: the weights in the layout the version reads (Impl::prepared_floats).
  void (*conv_prepare)(int version, const cuda::ConvArgs& a, float* prepared, cudaStream_t s) = nullptr;
  void (*conv_forward)(int version, const cuda::ConvArgs& a, cudaStream_t s) = nullptr;
  // Convolution on 16-bit NHWC tensors (--precision fp16 / bf16).
  void (*half_conv_prepare)(int version, const float* w, const Layer& layer, bool bf16, float* prepared, cudaStream_t s) = nullptr;
  void (*half_conv_forward)(int version, const cuda::half::HalfConvArgs& a, cudaStream_t s) = nullptr;
  // Whether the version reads the model's input itself when the layer comes first (v22 on conv1's shape).
  bool (*half_reads_model_input)(int version, const Layer& layer) = nullptr;
  // Fully connected on FP32 (N, I) inputs.
  void (*fc_prepare)(int version, const float* w, int inputs, int outputs, float* prepared, cudaStream_t s) = nullptr;
  void (*fc_forward)(int version, const cuda::FcArgs& a, cudaStream_t s) = nullptr;
  // Fully connected on 16-bit inputs (the stored NHWC tensor flattened).
  void (*half_fc_prepare)(const float* w, Shape is, int outputs, bool bf16, float* prepared, cudaStream_t s) = nullptr;
  void (*half_fc_forward)(int version, const cuda::half::HalfFcArgs& a, cudaStream_t s) = nullptr;
};

// A cuda descriptor with what every version says (its op, number, name, summary and launchers); the caller sets the rest.
inline Impl cuda_impl(LayerKind op, int number, std::string name, std::string summary, const ImplHooks* hooks) {
  Impl i;
  i.op = op;
  i.backend = BackendKind::cuda;
  i.number = number;
  i.name = std::move(name);
  i.summary = std::move(summary);
  i.hooks = hooks;
  return i;
}

// Per kernel file: its descriptors (called by register_cuda_impls, kernels/cuda/impls.cpp).
namespace cuda {
void register_conv_basic(Registry& r);      // ops/conv_basic.cu: v1, v2, v4, v5, v6
void register_conv_const(Registry& r);      // ops/conv_const.cu: v3, v7, v8
void register_conv_tiled(Registry& r);      // ops/conv_tiled_spec.cu: v9, v10
void register_conv_tc(Registry& r);         // ops/conv_tc.cu: v11
void register_conv_engine(Registry& r);     // engine/conv_gemm.cu: v12-v18
void register_conv_half(Registry& r);       // half/conv_half.cu: v19-v21
void register_conv_spec_half(Registry& r);  // half/conv_spec_half.cu: v22
void register_conv_wgmma(Registry& r);      // engine/conv_wgmma.cu: v23-v36
void register_conv_direct_half(Registry& r);  // half/conv_direct_half.cu: v37
void register_conv_s2d_half(Registry& r);     // half/conv_s2d_half.cu: v38
void register_conv_wgmma_half(Registry& r);   // half/conv_wgmma_half.cu: v39-v47
void register_conv_wgmma_3xf16(Registry& r);  // engine/conv_wgmma_3xf16.cu: v51-v56, v62, v63
void register_conv_tc_f16(Registry& r);     // ops/conv_tc_f16.cu: v57
void register_conv_band_half(Registry& r);  // half/conv_band_half.cu: v58
void register_conv_band_3xf16(Registry& r);  // ops/conv_band_3xf16.cu: v59
void register_fc_stream_half(Registry& r);    // half/fc_stream_half.cu: fc v14
void register_fc_stream_int8(Registry& r);    // half/fc_stream_int8.cu: fc v15
void register_fc_stream_mma_half(Registry& r);  // half/fc_stream_half.cu: fc v17
void register_fc_basic(Registry& r);        // ops/ops.cu: fc v1-v4, and the one kernel of each other layer kind
void register_fc_engine(Registry& r);       // engine/fc_gemm.cu: fc v5-v11
void register_fc_half(Registry& r);         // half/fc_half.cu: fc v12-v13
void register_fc_wgmma_3xf16(Registry& r);  // engine/conv_wgmma_3xf16.cu: fc v18, v19
void register_fc_stream_tf32(Registry& r);  // engine/fc_stream_tf32.cu: fc v20
}  // namespace cuda

}  // namespace bs
