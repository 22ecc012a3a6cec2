// How conv v22 and v58 launch ECE 408's conv1 for what its input is: the model's FP32 NCHW input (as the first layer),
// the 16-bit NCHW input (the first layer with --input-precision fp16 / bf16), or a 16-bit NHWC tensor whose pixels are
// (value, pad channel) words (after another layer).
#pragma once
#include <cstdint>
#include <type_traits>

#include "kernels/cuda/half/half_ops.hpp"

namespace bs::cuda::half {

// What a conv1 kernel's staged words hold: FP32 values, (value, 0) pairs of a 16-bit NHWC tensor, or 16-bit values.
enum Conv1In { kF32, kW32, kH16 };

// launch(in, mode, pool): in the input's words; mode (std::integral_constant<int, Conv1In>) and pool (std::bool_constant,
// whether the 2x2 max pool is fused) as types, for the kernel's template arguments.
template <class Launch>
void dispatch_conv1_input(const HalfConvArgs& a, Launch&& launch) {
  auto with_pool = [&](const void* in, auto mode) {
    const auto* words = static_cast<const uint32_t*>(in);
    if (a.pool) launch(words, mode, std::true_type{});
    else launch(words, mode, std::false_type{});
  };
  if (a.in_f32) with_pool(a.in_f32, std::integral_constant<int, kF32>{});
  else if (a.in_nchw16) with_pool(a.in_nchw16, std::integral_constant<int, kH16>{});
  else with_pool(a.in, std::integral_constant<int, kW32>{});
}

}  // namespace bs::cuda::half
