// The planner (plan.hpp): every decision about what runs, made before anything is allocated.
#include <algorithm>
#include <cstdio>
#include <fstream>

#include "kernels/plan/plan.hpp"
#include "weights_tools/error.hpp"

namespace bs {

const char* why_name(Why w) {
  switch (w) {
    case Why::forced: return "forced";
    case Why::tuned: return "tuned";
    case Why::heuristic: return "heuristic";
    case Why::only: break;
  }
  return "only";
}

const Pass& Plan::pass(int images) const {
  for (const Pass& p : passes)
    if (p.images == images) return p;
  fail("plan", "no pass of " + std::to_string(images) + " images (internal)");
}

std::vector<int> overlapped_chunks(int n, int chunk) {
  std::vector<int> sizes;
  int left = n;
  int next = chunk;
  if (chunk <= 0) {  // default: quarters of the batch, reached by doubling from a sixteenth (the first chunk's copy
    chunk = std::max(32, (n + 3) / 4);  // in has nothing to hide under; each copy must fit under the compute before it)
    next = std::max(16, chunk / 4);
  }
  for (; left > 0; left -= sizes.back()) {
    sizes.push_back(std::min(next, left));
    next = std::min(chunk, 2 * next);
  }
  return sizes;
}

std::vector<Shape> stored_input_shapes(const Model& m) {
  std::vector<Shape> out(m.layers.size(), m.input);
  Shape stored = m.input;
  for (size_t i = 0; i < m.layers.size(); ++i) {
    out[i] = stored;
    if (m.layers[i].kind() != LayerKind::flatten) stored = m.layers[i].out;
  }
  return out;
}

namespace {

std::string gib(size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / 1073741824.0);
  return buf;
}

}  // namespace

void check_backend_options(BackendKind b, const BackendOptions& o) {
  const bool cpu = !is_gpu(b);
  if (cpu && o.copies != Copies::engine) usage_fail("--copies", "applies to GPU backends only");
  if (cpu && o.precision != Precision::fp32)
    usage_fail("--precision", "the " + name_of(b) + " backend computes in fp32 only (it is the reference); " + name_of(o.precision) +
                            " runs on --backend cuda or cudnn");
  check_input_precision(o.input_precision, o.precision);
  if (cpu && o.input_precision != InputPrecision::fp32)
    usage_fail("--input-precision", "the " + name_of(b) + " backend does not use it (it applies to --backend cuda and cudnn)");
  if (o.chunk < 0) usage_fail("--chunk", "must be 0 (the default) or more, found " + std::to_string(o.chunk));
  if (o.weights != WeightFormat::native && b != BackendKind::cuda)
    usage_fail("--weights", name_of(o.weights) + " runs on --backend cuda only (the " + name_of(b) +
                                " backend computes with the model's weights as they are)");
  if (cpu) return;
  const bool per_layer = o.transfers == Transfers::per_layer;
  if (per_layer && o.cuda_graph)
    usage_fail("--cuda-graph", "needs --transfers resident or overlapped (per-layer allocates and copies synchronously around every layer)");
  if (per_layer && o.input_precision != InputPrecision::fp32)
    usage_fail("--input-precision", name_of(o.input_precision) + " needs --transfers resident or overlapped (per-layer copies FP32 "
                              "values in and out around every layer)");
  if (o.copies == Copies::kernel) {
    if (o.transfers != Transfers::resident)
      usage_fail("--copies", "kernel needs --transfers resident (" + name_of(o.transfers) + " makes its own copies)");
    if (!o.pinned_host)
      usage_fail("--copies", "kernel needs --host-memory pinned (the copy kernels read and write the host buffers over the bus)");
  }
  if (per_layer && is_half(o.precision))
    usage_fail("--transfers", "per-layer transfers move FP32 tensors between layers; --precision " + name_of(o.precision) +
                            " keeps 16-bit activations on the device: use --transfers resident");
  if (b == BackendKind::cuda) {
    check_version_precision(LayerKind::conv, o.conv_variant, o.precision, "--conv-variant");
    check_version_precision(LayerKind::fc, o.fc_variant, o.precision, "--fc-variant");
    check_version_weights(LayerKind::conv, o.conv_variant, o.weights, "--conv-variant");
    check_version_weights(LayerKind::fc, o.fc_variant, o.weights, "--fc-variant");
  }
}

