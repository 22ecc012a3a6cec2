// `batchscope variants`: every implementation in the registry (kernels/plan/registry.hpp), menu by menu, and what
// auto does.
#include "app/commands/variants.hpp"

#include <cstdio>
#include <iostream>

#include "kernels/exec/backend.hpp"
#include "kernels/plan/plan.hpp"
#include "kernels/plan/registry.hpp"

namespace bs {
namespace {

std::string line(const std::string& a, const std::string& b, const std::string& c) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "  %-5s %-16s ", a.c_str(), b.c_str());
  return buf + c + "\n";
}

std::string precisions_text(const Impl& i) {
  std::string s;
  for (Precision p : i.precisions) s += (s.empty() ? "" : ", ") + name_of(p);
  return s;
}

}  // namespace

std::string menus_text() {
  const Registry& r = registry();
  std::string s;
  for (LayerKind op : {LayerKind::conv, LayerKind::fc}) {
    const std::vector<const Impl*> menu = r.menu(op, BackendKind::cuda);
    s += op == LayerKind::conv ? "Convolution, --conv-variant (backend cuda)\n" : "Fully connected, --fc-variant (backend cuda)\n";
    if (menu.empty()) s += "  (this build has no cuda backend)\n";
    for (const Impl* i : menu) s += line("v" + std::to_string(i->number), i->name, i->summary + " [" + i->shapes + "; " + i->math + "]");
    s += line("auto", "(default)", "per layer and batch size: the tuning table's choice (batchscope tune), else " + heuristic_text(op));
    s += "\n";
  }
  s += "cuDNN algorithm policies, --cudnn-algos (backend cudnn)\n";
  const std::vector<const Impl*> policies = r.of(LayerKind::conv, BackendKind::cudnn);
  if (policies.empty()) s += "  (this build has no cudnn backend)\n";
  for (const Impl* i : policies) s += line("", i->name, i->summary);
  s += "\nPrecisions, --precision (backends cuda and cudnn; cpu and cpu-ref are the fp32 reference; every result names its "
       "precision)\n";
  s += line("", "fp32", "FP32 storage and FP32-accurate arithmetic (3xTF32 and 3xFP16 on the tensor cores count as FP32: held to "
                        "1e-5 per layer, 1e-4 end to end); every backend");
  s += line("", "tf32", "FP32 storage, convolution and fully connected products in TF32 on the tensor cores (operands rounded to "
                        "10 mantissa bits; on Hopper the cuda backend's large layers as FP16 after a power-of-two scale, the "
                        "same rounding), FP32 accumulation: 2e-3 per layer, 5e-3 end to end; cuda and cudnn");
  s += line("", "fp16", "FP16 storage between layers (NHWC), products on the FP16 tensor cores with FP32 accumulation, the other "
                        "layers computed in FP32 from FP16; an activation beyond 65504 is reported as an overflow; cuda and cudnn");
  s += line("", "bf16", "as fp16 with bfloat16 (8 exponent bits: FP32's range, 8 significant bits); cuda and cudnn");
  s += "\nEvery other layer, and the CPU backends' paths (one implementation each; the plan names which runs where)\n";
  for (BackendKind b : backend_kinds())
    for (LayerKind op : {LayerKind::conv, LayerKind::act, LayerKind::pool, LayerKind::lrn, LayerKind::flatten, LayerKind::fc, LayerKind::softmax})
      for (const Impl* i : r.of(op, b))
        if (i->number == 0 && !(b == BackendKind::cudnn && op == LayerKind::conv))
          s += line(name_of(b), std::string(kind_name(op)), i->name + ": " + i->summary + " [" + precisions_text(*i) +
                                                               (i->fuses_act ? "; fuses the activation after it" : "") +
                                                               (i->fuses_pool ? "; fuses the pooling after it" : "") + "]");
  return s;
}

int run_variants() {
  std::cout << menus_text();
  std::cout << "\nBackends in this build: " << backend_list() << "\n";
  return 0;
}

}  // namespace bs
