// The profiler that sees what nvprof saw: CUPTI's activity API records every kernel, memcpy, memset and
// runtime API call with timestamps. layer_begin/layer_end note each layer's host-side time window; a
// runtime API call that started inside a window belongs to that layer, and so does every GPU activity
// with the call's correlation id. (CUPTI's external correlation ids would do the same, with an extra
// record for every API call.) The error and event queries batchscope makes around every launch are its
// own instrumentation, not the workload's: they are left untraced, and their few microseconds count as
// "host" time. Libraries that launch through the driver API (cuBLAS's nvjet GEMMs for 16-bit operands use
// cuLaunchKernelEx) have no runtime call to tie their kernels to: the driver's launch calls alone are traced
// too, used for that tie only and not reported (the runtime call they sit in already is).
//
// CUPTI delivers buffers through C callbacks without a user pointer, so the completed buffers are parked
// in this file's one static collector (guarded by a mutex); only one CuptiProfiler may exist at a time.
#include <cuda_runtime.h>
#include <cupti.h>
#include <cxxabi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "kernels/cuda/check.hpp"
#include "kernels/profile/profile.hpp"
#include "weights_tools/error.hpp"

namespace bs {
namespace {

// Small, recycled, pre-touched buffers: CUPTI asks for a buffer from inside the CUDA call that produces
// the first record after a flush, so a large fresh buffer would bill its page faults to that call (an
// 8 MB buffer cost ~0.4 ms per run on an H200).
constexpr size_t kBufferBytes = 1 << 20;

struct Collector {
  std::mutex mu;
  std::vector<uint8_t*> free_buffers;
  std::vector<ProfileRecord> records;
  std::vector<std::pair<double, uint32_t>> driver_launches;  // (start, correlation id): for attribution only
  bool active = false;
  bool rezero = false;  // clear the written part of a buffer before it is handed out again
  // Names are the same few strings over and over: demangled once per kernel (kernel_name) and API call (api_name).
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, std::string, NameHash, std::equal_to<>> kernel_names;
  std::unordered_map<uint32_t, std::string> api_names;
};
Collector& collector() {
  static Collector c;
  return c;
}

std::string demangle(const char* name) {
  int status = 0;
  char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string s = (status == 0 && d) ? d : name;
  std::free(d);
  for (const char* ns : {"bs::cuda::(anonymous namespace)::", "bs::cuda::", "(anonymous namespace)::", "bs::"})
    for (size_t at; (at = s.find(ns)) != std::string::npos;) s.erase(at, std::strlen(ns));
  if (s.rfind("void ", 0) == 0) s = s.substr(5);
  // Keep the function name and its template arguments, drop the parameter list.
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<') ++depth;
    else if (s[i] == '>') --depth;
    else if (s[i] == '(' && depth == 0) return s.substr(0, i);
  }
  return s;
}

std::string runtime_name(uint32_t cbid) {
  const char* name = nullptr;
  if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &name) != CUPTI_SUCCESS || !name) return "cuda?";
  std::string s = name;
  if (auto v = s.find("_v"); v != std::string::npos) s = s.substr(0, v);  // cudaMalloc_v3020 -> cudaMalloc
  return s;
}

const std::string& kernel_name(Collector& c, const char* mangled) {
  auto it = c.kernel_names.find(std::string_view(mangled));
  if (it == c.kernel_names.end()) it = c.kernel_names.emplace(mangled, demangle(mangled)).first;
  return it->second;
}

const std::string& api_name(Collector& c, uint32_t cbid) {
  auto it = c.api_names.find(cbid);
  if (it == c.api_names.end()) it = c.api_names.emplace(cbid, runtime_name(cbid)).first;
  return it->second;
}

const char* copy_kind(uint8_t k) {
  switch (k) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "HtoH";
    default: return "other";
  }
}

uint8_t* new_buffer() {
  auto* b = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  std::memset(b, 0, kBufferBytes);  // touch every page now
  return b;
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  Collector& c = collector();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    if (!c.free_buffers.empty()) {
      *buffer = c.free_buffers.back();
      c.free_buffers.pop_back();
    } else {
      *buffer = nullptr;
    }
  }
  if (!*buffer) *buffer = new_buffer();
  *size = kBufferBytes;
  *max_records = 0;
}