namespace {
// An activation layer an epilogue can absorb: the epilogues carry no parameter, so leaky_relu (its alpha) runs alone.
bool fusable_act(const Layer& l) {
  return l.kind() == LayerKind::act && std::get<ActParams>(l.op).act != Act::leaky_relu;
}

// The cudnn backend's call for a layer: the first of its kind's descriptors (a convolution's: the --cudnn-algos
// policy's) that takes the layer. None: null, and `why` gives each one's reason (cuDNN's, then this project's kernel's).
const Impl* cudnn_impl(const BackendOptions& o, const Layer& l, Support& why) {
  why = Support{false, std::string("backend cudnn has no call for a ") + kind_name(l.kind()) + " layer"};
  bool first = true;
  for (const Impl* impl : registry().of(l.kind(), BackendKind::cudnn)) {
    if (l.kind() == LayerKind::conv && impl->name != name_of(o.cudnn_algos)) continue;
    const Support s = impl->check(l);
    if (s.ok) return impl;
    why.reason = first ? s.reason : why.reason + "; " + impl->name + ": " + s.reason;
    first = false;
  }
  return nullptr;
}
}  // namespace

Support layer_support(BackendKind b, const BackendOptions& o, const Layer& layer) {
  try {
    if (b == BackendKind::cuda && layer.kind() == LayerKind::conv) {
      if (o.conv_variant != kAutoVariant) return registry().version(LayerKind::conv, o.conv_variant, "--conv-variant").check(layer);
      if (is_half(o.precision)) {  // auto: v20 takes any shape but odd channel counts per group, which v37 takes
        const Support s = registry().version(LayerKind::conv, 20, "auto").check(layer);
        return s.ok ? s : registry().version(LayerKind::conv, 37, "auto").check(layer);
      }
    }
    if (b == BackendKind::cuda && layer.kind() == LayerKind::fc && o.fc_variant != kAutoVariant)
      return registry().version(LayerKind::fc, o.fc_variant, "--fc-variant").check(layer);
    if (b == BackendKind::cudnn) {
      Support why;
      return cudnn_impl(o, layer, why) ? Support{} : why;
    }
  } catch (const Error& e) {
    return {false, e.what()};
  }
  return {};
}

Planner::Planner(const Model& m, BackendKind backend, const BackendOptions& o, DeviceSpec device)
    : model_(&m), backend_(backend), opts_(o), dev_(std::move(device)) {
  check_backend_options(backend, o);
  stored_ = stored_input_shapes(m);
  if (backend != BackendKind::cuda) return;
  if (!o.tuning_file.empty()) {
    tuning_ = read_tuning(o.tuning_file, dev_.name);
    tuning_path_ = o.tuning_file;
  } else if (const std::string def = default_tuning_path(dev_.name); std::ifstream(def).good()) {
    tuning_ = read_tuning(def, dev_.name);
    tuning_path_ = def;
  }
}

std::string Planner::tuning_source() const {
  if (!tuning_) return "none";
  return tuning_path_ + " (measured " + tuning_->date + ", commit " + tuning_->commit + ")";
}

std::vector<int> Planner::chunks(int n) const {
  if (is_gpu(backend_) && opts_.transfers == Transfers::overlapped) return overlapped_chunks(n, opts_.chunk);
  return {n};
}

const Pass& Planner::pass(int n) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = passes_.find(n); it != passes_.end()) return *it->second;
  auto p = std::make_unique<Pass>(make_pass(n));
  return *passes_.emplace(n, std::move(p)).first->second;
}

