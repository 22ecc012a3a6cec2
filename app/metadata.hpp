// The JSON metadata written beside every sweep CSV: what ran, where, when, with which software, and whether
// the weights were real or synthetic.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "kernels/model.hpp"

namespace bs {

nlohmann::json host_info();                 // CPU model, cores, memory, OS
std::string git_commit();                   // of the binaries (.device/COMMIT) or the source tree, or "unknown"
std::string utc_now();                      // ISO 8601
nlohmann::json weights_info(const Model& m);  // {"kind": "real"|"synthetic", "note", "provenance"}

}  // namespace bs