// The driver API's kernel launches (the only driver calls traced).
const CUpti_CallbackId kDriverLaunches[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz, CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz};

// The fields every record of work on the device carries (kernel, copy, memset): its span in seconds, its stream
// and graph node; returns its correlation id.
template <class DeviceActivity>
uint32_t device_span(ProfileRecord& r, const DeviceActivity& a) {
  r.start = a.start * 1e-9;
  r.end = a.end * 1e-9;
  r.stream = a.streamId;
  r.graph_node = a.graphNodeId;
  return a.correlationId;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  Collector& c = collector();
  std::lock_guard<std::mutex> lock(c.mu);
  CUpti_Activity* rec = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
    ProfileRecord r;
    uint32_t corr = 0;
    switch (rec->kind) {
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      case CUPTI_ACTIVITY_KIND_KERNEL: {
        auto* k = reinterpret_cast<CUpti_ActivityKernel10*>(rec);
        r.type = RecordType::kernel;
        r.name = kernel_name(c, k->name);
        corr = device_span(r, *k);
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        auto* m = reinterpret_cast<CUpti_ActivityMemcpy6*>(rec);
        r.type = RecordType::memcpy;
        r.copy_kind = copy_kind(m->copyKind);
        r.name = "[CUDA memcpy " + r.copy_kind + "]";
        r.bytes = m->bytes;
        corr = device_span(r, *m);
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        auto* m = reinterpret_cast<CUpti_ActivityMemset4*>(rec);
        r.type = RecordType::memset;
        r.name = "[CUDA memset]";
        r.bytes = m->bytes;
        corr = device_span(r, *m);
        break;
      }
      case CUPTI_ACTIVITY_KIND_DRIVER: {
        auto* a = reinterpret_cast<CUpti_ActivityAPI*>(rec);
        if (std::find(std::begin(kDriverLaunches), std::end(kDriverLaunches), a->cbid) == std::end(kDriverLaunches)) continue;
        c.driver_launches.emplace_back(a->start * 1e-9, static_cast<uint32_t>(a->correlationId));
        continue;
      }
      case CUPTI_ACTIVITY_KIND_RUNTIME: {
        auto* a = reinterpret_cast<CUpti_ActivityAPI*>(rec);
        r.type = RecordType::api;
        r.name = api_name(c, a->cbid);
        r.start = a->start * 1e-9;
        r.end = a->end * 1e-9;
        r.thread = a->threadId;
        corr = a->correlationId;
        break;
      }
      default:
        continue;
    }
    r.correlation = corr;
    c.records.push_back(std::move(r));
  }
  if (c.rezero) std::memset(buffer, 0, valid);
  c.free_buffers.push_back(buffer);  // recycled, never returned to the allocator while profiling
}

const CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                     CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_KERNEL};

class CuptiProfiler : public Profiler {
 public:
  CuptiProfiler() {
    Collector& c = collector();
    if (c.active) fail("profiler", "only one CUPTI profiler may run at a time");
    {
      std::lock_guard<std::mutex> lock(c.mu);
      while (c.free_buffers.size() < 8) c.free_buffers.push_back(new_buffer());
    }
    // BATCHSCOPE_CUPTI_KINDS (e.g. "kernel,memcpy") narrows what is traced: a knob for measuring where the
    // profiler's own overhead comes from (experiments/profiler-overhead.md), not for normal runs.
    // "serial-kernel" traces kernels with CUPTI_ACTIVITY_KIND_KERNEL instead of CONCURRENT_KERNEL.
    const char* only = std::getenv("BATCHSCOPE_CUPTI_KINDS");
    sel_ = only ? only : "kernel,memcpy,memset,runtime,driver,graph";
    attach();
    c.active = true;
    uint32_t v = 0;
    cuptiGetVersion(&v);
    version_ = v;
  }
  ~CuptiProfiler() override {
    if (subscriber_) cuptiUnsubscribe(subscriber_);
    if (!detached_) {  // any CUPTI call would attach it again
      cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
      disable_kinds();
    }
    Collector& c = collector();
    std::lock_guard<std::mutex> lock(c.mu);
    c.records.clear();
    c.driver_launches.clear();
    c.active = false;
    c.rezero = false;
  }

