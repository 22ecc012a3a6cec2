// --input-precision u8 | fp16 | bf16: the input held on the host in fewer bytes than FP32, the way a deployment's data
// pipeline hands images over, so that the host-to-device copy moves less. u8 (with any --precision): the raw 8-bit
// pixel values, one byte each (a quarter of the copy), widened to FP32 on the device inside the first layer's time;
// values that are not whole numbers in 0..255 are refused, not rounded. fp16 / bf16 (with the same --precision): the
// values in the model's own 16-bit type (half the copy). The conversion happens on the host before the clock starts,
// as a data pipeline would deliver the batch (the default, fp32, copies FP32 values). The reference (cpu-ref) always
// reads the FP32 input: the input's rounding is part of what the precision costs (u8 has none).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/plan/options.hpp"

namespace bs {

// Round to nearest even. fp16: NaN stays NaN, beyond 65504 becomes inf (convert_input refuses those first).
uint16_t fp16_bits(float v);
uint16_t bf16_bits(float v);
// count values of src into dst as `input` (fp16 | bf16). fp16: a value beyond 65504 (FP16's largest) fails with one
// line naming --input-precision and the value's index, rather than becoming inf.
void convert_input(const float* src, size_t count, InputPrecision input, uint16_t* dst);
std::vector<uint16_t> convert_input(const float* src, size_t count, InputPrecision input);
// Floats of a host buffer that holds `values` input values in `input` (forward reads them through its float pointer).
size_t input_buffer_floats(size_t values, InputPrecision input);
// count values of src into dst (input_value_bytes each) as `input` (u8, fp16 or bf16). u8: a value that is not a whole
// number in 0..255 fails with one line naming --input-precision, the value and its index.
void convert_input_bytes(const float* src, size_t count, InputPrecision input, void* dst);
// convert_input_bytes into a vector of bytes, for u8, fp16 and bf16; empty for fp32 (the FP32 values go as they are).
std::vector<uint8_t> to_input_precision(const float* src, size_t count, InputPrecision input);
// The results' `transfers` label of a GPU run: resident | per-layer | overlapped, then +graph, then +kernel-copies
// (--copies kernel), then +in-u8 / +in-fp16 / +in-bf16.
std::string transfers_label(Transfers transfers, bool cuda_graph, InputPrecision input, Copies copies = Copies::engine);

}  // namespace bs
