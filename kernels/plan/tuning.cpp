#include "kernels/plan/tuning.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "kernels/plan/registry.hpp"
#include "weights_tools/error.hpp"
#include "weights_tools/io.hpp"

namespace bs {
namespace {

const char* kFormat = "batchscope-tuning";
constexpr int kVersion = 1;

// Whether version v is on the cuda menu of the entry's kind ("conv" or "fc", as the file names it). A build without
// the cuda backend has no menus to check against: it takes any positive number.
bool on_menu(const std::string& kind, int v) {
  const LayerKind op = kind == "conv" ? LayerKind::conv : LayerKind::fc;
  if (registry().menu(op, BackendKind::cuda).empty()) return v > 0;
  return v > 0 && registry().find(op, BackendKind::cuda, v) != nullptr;
}

}  // namespace

std::optional<int> TuningTable::lookup(const std::string& kind, const std::string& signature, int n) const {
  const TuningEntry* best = nullptr;
  double best_d = 0;
  for (const TuningEntry& e : entries) {
    if (e.kind != kind || e.signature != signature) continue;
    const double d = std::fabs(std::log2(static_cast<double>(e.batch)) - std::log2(static_cast<double>(n)));
    if (!best || d < best_d - 1e-12 || (std::fabs(d - best_d) <= 1e-12 && e.batch > best->batch)) {
      best = &e;
      best_d = d;
    }
  }
  if (!best) return std::nullopt;
  return best->best;
}

std::vector<std::string> stale_entries(const TuningTable& t) {
  std::vector<std::string> out;
  for (const TuningEntry& e : t.entries)
    for (const TuningEntry& o : t.entries) {
      if (&o == &e || o.kind != e.kind || o.signature != e.signature) continue;
      if (e.times_ms.count(o.best) || e.unsupported.count(o.best)) continue;
      out.push_back(e.kind + " '" + e.signature + "' at batch " + std::to_string(e.batch) + " never measured v" +
                    std::to_string(o.best) + ", the choice at batch " + std::to_string(o.batch));
      break;  // one line per entry
    }
  return out;
}

double layer_error_budget(Precision p) {
  switch (p) {
    case Precision::tf32:
    case Precision::fp16: return 2e-3;
    case Precision::bf16: return 1.6e-2;
    case Precision::fp32: break;
  }
  return 1e-6;
}

int choose_best(const TuningEntry& e, double budget) {
  int best = 0, closest = 0;
  for (const auto& [v, ms] : e.times_ms) {
    const auto err = e.errors.find(v);
    if (err != e.errors.end() && (!closest || err->second < e.errors.at(closest))) closest = v;
    if (err != e.errors.end() && !(err->second <= budget)) continue;  // NaN is outside any budget
    if (!best || ms < e.times_ms.at(best)) best = v;
  }
  return best ? best : closest;
}

std::string tuning_signature(const Model& m, size_t i, Precision precision, WeightFormat weights) {
  const Layer& l = m.layers[i];
  std::string s;
  if (auto* c = std::get_if<ConvParams>(&l.op)) {
    s = "conv in(" + std::to_string(l.in.c) + "," + std::to_string(l.in.h) + "," + std::to_string(l.in.w) + ") m" +
        std::to_string(c->filters) + " k" + std::to_string(c->kh) + "x" + std::to_string(c->kw) + " s" + std::to_string(c->sh) +
        "x" + std::to_string(c->sw) + " p" + std::to_string(c->ph) + "x" + std::to_string(c->pw) +
        (c->asymmetric() ? "+" + std::to_string(c->pad_bottom()) + "x" + std::to_string(c->pad_right()) : "") + " g" +
        std::to_string(c->groups) + (c->dilated() ? " d" + std::to_string(c->dh) + "x" + std::to_string(c->dw) : "");
  } else if (auto* f = std::get_if<FcParams>(&l.op)) {
    s = "fc in" + std::to_string(l.in.size()) + " out" + std::to_string(f->outputs);
  } else {
    fail("layer '" + l.name + "'", "only convolution and fully connected layers have tuning signatures");
  }
  size_t j = i + 1;
  if (j < m.layers.size() && m.layers[j].kind() == LayerKind::act) {
    s += " +" + m.layers[j].type_name();
    ++j;
  }
  if (l.kind() == LayerKind::conv && j < m.layers.size()) {
    if (auto* p = std::get_if<PoolParams>(&m.layers[j].op))
      if (p->kind == PoolKind::max && p->kh == 2 && p->kw == 2 && p->sh == 2 && p->sw == 2 && !p->padded() && !p->ceil_mode)
        s += " +max_pool2x2";
  }
  if (precision != Precision::fp32) s += " @" + name_of(precision);  // fp32 tables keep the signatures they always had
  if (weights == WeightFormat::int8) s += " w8";  // other weights: a choice of its own, maybe a version only they allow
  return s;
}

TuningTable read_tuning(const std::string& path, const std::string& device_name) {
  const std::vector<uint8_t> bytes = read_file(path);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(bytes.begin(), bytes.end());
  } catch (const nlohmann::json::parse_error& e) {
    fail(path, "not a batchscope tuning table (not JSON: byte " + std::to_string(e.byte) + ")");
  }
  if (!j.is_object() || j.value("format", std::string()) != kFormat)
    fail(path, std::string("not a batchscope tuning table (no \"format\": \"") + kFormat + "\")");
  TuningTable t;
  try {
    const int version = j.at("version").get<int>();
    if (version != kVersion)
      fail(path, "tuning table version " + std::to_string(version) + "; this batchscope reads version " + std::to_string(kVersion));
    const auto& d = j.at("device");
    t.device.name = d.at("name").get<std::string>();
    t.device.compute_capability = d.value("compute_capability", std::string());
    t.device.sm_count = d.value("sm_count", 0);
    t.device.driver = d.value("driver", std::string());
    t.commit = j.value("commit", std::string());
    t.date = j.value("date", std::string());
    t.command = j.value("command", std::string());
    t.model = j.value("model", std::string());
    t.interrupted = j.value("interrupted", false);
    if (j.contains("environment") && j["environment"].is_object())
      for (const auto& [k, v] : j["environment"].items())
        if (v.is_string()) t.environment[k] = v.get<std::string>();
    size_t index = 0;
    for (const auto& e : j.at("entries")) {
      TuningEntry te;
      te.kind = e.at("kind").get<std::string>();
      te.layer = e.value("layer", std::string());
      te.signature = e.at("signature").get<std::string>();
      te.batch = e.at("batch").get<int>();
      te.best = e.at("best").get<int>();
      const std::string where = "entry " + std::to_string(index) + " (" + te.signature + ", batch " + std::to_string(te.batch) + ")";
      if (te.kind != "conv" && te.kind != "fc") fail(path, where + ": kind '" + te.kind + "', expected conv or fc");
      if (te.batch <= 0) fail(path, where + ": batch must be positive");
      if (!on_menu(te.kind, te.best)) fail(path, where + ": best version " + std::to_string(te.best) + " is not on the " + te.kind + " menu");
      const Impl* best = registry().find(te.kind == "conv" ? LayerKind::conv : LayerKind::fc, BackendKind::cuda, te.best);
      const bool w8 = te.signature.size() >= 3 && te.signature.compare(te.signature.size() - 3, 3, " w8") == 0;
      if (best && best->int8_weights && !w8)
        fail(path, where + ": best version " + std::to_string(te.best) + " reads 8-bit weights, but the signature is not one of "
                                                                          "--weights int8 (no ' w8')");
      const nlohmann::json times = e.value("times_ms", nlohmann::json::object()), why = e.value("unsupported", nlohmann::json::object());
      for (const auto& [k, v] : times.items()) te.times_ms[std::stoi(k)] = v.get<double>();
      for (const auto& [k, v] : why.items()) te.unsupported[std::stoi(k)] = v.get<std::string>();
      const nlohmann::json errors = e.value("errors", nlohmann::json::object());  // named: items() refers to it
      for (const auto& [k, v] : errors.items()) te.errors[std::stoi(k)] = v.get<double>();
      te.error_budget = e.value("error_budget", 0.0);
      if (te.error_budget < 0) fail(path, where + ": error_budget must not be negative");
      t.entries.push_back(std::move(te));
      ++index;
    }
  } catch (const nlohmann::json::exception& e) {
    fail(path, std::string("corrupt tuning table: ") + e.what());
  } catch (const std::invalid_argument&) {
    fail(path, "corrupt tuning table: a version key is not a number");
  } catch (const std::out_of_range&) {
    fail(path, "corrupt tuning table: a version key is out of range");
  }
  if (!device_name.empty() && t.device.name != device_name)
    fail(path, "tuning table measured on '" + t.device.name + "', this device is '" + device_name +
                   "'; run batchscope tune here or give another --tuning");
  return t;
}

