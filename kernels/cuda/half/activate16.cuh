// The activation of an epilogue whose output is 16 bits (fp16, bf16): tanh and the sigmoid on the special-function
// unit, ReLU as everywhere.
//
// Why: an fp16 value keeps 11 significant bits, so tanhf's 2 ulp of FP32 buy nothing once the result is rounded to
// one. tanhf is about 17 instructions (a polynomial below 0.6, else 1 - 2 / (e^2x + 1) with EX2 and RCP and their range
// fix-ups), tanh.approx.f32 one MUFU.TANH; expf and an IEEE division for the sigmoid are about 25 with a slow path,
// __expf and __fdividef four. In v22's ECE 408 kernels the tanh was a quarter to a third of the instructions issued
// (experiments/ece408-gpu.md, "16-bit activations on the special-function unit").
//
// Accuracy, before the 16-bit rounding: tanh.approx.f32 is within a relative 2^-10.987 of tanh (PTX ISA), so an
// fp16 result is within that plus half an ulp of the exact tanh: at most 1.5 ulp, about 0.5 ulp more than tanhf's;
// bf16 keeps 8 bits, where it is a sixteenth of an ulp. The sigmoid's __expf is within 2 + 1.16 |x| FP32 ulp and
// __fdividef within 2 (x up to 88; beyond, e^-x overflows and 1 / inf = 0, the sigmoid's limit). The GPU tests check
// both on every finite fp16 and bf16 input (GpuHalfActivations). FP32 outputs keep tanhf and expf (epilogue.cuh).
#pragma once
#include <cuda_runtime.h>

#include "kernels/cuda/engine/epilogue.cuh"

namespace bs::cuda {

__device__ __forceinline__ float tanh16(float v) {
  float r;
  asm("tanh.approx.f32 %0, %1;" : "=f"(r) : "f"(v));
  return r;
}
__device__ __forceinline__ float sigmoid16(float v) { return __fdividef(1.0f, 1.0f + __expf(-v)); }

// activate's codes: 0 ReLU, 1 tanh, 2 sigmoid.
__device__ __forceinline__ float activate16(float v, int act) {
  return act == 0 ? fmaxf(v, 0.0f) : act == 1 ? tanh16(v) : sigmoid16(v);
}
// -1: none.
__device__ __forceinline__ float activate16_or_keep(float v, int act) { return act < 0 ? v : activate16(v, act); }
// 3: leaky ReLU of slope alpha below zero (the activation kernels).
__device__ __forceinline__ float activate16_alpha(float v, int act, float alpha) {
  return act == 3 ? (v >= 0.0f ? v : alpha * v) : activate16(v, act);
}
template <int ACT>
__device__ __forceinline__ float activate16_c(float v) {
  if constexpr (ACT == kNoAct) return v;
  else return activate16(v, ACT);
}

}  // namespace bs::cuda
