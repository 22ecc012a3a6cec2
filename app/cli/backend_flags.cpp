#include "app/cli/backend_flags.hpp"

#include "kernels/plan/menus.hpp"
#include "weights_tools/error.hpp"

namespace bs {

void BackendFlags::add_to(CLI::App& app, bool with_fc) {
  app.add_option("--conv-variant", conv_variant, "cuda: convolution version, number or name, or auto (batchscope variants lists them)");
  if (with_fc) app.add_option("--fc-variant", fc_variant, "cuda: fully connected version, number or name, or auto");
  app.add_option("--tuning", tuning, "cuda: the tuning table auto reads (batchscope tune writes it; default: the device's file in "
                                     "~/.cache/batchscope, when there is one)");
  app.add_option("--cudnn-algos", cudnn_algos, "cudnn: fastest (FFT, Winograd allowed; the default) | exact (GEMM, direct)");
  app.add_option("--threads", threads, "cpu, cpu-ref: threads (default: all cores)")->check(CLI::PositiveNumber);
  app.add_option("--precision", precision, "cuda, cudnn: fp32 | tf32 (convolution and fully connected products on the "
                                           "tensor cores in TF32) | fp16 | bf16 (16-bit NHWC activations between layers, "
                                           "products on the FP16/BF16 tensor cores, FP32 accumulation); cpu and cpu-ref are "
                                           "the fp32 reference")
      ->capture_default_str();
  app.add_option("--input-precision", input_precision, "cuda, cudnn: fp32 (the default: the input is copied as FP32 and "
                                                       "converted on the device inside the first layer) | u8 (any --precision: "
                                                       "the host holds raw 8-bit pixels, whole numbers 0..255, widened to FP32 on "
                                                       "the device inside the first layer; a quarter of the copy) | fp16 | bf16 "
                                                       "(with the same --precision: the host holds the input as 16-bit values, "
                                                       "converted once before timing; half the copy)")
      ->capture_default_str();
}

void BackendFlags::validate(const std::string& backend) const {
  auto refuse = [&](const char* flag, const char* owner) {
    fail(flag, std::string("the ") + backend + " backend does not use it (it applies to " + owner + ")");
  };
  const bool cuda = backend == "cuda", cudnn = backend == "cudnn", cpu = backend == "cpu" || backend == "cpu-ref";
  if (!conv_variant.empty() && !cuda) refuse("--conv-variant", "--backend cuda");
  if (!fc_variant.empty() && !cuda) refuse("--fc-variant", "--backend cuda");
  if (!tuning.empty() && !cuda) refuse("--tuning", "--backend cuda");
  if (!cudnn_algos.empty() && !cudnn) refuse("--cudnn-algos", "--backend cudnn");
  if (threads > 0 && !cpu) refuse("--threads", "--backend cpu and cpu-ref");
  check_precision(precision);
  if (precision != "fp32" && cpu)
    fail("--precision", "the " + backend + " backend computes in fp32 only (it is the reference); " + precision +
                            " runs on --backend cuda or cudnn");
  check_input_precision(input_precision, precision);
  if (input_precision != "fp32" && cpu) refuse("--input-precision", "--backend cuda and cudnn");
  // Unknown names and versions of the other precision fail here, before any work (only cuda gets this far with one).
  if (!conv_variant.empty()) check_variant_precision(parse_conv_variant(conv_variant), true, precision, "--conv-variant");
  if (!fc_variant.empty()) check_variant_precision(parse_fc_variant(fc_variant), false, precision, "--fc-variant");
  if (!cudnn_algos.empty() && cudnn_algos != "fastest" && cudnn_algos != "exact")
    fail("--cudnn-algos", "expected fastest or exact, found '" + cudnn_algos + "'");
}

BackendOptions BackendFlags::options() const {
  BackendOptions o;
  o.conv_variant = conv_variant;
  o.fc_variant = fc_variant;
  o.tuning_file = tuning;
  o.cudnn_algos = cudnn_algos.empty() ? "fastest" : cudnn_algos;
  o.threads = threads;
  o.precision = precision;
  o.input_precision = input_precision;
  return o;
}

std::string BackendFlags::conv_label(const std::string& backend) const {
  if (backend == "cuda") return conv_variant.empty() ? "auto" : conv_variant;
  return backend == "cudnn" ? "cudnn-" + options().cudnn_algos : "";
}

std::string BackendFlags::fc_label(const std::string& backend) const {
  return backend == "cuda" ? (fc_variant.empty() ? "auto" : fc_variant) : "";
}

}  // namespace bs