Pass Planner::make_pass(int n) const {
  if (n < 1) fail("--batch", "batch sizes must be positive, found " + std::to_string(n));
  Pass p;
  p.images = n;
  p.steps.resize(model_->layers.size());
  for (size_t i = 0; i < p.steps.size(); ++i) {
    p.steps[i].layer = i;
    p.steps[i].stored_in = stored_[i];
  }
  switch (backend_) {
    case BackendKind::cuda: plan_cuda(p); break;
    case BackendKind::cudnn: plan_cudnn(p); break;
    case BackendKind::cpu:
    case BackendKind::cpu_ref: plan_cpu(p); break;
  }
  const Layout act = is_half(opts_.precision) && is_gpu(backend_) ? Layout::nhwc_16 : Layout::nchw_fp32;
  for (PlanStep& st : p.steps) {
    st.in_layout = st.out_layout = act;
    for (size_t k = 1; k <= st.absorbs; ++k) p.steps[st.layer + k].fused_into = static_cast<int>(st.layer);
    p.workspace_floats = std::max(p.workspace_floats, st.workspace_floats);
  }
  return p;
}

// ---- cuda: a version per convolution and fully connected layer (forced, tuned or heuristic), one kernel per other
// layer, and what each kernel absorbs.

const Impl* Planner::choose(size_t i, int n, Why& why) const {
  const Layer& l = model_->layers[i];
  const bool conv = l.kind() == LayerKind::conv;
  const int forced = conv ? opts_.conv_variant : opts_.fc_variant;
  if (forced != kAutoVariant) {
    why = Why::forced;
    return &registry().version(l.kind(), forced, conv ? "--conv-variant" : "--fc-variant");
  }
  if (tuning_) {
    if (auto v = tuning_->lookup(conv ? "conv" : "fc", tuning_signature(*model_, i, opts_.precision, opts_.weights), n)) {
      const Impl* impl = registry().find(l.kind(), BackendKind::cuda, *v);
      if (impl && impl->runs_in(opts_.precision) && impl->takes(opts_.weights) && impl->check(l).ok) {
        why = Why::tuned;
        return impl;
      }
    }
  }
  why = Why::heuristic;
  return heuristic_version(l, n, opts_.precision, dev_.sm_count, opts_.weights);
}

void Planner::plan_epilogue(Pass& p, size_t i) const {
  const std::vector<Layer>& layers = model_->layers;
  PlanStep& st = p.steps[i];
  const Impl& impl = *st.impl;
  size_t j = i + 1;
  const bool next_act = j < layers.size() && fusable_act(layers[j]);
  if (layers[i].kind() == LayerKind::fc) {
    if (impl.fuses_act && next_act) {
      st.epi.has_act = true;
      st.epi.act = std::get<ActParams>(layers[j].op).act;
      st.absorbs = 1;
    }
    return;
  }
  if (!impl.fuses_act && !impl.fuses_pool2x2) return;
  Epilogue e;
  if (next_act) {
    Epilogue with_act;
    with_act.has_act = true;
    with_act.act = std::get<ActParams>(layers[j].op).act;
    if (!impl.check(layers[i], with_act).ok) return;  // the pool cannot follow alone
    e = with_act;
    ++j;
  }
  if (j < layers.size() && layers[j].kind() == LayerKind::pool) {
    const PoolParams& pp = std::get<PoolParams>(layers[j].op);
    Epilogue with_pool = e;
    with_pool.pool2x2 = true;
    if (pp.kind == PoolKind::max && pp.kh == 2 && pp.kw == 2 && pp.sh == 2 && pp.sw == 2 && !pp.padded() &&
        !pp.ceil_mode && impl.check(layers[i], with_pool).ok)
      e = with_pool;
  }
  st.epi = e;
  st.absorbs = (e.has_act ? 1 : 0) + (e.pool2x2 ? 1 : 0);
}

