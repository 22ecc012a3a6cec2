#include "kernels/plan/options.hpp"

#include "weights_tools/error.hpp"

namespace bs {

template <class E>
E parse_enum(std::string_view text, const std::string& flag) {
  if (auto v = enum_from<E>(text)) return *v;
  usage_fail(flag, enum_error<E>(text));
}
template BackendKind parse_enum<BackendKind>(std::string_view, const std::string&);
template Precision parse_enum<Precision>(std::string_view, const std::string&);
template InputPrecision parse_enum<InputPrecision>(std::string_view, const std::string&);
template WeightFormat parse_enum<WeightFormat>(std::string_view, const std::string&);
template Transfers parse_enum<Transfers>(std::string_view, const std::string&);
template HostMemory parse_enum<HostMemory>(std::string_view, const std::string&);
template CudnnAlgos parse_enum<CudnnAlgos>(std::string_view, const std::string&);
template ProfiledPasses parse_enum<ProfiledPasses>(std::string_view, const std::string&);

// End to end (relative L2 of the logits against cpu-ref). fp32: FP32 rounding through a network stays near 1e-6;
// 1e-4 leaves room for cuDNN's Winograd/FFT. tf32: operands rounded to 11 significant bits, relative error up to
// 2^-11 each and about 2.8e-4 RMS per product; a dot product of many terms of mixed sign keeps that RMS relative
// error (4e-4 per layer measured in the test table, held to 2e-3), and eight layers in a row add up to about
// 1e-3 (sqrt(8) x 4e-4); 5e-3 leaves a factor of 4 to 5 (experiments/precision-tf32.md has the measured values).
// fp16: every activation and weight rounded to 11 significant bits (relative 2^-11 = 4.9e-4 at most, 2.8e-4 RMS)
// at every layer boundary as well as in the products, so about twice tf32's error per layer; 1e-2 end to end.
// bf16: 8 significant bits, 8x fp16's rounding; 5e-2. experiments/precision-half.md has the measured values.
double precision_tolerance(Precision p) {
  switch (p) {
    case Precision::tf32: return 5e-3;
    case Precision::fp16: return 1e-2;
    case Precision::bf16: return 5e-2;
    case Precision::fp32: break;
  }
  return 1e-4;
}

size_t input_value_bytes(InputPrecision p) {
  switch (p) {
    case InputPrecision::u8: return 1;
    case InputPrecision::fp16:
    case InputPrecision::bf16: return 2;
    case InputPrecision::fp32: break;
  }
  return 4;
}

void check_input_precision(InputPrecision input, Precision precision) {
  if (input == InputPrecision::fp32 || input == InputPrecision::u8) return;  // u8: widened to FP32 on the device
  const bool same = (input == InputPrecision::fp16 && precision == Precision::fp16) ||
                    (input == InputPrecision::bf16 && precision == Precision::bf16);
  if (!same)
    usage_fail("--input-precision", name_of(input) + " needs --precision " + name_of(input) +
                                  " (the input is copied as the type the first layer computes in; found --precision " +
                                  name_of(precision) + ")");
}

}  // namespace bs
