#include "app/results/metadata.hpp"
#include "app/build_info.hpp"
#include "app/exec/install_paths.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <array>
#include <unistd.h>
#include <cstdlib>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "kernels/exec/device_info.hpp"

namespace bs {

nlohmann::json host_info() {
  std::string cpu = "unknown";
  std::ifstream ci("/proc/cpuinfo");
  for (std::string line; std::getline(ci, line);)
    if (line.rfind("model name", 0) == 0) {
      cpu = line.substr(line.find(':') + 2);
      break;
    }
  utsname u{};
  uname(&u);
  return {{"cpu", cpu},
          {"cores", sysconf(_SC_NPROCESSORS_ONLN)},
          {"memory_bytes", static_cast<double>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE)},
          {"os", std::string(u.sysname) + " " + u.release},
          {"hostname", u.nodename}};
}

std::string git_commit() { return build_commit(); }

nlohmann::json environment_info() {
  nlohmann::json j = nlohmann::json::object();
  for (char** e = environ; e && *e; ++e) {
    const std::string kv = *e;
    if (kv.rfind("BATCHSCOPE_", 0) != 0 && kv.rfind("OMP_NUM_THREADS=", 0) != 0 && kv.rfind("CUDA_VISIBLE_DEVICES=", 0) != 0) continue;
    const size_t eq = kv.find('=');
    j[kv.substr(0, eq)] = eq == std::string::npos ? "" : kv.substr(eq + 1);
  }
  return j;
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

nlohmann::json weights_info(const Model& m) {
  const bool synthetic = m.weights_note.rfind("synthetic", 0) == 0;
  nlohmann::json j = {{"kind", synthetic ? "synthetic" : "real"}, {"note", m.weights_note}};
  std::ifstream in(std::filesystem::path(m.dir) / "model.json");
  try {
    nlohmann::json mj = nlohmann::json::parse(in);
    if (mj.contains("provenance")) j["provenance"] = mj["provenance"];
  } catch (const std::exception&) {
  }
  return j;
}

nlohmann::json rank_device(bool gpu_backend) {
  return gpu_backend ? gpu_info() : nlohmann::json{{"cpu", host_info().value("cpu", "")}};
}

std::string device_label(const nlohmann::json& d) {
  if (!d.contains("name")) return "CPU";
  return d["name"].get<std::string>() + (d.contains("pci_bus_id") ? " " + d["pci_bus_id"].get<std::string>() : "");
}

nlohmann::json run_metadata(const std::string& tool, const std::string& command, const Model& m, const std::string& inputs,
                            const std::string& backend, const std::string& conv_variant, const std::string& fc_variant) {
  nlohmann::json j;
  j["tool"] = tool;
  j["command"] = command;
  j["date"] = utc_now();
  j["git_commit"] = git_commit();
  j["version"] = build_info().version;
  j["environment"] = environment_info();
  j["model"] = {{"name", m.name}, {"dir", m.dir}, {"flops_per_image", m.flops_per_image()}};
  j["weights"] = weights_info(m);
  j["inputs"] = inputs;
  j["backend"] = backend;
  j["conv_variant"] = conv_variant;
  j["fc_variant"] = fc_variant;
  return j;
}

}  // namespace bs
