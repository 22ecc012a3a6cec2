// --input-precision fp16 | bf16: the input held on the host as 16-bit values, the way a deployment whose data
// pipeline stores images in the model's precision would hand them over, so that the host-to-device copy moves half
// the bytes. The conversion happens once, before anything is timed (the default, fp32, copies FP32 values and
// converts them on the device inside the first layer's time). The reference (cpu-ref) always reads the FP32 input:
// the input's rounding is part of what the precision costs.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace bs {

// Round to nearest even. fp16: NaN stays NaN, beyond 65504 becomes inf (convert_input refuses those first).
uint16_t fp16_bits(float v);
uint16_t bf16_bits(float v);
// count values of src into dst as `precision` (fp16 | bf16). fp16: a value beyond 65504 (FP16's largest) fails
// with one line naming --input-precision and the value's index, rather than becoming inf.
void convert_input(const float* src, size_t count, const std::string& precision, uint16_t* dst);
std::vector<uint16_t> convert_input(const float* src, size_t count, const std::string& precision);
// convert_input for a 16-bit input precision; empty for fp32 (the FP32 values go as they are).
std::vector<uint16_t> to_input_precision(const float* src, size_t count, const std::string& input_precision);
// The results' `transfers` label of a GPU run: resident | overlapped, then +graph, then +in-fp16 / +in-bf16.
std::string transfers_label(const std::string& transfers, bool cuda_graph, const std::string& input_precision);

}  // namespace bs
