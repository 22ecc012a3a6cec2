#include "kernels/plan/registry.hpp"

#include <algorithm>

#include "weights_tools/error.hpp"

namespace bs {

const char* layout_name(Layout l, Precision p) {
  if (l == Layout::nchw_fp32) return "NCHW fp32";
  return p == Precision::bf16 ? "NHWC bf16" : "NHWC fp16";
}

bool Impl::runs_in(Precision p) const { return std::find(precisions.begin(), precisions.end(), p) != precisions.end(); }

std::string Impl::label() const {
  if (number == 0) return name;
  return std::string(op == LayerKind::fc ? "fc " : "") + "v" + std::to_string(number) + " " + name;
}

void Registry::add(Impl impl) {
  for (const Impl& i : impls_)
    if (i.op == impl.op && i.backend == impl.backend &&
        ((impl.number != 0 && i.number == impl.number) || (!impl.name.empty() && i.name == impl.name)))
      fail("registry", std::string(kind_name(impl.op)) + " on " + name_of(impl.backend) + ": '" + impl.label() +
                           "' is registered twice (internal)");
  impls_.push_back(std::move(impl));
}

std::vector<const Impl*> Registry::of(LayerKind op, BackendKind backend) const {
  std::vector<const Impl*> v;
  for (const Impl& i : impls_)
    if (i.op == op && i.backend == backend) v.push_back(&i);
  return v;
}

std::vector<const Impl*> Registry::menu(LayerKind op, BackendKind backend) const {
  std::vector<const Impl*> v;
  for (const Impl* i : of(op, backend))
    if (i->number > 0) v.push_back(i);
  std::sort(v.begin(), v.end(), [](const Impl* a, const Impl* b) { return a->number < b->number; });
  return v;
}

const Impl* Registry::find(LayerKind op, BackendKind backend, int number) const {
  for (const Impl& i : impls_)
    if (i.op == op && i.backend == backend && i.number == number) return &i;
  return nullptr;
}

const Impl* Registry::find(LayerKind op, BackendKind backend, std::string_view name) const {
  for (const Impl& i : impls_)
    if (i.op == op && i.backend == backend && i.name == name) return &i;
  return nullptr;
}

const Impl& Registry::version(LayerKind op, int number, const std::string& flag) const {
  if (const Impl* i = find(op, BackendKind::cuda, number); i && number > 0) return *i;
  usage_fail(flag, "no version " + std::to_string(number) + (menu(op, BackendKind::cuda).empty() ? " (this build has no cuda backend)" : ""));
}

const Registry& registry() {
  static const Registry r = [] {
    Registry reg;
    register_cpu_impls(reg);
#ifdef BATCHSCOPE_HAVE_CUDA
    register_cuda_impls(reg);
    register_cudnn_impls(reg);
#endif
    return reg;
  }();
  return r;
}

int parse_version(LayerKind op, std::string_view text, const std::string& flag) {
  if (text == "auto" || text == "0") return kAutoVariant;
  const std::string_view t = !text.empty() && (text[0] == 'v' || text[0] == 'V') ? text.substr(1) : text;
  std::string all;
  for (const Impl* v : registry().menu(op, BackendKind::cuda)) {
    if (t == std::to_string(v->number) || text == v->name) return v->number;
    all += ", " + std::to_string(v->number) + " " + v->name;
  }
  if (all.empty()) usage_fail(flag, "unknown variant '" + std::string(text) + "' (this build has no cuda backend, so no versions)");
  usage_fail(flag, "unknown variant '" + std::string(text) + "' (choose auto or one of:" + all.substr(1) + ")");
}

std::string allowed_versions(LayerKind op, Precision p, WeightFormat w) {
  std::string s;
  for (const Impl* i : registry().menu(op, BackendKind::cuda))
    if (i->runs_in(p) && i->takes(w)) s += (s.empty() ? "v" : ", v") + std::to_string(i->number);
  return s;
}

void check_version_precision(LayerKind op, int number, Precision p, const std::string& flag) {
  if (number == kAutoVariant) return;
  const Impl& i = registry().version(op, number, flag);
  if (!i.runs_in(p))
    usage_fail(flag, "v" + std::to_string(number) + " computes in " + i.math + "; with --precision " + name_of(p) + " choose auto or one of " +
                   allowed_versions(op, p));
}

void check_version_weights(LayerKind op, int number, WeightFormat w, const std::string& flag) {
  if (number == kAutoVariant) return;
  const Impl& i = registry().version(op, number, flag);
  if (!i.takes(w)) usage_fail(flag, "v" + std::to_string(number) + " reads weights quantised to 8 bits: it runs with --weights int8 only");
}

}  // namespace bs