  // Between runs only. pause() detaches CUPTI from the process (cuptiFinalize) once every record so far is in the
  // collector, and resume() attaches it again. Turning the record kinds off instead left the untraced passes 6-12 %
  // slower than without a profiler at batch 1 (H100, ECE 408); detached they are within 2 % (profiler-overhead.md).
  // Graph node ids survive it, so replayed kernels keep their layers. While paused, nothing may call CUPTI (no runs,
  // no layer windows, no collect()): any CUPTI call attaches it again, without this profiler's set-up.
  void pause() override {
    CUDA_CHECK(cudaDeviceSynchronize());
    CUPTI_CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    if (subscriber_) cuptiUnsubscribe(subscriber_);
    subscriber_ = nullptr;
    CUPTI_CHECK(cuptiFinalize());
    detached_ = true;
  }
  void resume() override {
    attach();
    detached_ = false;
  }

  void layer_begin(int layer) override {
    windows_.push_back({layer, now(), 0.0});
    open_layer_ = layer;
  }
  void layer_end(int) override {
    windows_.back().end = now();
    open_layer_ = -1;
  }
  void cpu_phase(const std::string& name, int layer, double start, double end) override {
    std::lock_guard<std::mutex> lock(collector().mu);
    collector().records.push_back(cpu_record(name, layer, start, end));
  }
  double now() const override {
    uint64_t t = 0;
    CUPTI_CHECK(cuptiGetTimestamp(&t));
    return t * 1e-9;
  }
  void begin_run() override {
    runs_.emplace_back();
    runs_.back().t0 = now();
  }
  void end_run() override { runs_.back().t1 = now(); }
  std::vector<Run> collect() override {
    CUDA_CHECK(cudaDeviceSynchronize());
    CUPTI_CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    Collector& c = collector();
    std::lock_guard<std::mutex> lock(c.mu);
    attribute_layers(c.records, c.driver_launches);
    if (const char* dump = std::getenv("BATCHSCOPE_CUPTI_DUMP")) dump_records(dump, c.records, c.driver_launches);
    c.driver_launches.clear();
    // A record belongs to the run in whose window it started. The runs are in time order and do not overlap, so
    // a binary search finds it (a linear scan per record was quadratic: minutes at --max-reps 100000).
    for (ProfileRecord& r : c.records) {
      auto it = std::upper_bound(runs_.begin(), runs_.end(), r.start, [](double t, const Run& run) { return t < run.t0; });
      if (it != runs_.begin() && r.start < std::prev(it)->t1) std::prev(it)->records.push_back(std::move(r));
    }
    c.records.clear();
    windows_.clear();
    return std::move(runs_);
  }
  std::string kind() const override {
    return "CUPTI activity API " + std::to_string(version_);
  }

