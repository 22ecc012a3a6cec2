#include "app/cli/run_flags.hpp"

#include "app/cli/flags.hpp"
#include "kernels/exec/device_info.hpp"
#include "kernels/plan/plan.hpp"
#include "weights_tools/error.hpp"

namespace bs {

void RunFlags::add_to(CLI::App& app, const Scope& scope) {
  app_ = &app;
  scope_ = scope;
  backend = scope.default_backend;
  host_memory = scope.default_host_memory;
  app.add_option_function<std::string>(
         "--backend",
         [this](const std::string& v) {
           if (v == "auto") {
             backend.reset();
             return;
           }
           const std::optional<BackendKind> k = enum_from<BackendKind>(v);
           if (!k) throw CLI::ValidationError("--backend", "unknown backend '" + v + "' (this build has: auto, " + backend_list() + ")");
           backend = k;
         },
         "auto (cuda where a GPU exists, else cpu) | " + enum_choices<BackendKind>(" | ") + " (default: " +
             (scope.default_backend ? name_of(*scope.default_backend) : std::string("auto")) + ")")
      ->type_name("NAME");
  add_version(app, "--conv-variant", conv_variant, LayerKind::conv,
              "cuda: convolution version, number or name, or auto (batchscope variants lists them)");
  add_version(app, "--fc-variant", fc_variant, LayerKind::fc, "cuda: fully connected version, number or name, or auto");
  app.add_option("--tuning", tuning, "cuda: the tuning table auto reads (batchscope tune writes it; default: the device's file in "
                                     "~/.cache/batchscope, when there is one)")
      ->type_name("FILE");
  add_enum(app, "--cudnn-algos", cudnn_algos, "cudnn: fastest (FFT, Winograd allowed) | exact (GEMM, direct)");
  add_int(app, "--threads", threads, "cpu, cpu-ref: threads (default: all cores)", 1, 4096);
  add_enum(app, "--precision", precision,
           "cuda, cudnn: fp32 | tf32 (convolution and fully connected products on the tensor cores in TF32) | fp16 | bf16 (16-bit "
           "NHWC activations between layers, products on the FP16/BF16 tensor cores, FP32 accumulation); cpu and cpu-ref are the "
           "fp32 reference");
  add_enum(app, "--input-precision", input_precision,
           "cuda, cudnn: fp32 (the input is copied as FP32 and converted on the device inside the first layer) | u8 (any "
           "--precision: the host holds raw 8-bit pixels, whole numbers 0..255, widened to FP32 on the device inside the first "
           "layer; a quarter of the copy) | fp16 | bf16 (with the same --precision: the host holds the input as 16-bit values, "
           "converted once before timing; half the copy)");
  add_enum(app, "--weights", weights,
           "cuda: native (the model's weights in the precision's type) | int8 (weight-only quantisation at load: each output "
           "channel of a convolution or fully connected layer rounded to 255 levels of a scale of its own; activations stay in "
           "--precision; the fully connected layers read 8-bit rows at small batches, fc v15, the rest reads the same values in "
           "the precision's type)");
  if (!scope.transfers) return;
  add_enum(app, "--transfers", transfers,
           scope.per_layer ? "GPU: resident (weights and activations stay on the GPU) | per-layer (allocate, copy in, run, copy out, "
                             "free around every layer) | overlapped (resident, the batch in chunks whose copies overlap the compute "
                             "of others)"
                           : "GPU: resident | overlapped (each batch in chunks: copies overlap compute)")
      ->type_name(scope.per_layer ? enum_choices<Transfers>("|") : "resident|overlapped");
  add_enum(app, "--host-memory", host_memory, "GPU: pageable | pinned host buffers for input and output");
  add_int(app, "--chunk", chunk, "--transfers overlapped: images per chunk (default: quarters of the batch, at least 32, reached by "
                                 "doubling from a sixteenth)", 1, INT_MAX);
  app.add_flag("--cuda-graph", cuda_graph, "GPU backends: capture each batch size's layers once into a CUDA graph and replay it "
                                           "(the cold run holds an eager pass, the capture and the instantiation)");
  add_enum(app, "--copies", copies,
           "GPU, --transfers resident with --host-memory pinned: engine (default: the copy engines move the input in and the "
           "output out, around the layers or their graph) | kernel (two kernels read the pinned input and write the pinned "
           "output over the bus, inside the graph with --cuda-graph: one submission a pass, ~10 us less at batch 1; slower "
           "than the copy engines for large batches; booked as htod and dtoh)");
}

bool RunFlags::given(const std::string& flag) const { return app_ && app_->count(flag) > 0; }

BackendKind RunFlags::resolve_backend() const {
  if (backend) return *backend;
  return gpu_available() ? BackendKind::cuda : BackendKind::cpu;
}

void RunFlags::validate(BackendKind b) const {
  auto refuse = [&](const char* flag, const char* owner) {
    usage_fail(flag, "the " + name_of(b) + " backend does not use it (it applies to " + owner + ")");
  };
  const bool cuda = b == BackendKind::cuda, cudnn = b == BackendKind::cudnn, cpu = !is_gpu(b);
  if (given("--conv-variant") && !cuda) refuse("--conv-variant", "--backend cuda");
  if (given("--fc-variant") && !cuda) refuse("--fc-variant", "--backend cuda");
  if (given("--tuning") && !cuda) refuse("--tuning", "--backend cuda");
  if (given("--cudnn-algos") && !cudnn) refuse("--cudnn-algos", "--backend cudnn");
  if (given("--threads") && !cpu) refuse("--threads", "--backend cpu and cpu-ref");
  if (cpu && given("--input-precision") && input_precision != InputPrecision::fp32) refuse("--input-precision", "--backend cuda and cudnn");
  if (scope_.transfers) {
    if (!scope_.per_layer && transfers == Transfers::per_layer)
      usage_fail("--transfers", "expected resident or overlapped, found 'per-layer'");
    if (given("--chunk") && transfers != Transfers::overlapped) usage_fail("--chunk", "applies to --transfers overlapped only");
    if (cuda_graph && transfers == Transfers::per_layer)
      usage_fail("--cuda-graph", "needs --transfers resident or overlapped (per-layer allocates and copies synchronously around every layer)");
    if (cpu) {
      if (given("--copies") && copies != Copies::engine) usage_fail("--copies", "applies to GPU backends only");
      if (cuda_graph) usage_fail("--cuda-graph", "applies to GPU backends only");
      if (given("--transfers") && transfers != Transfers::resident) usage_fail("--transfers", "applies to GPU backends only");
      if (given("--host-memory") && host_memory == HostMemory::pinned) usage_fail("--host-memory", "applies to GPU backends only");
    }
  }
  check_backend_options(b, options(b));  // precisions, and versions of another precision
}

BackendOptions RunFlags::options(BackendKind b) const {
  const bool g = is_gpu(b);  // the CPU backends copy nothing and keep their buffers in ordinary memory
  return BackendOptions{.conv_variant = conv_variant, .fc_variant = fc_variant, .threads = threads,
                        .transfers = g ? transfers : Transfers::resident,
                        .pinned_host = g && host_memory == HostMemory::pinned, .chunk = g ? chunk : 0,
                        .cuda_graph = g && cuda_graph, .copies = g ? copies : Copies::engine, .cudnn_algos = cudnn_algos, .tuning_file = tuning,
                        .precision = precision, .input_precision = input_precision, .weights = weights};
}

std::string RunFlags::conv_label(BackendKind b) const {
  if (b == BackendKind::cuda) return conv_variant ? std::to_string(conv_variant) : "auto";
  return b == BackendKind::cudnn ? "cudnn-" + name_of(cudnn_algos) : "";
}

std::string RunFlags::fc_label(BackendKind b) const {
  return b == BackendKind::cuda ? (fc_variant ? std::to_string(fc_variant) : "auto") : "";
}

}  // namespace bs
