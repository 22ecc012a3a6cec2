// The CPU backends' paths as registry descriptors (kernels/plan/registry.hpp). cpu-ref, the oracle, runs every layer
// with the reference loops as written, nothing fused; cpu runs convolution and fully connected layers through OpenBLAS
// (or the direct kernel for small convolutions) with bias and the activation after them in their epilogue, and the
// other layers with the reference loops split over the batch.
#include "kernels/cpu/blas_ops.hpp"
#include "kernels/plan/registry.hpp"

namespace bs {

void register_cpu_impls(Registry& r) {
  auto add = [&](BackendKind b, LayerKind op, const char* name, const char* summary, bool fuses_act = false,
                 std::function<Support(const Layer&, const Epilogue&)> supports = nullptr) {
    // dilation: the reference loops and im2col take it; the direct kernel refuses it in conv_is_direct
    r.add(Impl{.op = op, .backend = b, .name = name, .summary = summary, .fuses_act = fuses_act, .dilation = op == LayerKind::conv,
               .supports = std::move(supports)});
  };
  for (LayerKind k : {LayerKind::conv, LayerKind::act, LayerKind::pool, LayerKind::lrn, LayerKind::flatten, LayerKind::fc,
                      LayerKind::softmax})
    add(BackendKind::cpu_ref, k, "reference loops", "plain loops with double accumulators, one thread: the oracle");
  add(BackendKind::cpu, LayerKind::conv, "direct (register-blocked)",
      "small layers (6 or 16 filters, stride 1, no padding, one group): all filters of 16 neighbouring outputs in registers",
      true, [](const Layer& l, const Epilogue&) {
        return blas::conv_is_direct(std::get<ConvParams>(l.op)) ? Support{} : Support{false, "not a small unpadded convolution"};
      });
  add(BackendKind::cpu, LayerKind::conv, "im2col+sgemm", "im2col per image and group, OpenBLAS SGEMM, OpenMP over the batch", true);
  add(BackendKind::cpu, LayerKind::fc, "sgemm", "one OpenBLAS SGEMM over the batch", true);
  add(BackendKind::cpu, LayerKind::flatten, "no-op (copy)", "NCHW is already flat");
  for (LayerKind k : {LayerKind::act, LayerKind::pool, LayerKind::lrn, LayerKind::softmax})
    add(BackendKind::cpu, k, "reference loops (OpenMP over the batch)", "the reference loops, images split over the cores");
}

}  // namespace bs