 private:
  // Sets CUPTI up: attributes, buffer callbacks, the kinds in sel_, the graph-node subscription and the flush period.
  void attach() {
    set_attributes();
    CUPTI_CHECK(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
    enable_kinds();
    // CUDA graphs (--cuda-graph): a replayed kernel's correlation id is the graph launch's, outside every layer, so
    // the layer comes from the graph node that ran it instead: nodes created while a layer's window is open (during
    // stream capture) belong to that layer, and so do their clones in the instantiated graph. Without the callback
    // subscription (another tool holds CUPTI's one subscriber; or BATCHSCOPE_CUPTI_KINDS without "graph") replayed
    // kernels stay outside layers.
    if (sel_.find("graph") != std::string::npos &&
        cuptiSubscribe(&subscriber_, reinterpret_cast<CUpti_CallbackFunc>(&CuptiProfiler::on_resource), this) == CUPTI_SUCCESS) {
      cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED);
      cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED);
    } else {
      subscriber_ = nullptr;
    }
    set_flush_period();
  }

  // Turns on the record kinds that sel_ names (the constructor, and resume() after pause()). Enabling a kind turns on
  // every call of it again, so the calls left untraced are turned off after it, each time.
  void enable_kinds() const {
    const std::string& sel = sel_;
    const char* names[] = {"kernel", "memcpy", "memset", "runtime"};
    for (int i = 0; i < 4; ++i)
      if (sel.find(names[i]) != std::string::npos)
        CUPTI_CHECK(cuptiActivityEnable(i == 0 && sel.find("serial-kernel") != std::string::npos ? CUPTI_ACTIVITY_KIND_KERNEL : kKinds[i]));
    if (sel.find("driver") != std::string::npos) {
      // Enabling single driver calls without the kind traced nothing (CUPTI 13.0, H100): enable the kind, then
      // turn every call but the launches off again.
      CUPTI_CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER));
      for (CUpti_CallbackId id = 1; id < CUPTI_DRIVER_TRACE_CBID_SIZE; ++id)
        if (std::find(std::begin(kDriverLaunches), std::end(kDriverLaunches), id) == std::end(kDriverLaunches))
          cuptiActivityEnableDriverApi(id, 0);  // ids that no longer exist are refused, harmlessly
    }
    for (CUpti_CallbackId id : {CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020, CUPTI_RUNTIME_TRACE_CBID_cudaPeekAtLastError_v3020,
                                CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020, CUPTI_RUNTIME_TRACE_CBID_cudaEventElapsedTime_v3020,
                                CUPTI_RUNTIME_TRACE_CBID_cudaEventElapsedTime_v12080})
      CUPTI_CHECK(cuptiActivityEnableRuntimeApi(id, 0));
  }
  void disable_kinds() const {
    for (CUpti_ActivityKind k : kKinds) cuptiActivityDisable(k);  // disabling a kind never enabled is harmless
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER);
  }

  // BATCHSCOPE_CUPTI_ATTRS (e.g. "pinned,zeroed"): CUPTI activity attributes to try against the profiler's
  // overhead (experiments/profiler-overhead.md), not for normal runs. "pinned": CUPTI keeps its kernel and
  // copy timestamps in pinned host memory instead of device memory; "zeroed": our buffers come zeroed, so
  // CUPTI need not clear them on the traced thread; "shared-buffer": one activity buffer for all threads
  // instead of one per thread.
  static void set_attributes() {
    const char* env = std::getenv("BATCHSCOPE_CUPTI_ATTRS");
    const std::string sel = env ? env : "";
    auto set = [](CUpti_ActivityAttribute a, uint8_t v) {
      size_t size = sizeof v;
      CUPTI_CHECK(cuptiActivitySetAttribute(a, &size, &v));
    };
    if (sel.find("pinned") != std::string::npos) set(CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED, 1);
    if (sel.find("zeroed") != std::string::npos) {
      set(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, 1);
      collector().rezero = true;
    }
    if (sel.find("shared-buffer") != std::string::npos) set(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, 0);
    // "devbuf=BYTES": the size of CUPTI's device buffers for GPU timestamps; "prealloc=N": how many it allocates up front.
    for (auto [key, attr] : {std::pair{"devbuf=", CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE}, std::pair{"prealloc=", CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE}})
      if (size_t v = attrs_number(key)) {
        size_t size = sizeof v;
        CUPTI_CHECK(cuptiActivitySetAttribute(attr, &size, &v));
      }
  }
  // "flush=N" in BATCHSCOPE_CUPTI_ATTRS: CUPTI's worker thread flushes every N ms instead of by its own heuristics
  // (cuptiActivityFlushPeriod; set once the kinds are enabled).
  static void set_flush_period() {
    if (const size_t ms = attrs_number("flush=")) CUPTI_CHECK(cuptiActivityFlushPeriod(static_cast<uint32_t>(ms)));
  }
  // The number after `key` ("devbuf=") in BATCHSCOPE_CUPTI_ATTRS; 0 where it is absent.
  static size_t attrs_number(const char* key) {
    const char* env = std::getenv("BATCHSCOPE_CUPTI_ATTRS");
    const std::string sel = env ? env : "";
    const size_t at = sel.find(key);
    return at == std::string::npos ? 0 : std::strtoull(sel.c_str() + at + std::strlen(key), nullptr, 10);
  }

  // BATCHSCOPE_CUPTI_DUMP=FILE: every record as a tab-separated line (type, layer, start, end, correlation, name),
  // then the driver launches and the layer windows: a debugging knob, not for normal runs.
  void dump_records(const char* path, const std::vector<ProfileRecord>& records, const std::vector<std::pair<double, uint32_t>>& driver) const {
    FILE* f = std::fopen(path, "a");
    if (!f) return;
    for (const ProfileRecord& r : records)
      std::fprintf(f, "%d\t%d\t%.9f\t%.9f\t%u\t%s\n", static_cast<int>(r.type), r.layer, r.start, r.end, r.correlation, r.name.c_str());
    for (const auto& [t, corr] : driver) std::fprintf(f, "driver\t-\t%.9f\t-\t%u\tlaunch\n", t, corr);
    for (const Window& w : windows_) std::fprintf(f, "window\t%d\t%.9f\t%.9f\t-\t-\n", w.layer, w.start, w.end);
    std::fclose(f);
  }

  struct Window {
    int layer;
    double start, end;
  };

  static void CUPTIAPI on_resource(void* self, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* cbdata) {
    if (domain != CUPTI_CB_DOMAIN_RESOURCE) return;
    auto* p = static_cast<CuptiProfiler*>(self);
    const auto* g = static_cast<const CUpti_GraphData*>(static_cast<const CUpti_ResourceData*>(cbdata)->resourceDescriptor);
    if (!g) return;
    uint64_t id = 0;
    if (cuptiGetGraphNodeId(g->node, &id) != CUPTI_SUCCESS) return;
    std::lock_guard<std::mutex> lock(p->graph_mu_);
    if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED && p->open_layer_ >= 0) {
      p->node_layer_[id] = p->open_layer_;
    } else if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED && g->originalNode) {
      uint64_t orig = 0;
      if (cuptiGetGraphNodeId(g->originalNode, &orig) != CUPTI_SUCCESS) return;
      if (auto it = p->node_layer_.find(orig); it != p->node_layer_.end()) p->node_layer_[id] = it->second;
    }
  }

  // API calls inside a layer's window name that layer; GPU activities inherit it by correlation id.
  void attribute_layers(std::vector<ProfileRecord>& records, const std::vector<std::pair<double, uint32_t>>& driver) const {
    std::map<uint32_t, int> by_corr;
    auto layer_at = [&](double t) {
      auto w = std::upper_bound(windows_.begin(), windows_.end(), t, [](double x, const Window& y) { return x < y.start; });
      return w != windows_.begin() && t < std::prev(w)->end ? std::prev(w)->layer : -1;
    };
    for (const auto& [start, corr] : driver)
      if (const int l = layer_at(start); l >= 0) by_corr[corr] = l;
    for (ProfileRecord& r : records) {
      if (r.type != RecordType::api) continue;
      if (const int l = layer_at(r.start); l >= 0) {
        r.layer = l;
        by_corr[r.correlation] = l;
      }
    }
    std::lock_guard<std::mutex> lock(graph_mu_);
    for (ProfileRecord& r : records) {
      if (r.type == RecordType::api || r.type == RecordType::cpu) continue;
      if (r.graph_node) {
        if (auto it = node_layer_.find(r.graph_node); it != node_layer_.end()) r.layer = it->second;
      } else if (auto it = by_corr.find(r.correlation); it != by_corr.end()) {
        r.layer = it->second;
      }
    }
  }

  std::vector<Run> runs_;
  std::string sel_;  // which kinds are traced (BATCHSCOPE_CUPTI_KINDS; all by default)
  bool detached_ = false;  // between pause() and resume()
  CUpti_SubscriberHandle subscriber_ = nullptr;
  std::atomic<int> open_layer_{-1};      // the layer whose window is open, -1 between layers
  mutable std::mutex graph_mu_;
  std::map<uint64_t, int> node_layer_;  // graph node id (captured, or cloned into an instantiated graph) -> layer
  std::vector<Window> windows_;  // in time order
  uint32_t version_ = 0;
};

}  // namespace

std::unique_ptr<Profiler> make_cupti_profiler() { return std::make_unique<CuptiProfiler>(); }

}  // namespace bs
