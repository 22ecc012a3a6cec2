// The cuda backend's implementations: every kernel file's descriptors (impl_hooks.hpp), in menu order.
#include "kernels/cuda/impl_hooks.hpp"

namespace bs {

void register_cuda_impls(Registry& r) {
  cuda::register_conv_basic(r);
  cuda::register_conv_const(r);
  cuda::register_conv_tiled(r);
  cuda::register_conv_tc(r);
  cuda::register_conv_engine(r);
  cuda::register_conv_half(r);
  cuda::register_conv_spec_half(r);
  cuda::register_conv_wgmma(r);
  cuda::register_conv_direct_half(r);
  cuda::register_conv_s2d_half(r);
  cuda::register_conv_wgmma_half(r);
  cuda::register_conv_wgmma_3xf16(r);
  cuda::register_conv_tc_f16(r);
  cuda::register_conv_band_half(r);
  cuda::register_conv_band_3xf16(r);
  cuda::register_fc_basic(r);
  cuda::register_fc_engine(r);
  cuda::register_fc_half(r);
  cuda::register_fc_stream_half(r);
  cuda::register_fc_stream_int8(r);
  cuda::register_fc_stream_mma_half(r);
  cuda::register_fc_wgmma_3xf16(r);
  cuda::register_fc_stream_tf32(r);
}

}  // namespace bs
