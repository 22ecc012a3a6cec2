// `batchscope plan`'s table and JSON (plan.hpp). The JSON is also what each sweep point records.
#include <algorithm>
#include <cstdio>
#include <vector>

#include "kernels/plan/plan.hpp"

namespace bs {
namespace {

std::string bytes_text(size_t b) {
  char buf[32];
  if (b >= (size_t{1} << 30)) std::snprintf(buf, sizeof buf, "%.2f GiB", b / 1073741824.0);
  else if (b >= (size_t{1} << 20)) std::snprintf(buf, sizeof buf, "%.1f MiB", b / 1048576.0);
  else if (b >= 1024) std::snprintf(buf, sizeof buf, "%.1f KiB", b / 1024.0);
  else std::snprintf(buf, sizeof buf, "%zu B", b);
  return buf;
}

std::string shape_text(Shape s) { return s.h == 1 && s.w == 1 ? "(" + std::to_string(s.c) + ")" : to_string(s); }

std::string chunks_text(const std::vector<int>& c) {
  std::string s;
  for (int k : c) s += (s.empty() ? "" : ", ") + std::to_string(k);
  return s;
}

// The rows as a table, each column as wide as its widest cell (right-aligned where `right`), indented two spaces.
std::string aligned(const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& right) {
  std::vector<size_t> width(right.size(), 0);
  for (const auto& r : rows)
    for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  std::string s;
  for (const auto& r : rows) {
    std::string line = " ";
    for (size_t c = 0; c < r.size(); ++c) {
      const std::string pad(width[c] - r[c].size(), ' ');
      line += " " + (right[c] ? pad + r[c] : r[c] + pad);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    s += line + "\n";
  }
  return s;
}

nlohmann::json shape_json(Shape s) { return {s.c, s.h, s.w}; }


}  // namespace

std::string plan_table(const Plan& p, const Model& m) {
  const BackendOptions& o = p.options;
  std::string s = "plan: " + p.model + ", batch " + std::to_string(p.batch) + " on " + name_of(p.backend) + " (" + p.device +
                  "), precision " + name_of(o.precision);
  if (o.weights == WeightFormat::int8) s += ", weights int8 (per output channel, quantised at load)";
  if (is_gpu(p.backend)) {
    s += ", input " + name_of(o.input_precision) + ", transfers " + name_of(o.transfers);
    if (o.transfers == Transfers::overlapped) s += " (chunks " + chunks_text(p.chunks) + "; " + std::to_string(p.streams) + " streams)";
    s += std::string(", host memory ") + (o.pinned_host ? "pinned" : "pageable") + ", CUDA graph " + (o.cuda_graph ? "on" : "off");
    if (o.copies == Copies::kernel) s += ", copies by kernels";
  }
  s += "\n";
  if (p.backend == BackendKind::cuda) s += "tuning table: " + p.tuning + "\n";
  if (p.backend == BackendKind::cudnn) s += "cuDNN algorithms: " + name_of(o.cudnn_algos) + " policy, found at the first run\n";
  const bool device = is_gpu(p.backend);  // the CPU backends keep no workspace or prepared weights
  for (const Pass& pass : p.passes) {
    if (p.passes.size() > 1 || pass.images != p.batch) s += "pass of " + std::to_string(pass.images) + " images\n";
    std::vector<std::vector<std::string>> rows = {{"#", "layer", "type", "implementation", "why", "in -> out"}};
    if (device) rows[0].insert(rows[0].end(), {"workspace", "prepared"});
    for (const PlanStep& st : pass.steps) {
      const Layer& l = m.layers[st.layer];
      rows.push_back({std::to_string(st.layer), l.name, l.type_name(), st.describe, st.runs() ? why_name(st.why) : "",
                      shape_text(l.in) + " -> " + shape_text(l.out)});
      if (device)
        rows.back().insert(rows.back().end(), {st.runs() ? bytes_text(sizeof(float) * st.workspace_floats) : "",
                                               st.runs() ? bytes_text(sizeof(float) * st.prepared_floats) : ""});
    }
    s += aligned(rows, device ? std::vector<bool>{true, false, false, false, false, false, true, true}
                              : std::vector<bool>{true, false, false, false, false, false});
  }
  if (is_gpu(p.backend)) {
    const PlanMemory& mem = p.memory;
    s += "device memory: " + bytes_text(mem.total) + " (weights " + bytes_text(mem.weights) + ", prepared weights " +
         bytes_text(mem.prepared) + ", input " + bytes_text(mem.input) + ", activations " + bytes_text(mem.activations) +
         ", workspace " + bytes_text(mem.workspace) + (mem.output ? ", output " + bytes_text(mem.output) : "") + "); " +
         bytes_text(mem.device_free) + " free\n";
  }
  return s;
}

nlohmann::json plan_json(const Plan& p, const Model& m) {
  const BackendOptions& o = p.options;
  nlohmann::json j;
  j["model"] = p.model;
  j["device"] = p.device;
  j["backend"] = name_of(p.backend);
  j["batch"] = p.batch;
  j["precision"] = name_of(o.precision);
  j["weights"] = name_of(o.weights);
  if (is_gpu(p.backend)) {
    j["input_precision"] = name_of(o.input_precision);
    j["transfers"] = name_of(o.transfers);
    j["host_memory"] = o.pinned_host ? "pinned" : "pageable";
    j["cuda_graph"] = o.cuda_graph;
    j["copies"] = name_of(o.copies);
    j["chunks"] = p.chunks;
    j["streams"] = p.streams;
  }
  if (p.backend == BackendKind::cuda) {
    j["conv_variant"] = o.conv_variant ? std::to_string(o.conv_variant) : "auto";
    j["fc_variant"] = o.fc_variant ? std::to_string(o.fc_variant) : "auto";
    j["tuning"] = p.tuning;
  }
  if (p.backend == BackendKind::cudnn) j["cudnn_algos"] = name_of(o.cudnn_algos);
  if (!is_gpu(p.backend)) j["threads"] = o.threads;
  nlohmann::json passes = nlohmann::json::array();
  for (const Pass& pass : p.passes) {
    nlohmann::json layers = nlohmann::json::array();
    for (const PlanStep& st : pass.steps) {
      const Layer& l = m.layers[st.layer];
      nlohmann::json L = {{"index", st.layer}, {"name", l.name}, {"type", l.type_name()}, {"implementation", st.describe}};
      if (st.runs()) {
        L["impl"] = {{"name", st.impl->name}, {"number", st.impl->number}, {"math", st.impl->math}};
        L["why"] = why_name(st.why);
        nlohmann::json fused = nlohmann::json::array();
        for (size_t k = 1; k <= st.absorbs; ++k) fused.push_back(m.layers[st.layer + k].name);
        L["fused"] = fused;
        if (st.epi.has_act || st.epi.pool2x2)
          L["epilogue"] = {{"activation", st.epi.has_act ? m.layers[st.layer + 1].type_name() : "none"}, {"pool2x2", st.epi.pool2x2}};
        L["workspace_bytes"] = sizeof(float) * st.workspace_floats;
        L["prepared_bytes"] = sizeof(float) * st.prepared_floats;
      } else {
        L["fused_into"] = m.layers[st.fused_into].name;
      }
      L["input"] = {{"shape", shape_json(l.in)}, {"stored", shape_json(st.stored_in)}, {"layout", layout_name(st.in_layout, o.precision)}};
      L["output"] = {{"shape", shape_json(l.out)}, {"layout", layout_name(st.out_layout, o.precision)}};
      layers.push_back(L);
    }
    passes.push_back({{"images", pass.images}, {"workspace_bytes", sizeof(float) * pass.workspace_floats}, {"layers", layers}});
  }
  j["passes"] = passes;
  if (is_gpu(p.backend)) {
    const PlanMemory& mem = p.memory;
    j["memory"] = {{"weights_bytes", mem.weights},         {"prepared_bytes", mem.prepared}, {"input_bytes", mem.input},
                   {"activations_bytes", mem.activations}, {"workspace_bytes", mem.workspace}, {"output_bytes", mem.output},
                   {"total_bytes", mem.total},             {"device_free_bytes", mem.device_free}};
  }
  return j;
}

}  // namespace bs