void Planner::plan_cuda(Pass& p) const {
  const std::vector<Layer>& layers = model_->layers;
  const bool half = is_half(opts_.precision), per_layer = opts_.transfers == Transfers::per_layer;
  const Registry& reg = registry();
  for (size_t i = 0; i < layers.size(); ++i) {
    if (p.steps[i].fused_into >= 0) continue;
    const Layer& l = layers[i];
    PlanStep& st = p.steps[i];
    if (l.kind() == LayerKind::conv || l.kind() == LayerKind::fc) {
      st.impl = choose(i, p.images, st.why);
      if (!st.impl->runs_in(opts_.precision))
        fail("layer '" + l.name + "'", st.impl->label() + " computes in " + st.impl->math + ", not " + name_of(opts_.precision));
      if (!st.impl->takes(opts_.weights))
        fail("layer '" + l.name + "'", st.impl->label() + " reads 8-bit weights: it runs with --weights int8 only");
      if (const Support s = st.impl->check(l); !s.ok)
        fail("layer '" + l.name + "'", "backend cuda does not support it: " + s.reason);
      plan_epilogue(p, i);
    } else {
      for (const Impl* impl : reg.of(l.kind(), BackendKind::cuda)) {  // the fused LRN + pooling kernel first, where it runs
        if (!impl->runs_in(opts_.precision)) continue;
        if (impl->fuses_pool) {
          if (i + 1 >= layers.size() || layers[i + 1].kind() != LayerKind::pool) continue;
          Epilogue with_pool;
          with_pool.pool = &std::get<PoolParams>(layers[i + 1].op);
          if (!impl->check(l, with_pool).ok) continue;
          st.absorbs = 1;
        }
        st.impl = impl;
        if (impl->fuses_pool) break;
      }
      if (!st.impl) fail("layer '" + l.name + "'", std::string("backend cuda has no kernel for a ") + kind_name(l.kind()) + " layer");
    }
    for (size_t k = 1; k <= st.absorbs; ++k) p.steps[i + k].fused_into = static_cast<int>(i);
    const Impl& impl = *st.impl;
    if (impl.workspace_floats) st.workspace_floats = impl.workspace_floats(l, stored_[i], p.images, opts_.precision);
    if (impl.prepared_floats) st.prepared_floats = impl.prepared_floats(l, stored_[i], opts_.precision);
    if (per_layer) st.workspace_floats += st.prepared_floats;  // made in the layer's workspace for every run
    // The words of the CSVs' implementation column.
    std::string absorbed;
    for (size_t k = 1; k <= st.absorbs; ++k) absorbed += "+" + layers[i + k].type_name();
    const std::string how = st.why == Why::tuned ? "auto (tuned): " : st.why == Why::heuristic ? "auto (heuristic): " : "";
    if (l.kind() == LayerKind::conv) st.describe = how + impl.label() + (absorbed.empty() ? "" : " (conv" + absorbed + ")");
    else if (l.kind() == LayerKind::fc) st.describe = how + impl.label() + (absorbed.empty() ? "" : " (fc" + absorbed + ")");
    else if (l.kind() == LayerKind::lrn && st.absorbs) st.describe = "lrn" + absorbed + " kernel";
    else if (l.kind() == LayerKind::flatten) st.describe = half ? "no-op (the next layer reads NHWC order)" : "no-op (NCHW is already flat)";
    else st.describe = std::string(kind_name(l.kind())) + " kernel";
  }
  for (size_t i = 0; i < layers.size(); ++i)
    if (p.steps[i].fused_into >= 0) p.steps[i].describe = "fused into " + layers[p.steps[i].fused_into].name;
}