std::string tuning_json(const TuningTable& t) {
  nlohmann::json j;
  j["format"] = kFormat;
  j["version"] = kVersion;
  j["device"] = {{"name", t.device.name}, {"compute_capability", t.device.compute_capability}, {"sm_count", t.device.sm_count},
                 {"driver", t.device.driver}};
  j["commit"] = t.commit;
  j["date"] = t.date;
  j["command"] = t.command;
  j["model"] = t.model;
  if (t.interrupted) j["interrupted"] = true;
  j["environment"] = t.environment;
  j["entries"] = nlohmann::json::array();
  for (const TuningEntry& e : t.entries) {
    nlohmann::json times = nlohmann::json::object(), unsupported = nlohmann::json::object();
    for (const auto& [v, ms] : e.times_ms) times[std::to_string(v)] = ms;
    for (const auto& [v, why] : e.unsupported) unsupported[std::to_string(v)] = why;
    nlohmann::json entry = {{"kind", e.kind}, {"layer", e.layer}, {"signature", e.signature}, {"batch", e.batch},
                            {"best", e.best}, {"times_ms", times}, {"unsupported", unsupported}};
    if (!e.errors.empty()) {
      nlohmann::json errors = nlohmann::json::object();
      for (const auto& [v, err] : e.errors) errors[std::to_string(v)] = err;
      entry["errors"] = errors;
      entry["error_budget"] = e.error_budget;
    }
    j["entries"].push_back(entry);
  }
  return j.dump(1) + "\n";
}

void write_tuning(const std::string& path, const TuningTable& t) {
  const std::string text = tuning_json(t);
  atomic_write_bytes(path, text.data(), text.size());
}

std::string default_tuning_path(const std::string& device_name) {
  std::string dir;
  if (const char* d = std::getenv("BATCHSCOPE_TUNING_DIR"); d && *d) dir = d;
  else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) dir = std::string(x) + "/batchscope";
  else if (const char* h = std::getenv("HOME"); h && *h) dir = std::string(h) + "/.cache/batchscope";
  else dir = ".";
  std::string slug;
  for (char c : device_name) {
    const bool alnum = std::isalnum(static_cast<unsigned char>(c));
    if (alnum) slug += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (!slug.empty() && slug.back() != '-') slug += '-';
  }
  while (!slug.empty() && slug.back() == '-') slug.pop_back();
  return dir + "/tuning-" + (slug.empty() ? "unknown-device" : slug) + ".json";
}

}  // namespace bs
