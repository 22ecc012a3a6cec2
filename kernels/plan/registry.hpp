// The kernel registry: every implementation batchscope can run a layer with is one descriptor (an Impl): this
// project's numbered CUDA versions, the cuDNN algorithm policies and library calls, the CPU paths. A descriptor
// says which op it runs, its number and name (numbers stay the user-facing names: flags, CSVs and tuning tables
// use them), the precisions that may run it, the layout it reads and writes, what it fuses, which shapes it
// supports (a predicate that gives its reason when it refuses), the workspace and prepared-weight memory it needs,
// and its launcher. `variants`, the planner's heuristics and refusals, flag validation, `tune`'s candidates, the
// CSVs' implementation names and the tests all read it.
//
// Where descriptors live: beside their kernels. Each kernel file defines one register_*() function holding the
// descriptors of the versions it implements (kernels/cuda/ops/conv_basic.cu: v1, v2, v4-v6, ...); kernels/cuda/
// impls.cpp, kernels/cuda/backends/cudnn_backend.cpp and kernels/cpu/cpu_impls.cpp call them. A build without CUDA
// registers the CPU paths only (its cuda and cudnn backends do not exist). Static registrars were left out on
// purpose: the kernels live in a static library, whose linker drops an object that nothing else references, and
// with it the registrar.
#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/exec/backend.hpp"
#include "kernels/model/model.hpp"
#include "kernels/plan/options.hpp"

namespace bs {

// What a kernel does after its main product, in the same launch.
struct Epilogue {
  bool has_act = false;
  Act act = Act::relu;
  bool pool2x2 = false;  // max pool kernel 2 stride 2, no padding
  const PoolParams* pool = nullptr;  // LRN (Impl::fuses_pool): the pooling after it, which the kernel would absorb
};

// How an activation tensor is stored: FP32 (N, C, H, W), or 16-bit (N, H, W, C rounded up to even) with fp16/bf16.
enum class Layout { nchw_fp32, nhwc_16 };
const char* layout_name(Layout l, Precision p);  // "NCHW fp32", "NHWC fp16"

struct ImplHooks;  // a backend's typed launchers (kernels/cuda/impl_hooks.hpp); opaque to the planner

struct Impl {
  LayerKind op = LayerKind::conv;
  BackendKind backend = BackendKind::cpu_ref;
  int number = 0;            // the user-facing version number on a menu; 0: the one implementation of its kind
  std::string name{};        // "gemm-3xtf32", "im2col+sgemm", "fastest"
  std::string summary{};     // one line for `batchscope variants`
  std::string shapes = "any";  // what it runs, in words
  std::string math = "fp32";   // its arithmetic, as the menu prints it: fp32 (FP32-accurate), tf32, fp16/bf16
  std::vector<Precision> precisions = {Precision::fp32};  // the --precision values that may run it
  bool fuses_act = false;      // the activation right after it runs in its epilogue
  bool fuses_pool2x2 = false;  // ... then a 2x2 max pool (conv)
  bool fuses_pool = false;     // LRN: the pooling right after it, in one kernel
  int prep_layout = 0;         // the prepared-weights layout it reads (0: the raw weights); two versions with different
                               // layouts may take turns on a layer when a tuning table picks them for different batches
  bool texture = false;        // reads its weights through a texture object
  bool dilation = false;       // conv: runs dilated convolutions (others refuse them in check)
  bool int8_weights = false;   // reads the weights as 8-bit values and per-output scales: runs with --weights int8 only
  // Whether it runs `layer` with `epi` fused (null: every layer of its op). `stored` is the shape the layer's input is
  // stored in (16-bit paths: the tensor before a flatten).
  std::function<Support(const Layer& layer, const Epilogue& epi)> supports{};
  std::function<size_t(const Layer& layer, Shape stored, int n, Precision p)> workspace_floats{};  // null: none
  std::function<size_t(const Layer& layer, Shape stored, Precision p)> prepared_floats{};          // null: none
  // The process-wide __constant__ weight bank it writes for `layer` ("" for none; ending in "in chunks" when the layer
  // is copied through it piece by piece): two instances must not share such a bank (throughput --streams).
  std::function<std::string(const Layer& layer)> constant_bank{};
  const ImplHooks* hooks = nullptr;

  bool runs_in(Precision p) const;
  bool takes(WeightFormat w) const { return !int8_weights || w == WeightFormat::int8; }
  std::string label() const;  // "v13 gemm-3xtf32", "fc v5 stream", or the name
  Support check(const Layer& layer, const Epilogue& epi = {}) const {
    if (const auto* c = std::get_if<ConvParams>(&layer.op); c && c->dilated() && !dilation)
      return {false, label() + " runs undilated convolutions only (this layer's dilation is " + std::to_string(c->dh) + "x" +
                         std::to_string(c->dw) + ")"};
    return supports ? supports(layer, epi) : Support{};
  }
};

class Registry {
 public:
  void add(Impl impl);  // fails on a second descriptor with the same (op, backend, number) or name
  const std::vector<Impl>& all() const { return impls_; }
  // The numbered versions of one op on one backend, in number order: a menu.
  std::vector<const Impl*> menu(LayerKind op, BackendKind backend) const;
  // Every descriptor of one op on one backend (numbered or not), in registration order.
  std::vector<const Impl*> of(LayerKind op, BackendKind backend) const;
  const Impl* find(LayerKind op, BackendKind backend, int number) const;
  const Impl* find(LayerKind op, BackendKind backend, std::string_view name) const;
  // Version `number` of the cuda menu of `op`, or an Error naming `flag` and the menu.
  const Impl& version(LayerKind op, int number, const std::string& flag) const;

 private:
  std::vector<Impl> impls_;
};

// Every implementation this build has, registered on first use.
const Registry& registry();

// The cuda menus' version flags: "13", "v13" or a name ("gemm-3xtf32"), or "auto"/"0" (kAutoVariant, the per-layer,
// per-batch choice: the tuning table's, else the heuristic). Anything else is an Error naming the flag and the menu.
constexpr int kAutoVariant = 0;
int parse_version(LayerKind op, std::string_view text, const std::string& flag);
inline int parse_conv_variant(std::string_view text, const std::string& flag = "--conv-variant") {
  return parse_version(LayerKind::conv, text, flag);
}
inline int parse_fc_variant(std::string_view text, const std::string& flag = "--fc-variant") {
  return parse_version(LayerKind::fc, text, flag);
}
// The versions of a cuda menu that `p` may run with weights `w`, as "v16, v17, v18".
std::string allowed_versions(LayerKind op, Precision p, WeightFormat w = WeightFormat::native);
// Throws "<flag>: vN computes in fp32; with --precision tf32 choose auto or one of ..." unless `p` may run version
// `number` (auto always passes).
void check_version_precision(LayerKind op, int number, Precision p, const std::string& flag);
// Throws "<flag>: v15 reads weights quantised to 8 bits; add --weights int8" unless version `number` takes `w`.
void check_version_weights(LayerKind op, int number, WeightFormat w, const std::string& flag);

// Registration functions, one per file of kernels (see the top of this file).
void register_cpu_impls(Registry& r);
void register_cuda_impls(Registry& r);   // CUDA builds: kernels/cuda/impls.cpp
void register_cudnn_impls(Registry& r);  // CUDA builds: kernels/cuda/backends/cudnn_backend.cpp

}  // namespace bs