// ---- cudnn: the library call of each kind; the convolution's algorithm is found at its first run (policy: fastest
// or exact), so the plan names the policy and the CSV the algorithm.
void Planner::plan_cudnn(Pass& p) const {
  const std::vector<Layer>& layers = model_->layers;
  for (size_t i = 0; i < layers.size(); ++i) {
    const Layer& l = layers[i];
    PlanStep& st = p.steps[i];
    Support why;
    st.impl = cudnn_impl(opts_, l, why);
    if (!st.impl) fail("layer '" + l.name + "'", "backend cudnn does not support it: " + why.reason);
    if (st.impl->workspace_floats) st.workspace_floats = st.impl->workspace_floats(l, stored_[i], p.images, opts_.precision);
    if (st.impl->prepared_floats) st.prepared_floats = st.impl->prepared_floats(l, stored_[i], opts_.precision);
    st.describe = l.kind() == LayerKind::conv ? "cudnnConvolutionForward (" + st.impl->name + " policy)" : st.impl->summary;
  }
}

// ---- cpu and cpu-ref: cpu runs convolution (im2col + SGEMM, or the direct kernel for small layers) and fully
// connected layers (SGEMM) with bias and the activation after them fused; cpu-ref, the oracle, runs every layer as
// written.
void Planner::plan_cpu(Pass& p) const {
  const std::vector<Layer>& layers = model_->layers;
  for (size_t i = 0; i < layers.size(); ++i) {
    if (p.steps[i].fused_into >= 0) continue;
    const Layer& l = layers[i];
    PlanStep& st = p.steps[i];
    const std::vector<const Impl*> paths = registry().of(l.kind(), backend_);
    for (const Impl* impl : paths)  // the first that runs the layer (the registry lists the specialised paths first)
      if (impl->check(l).ok) {
        st.impl = impl;
        st.why = paths.size() > 1 ? Why::heuristic : Why::only;
        break;
      }
    if (!st.impl) fail("layer '" + l.name + "'", "backend " + name_of(backend_) + " has no path for a " + kind_name(l.kind()) + " layer");
    std::string absorbed;
    if (st.impl->fuses_act && i + 1 < layers.size() && fusable_act(layers[i + 1])) {
      st.epi.has_act = true;
      st.epi.act = std::get<ActParams>(layers[i + 1].op).act;
      st.absorbs = 1;
      p.steps[i + 1].fused_into = static_cast<int>(i);
      p.steps[i + 1].describe = "fused into " + l.name;
      absorbed = " (" + std::string(kind_name(l.kind())) + "+" + layers[i + 1].type_name() + ")";
    }
    st.describe = st.impl->name + absorbed;
  }
}

PlanMemory Planner::memory(int n) const {
  PlanMemory mem;
  if (!is_gpu(backend_)) return mem;
  const Model& m = *model_;
  const std::vector<int> sizes = chunks(n);
  const int largest = *std::max_element(sizes.begin(), sizes.end());
  size_t weights = 0, max_act = static_cast<size_t>(m.input.size()), ws = 0, per_layer = 0;
  std::vector<size_t> prepared(m.layers.size(), 0);
  for (int k : sizes) {
    const Pass& p = pass(k);
    ws = std::max(ws, p.workspace_floats);
    for (size_t i = 0; i < m.layers.size(); ++i) prepared[i] = std::max(prepared[i], p.steps[i].prepared_floats);
  }
  for (size_t i = 0; i < m.layers.size(); ++i) {
    const Layer& l = m.layers[i];
    weights += static_cast<size_t>(l.weight_count());
    max_act = std::max<size_t>(max_act, l.out.size());
    per_layer = std::max(per_layer, static_cast<size_t>(l.weight_count()) + static_cast<size_t>(l.in.size() + l.out.size()) * n +
                                        pass(n).steps[i].workspace_floats);
  }
  if (opts_.transfers == Transfers::per_layer) {
    mem.workspace = sizeof(float) * per_layer;  // the largest layer's allocations, made and freed around it
  } else {
    mem.weights = sizeof(float) * weights;
    for (size_t pf : prepared) mem.prepared += sizeof(float) * pf;
    const size_t in_values = static_cast<size_t>(m.input.size()) * n;
    mem.input = in_values * input_value_bytes(opts_.input_precision);
    if (opts_.input_precision == InputPrecision::u8) mem.input += sizeof(float) * static_cast<size_t>(m.input.size()) * largest;
    if (is_half(opts_.precision))  // the 16-bit NHWC copy (cuda: channels rounded up to even; cudnn: packed)
      mem.input += 2 * static_cast<size_t>(largest) * m.input.h * m.input.w *
                   (backend_ == BackendKind::cuda ? m.input.c + (m.input.c & 1) : m.input.c);
    mem.activations = sizeof(float) * 2 * max_act * largest;
    mem.workspace = sizeof(float) * ws;
    if (opts_.transfers == Transfers::overlapped) mem.output = sizeof(float) * static_cast<size_t>(m.output().size()) * n;
  }
  mem.total = mem.weights + mem.prepared + mem.input + mem.activations + mem.workspace + mem.output;
  mem.device_free = dev_.memory_free;
  return mem;
}

Plan Planner::plan(int n) const {
  Plan p;
  p.model = model_->name;
  p.device = dev_.name;
  p.backend = backend_;
  p.options = opts_;
  p.tuning = tuning_source();
  p.batch = n;
  p.chunks = chunks(n);
  for (int k : p.chunks)
    if (std::none_of(p.passes.begin(), p.passes.end(), [&](const Pass& q) { return q.images == k; })) p.passes.push_back(pass(k));
  p.streams = is_gpu(backend_) && opts_.transfers == Transfers::overlapped ? 3 : 1;
  p.memory = memory(n);
  if (is_gpu(backend_) && p.memory.total > p.memory.device_free)
    fail("--batches", "batch " + std::to_string(n) + " needs " + gib(p.memory.total) + " of device memory; the device has " +
                          gib(p.memory.device_free) + " free");
  return p;
}

bool Planner::may_read_texture(size_t i) const {
  const Layer& l = model_->layers[i];
  if (backend_ != BackendKind::cuda || (l.kind() != LayerKind::conv && l.kind() != LayerKind::fc)) return false;
  const int forced = l.kind() == LayerKind::conv ? opts_.conv_variant : opts_.fc_variant;
  if (forced != kAutoVariant) return registry().version(l.kind(), forced, "--conv-variant").texture;
  if (!tuning_) return false;  // the heuristics never take the texture versions
  const std::string sig = tuning_signature(*model_, i, opts_.precision, opts_.weights);
  for (const TuningEntry& e : tuning_->entries)
    if (e.signature == sig)
      if (const Impl* impl = registry().find(l.kind(), BackendKind::cuda, e.best); impl && impl->texture) return true;
  return false;
}

std::string Planner::concurrency_hazard(int n) const {
  if (backend_ != BackendKind::cuda) return "";
  const Pass& p = pass(n);
  std::map<std::string, std::vector<std::string>> users;  // bank -> the layers that write it
  for (const PlanStep& st : p.steps) {
    if (!st.runs() || !st.impl || !st.impl->constant_bank) continue;
    const Layer& l = model_->layers[st.layer];
    std::string bank = st.impl->constant_bank(l);
    if (bank.empty()) continue;
    const std::string who = "'" + l.name + "' (conv v" + std::to_string(st.impl->number) + ")";
    if (bank.size() > 10 && bank.compare(bank.size() - 10, 10, " in chunks") == 0)
      return "layer " + who + " copies its weights in chunks through the one __constant__ bank every instance shares";
    users[bank].push_back(who);
  }
  for (const auto& [bank, who] : users)
    if (who.size() >= 2) return "layers " + who[0] + " and " + who[1] + " take turns in one __constant__ weight bank that every instance shares";
  return "";
}

}  // namespace bs
