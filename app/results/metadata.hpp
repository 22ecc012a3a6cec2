// The JSON metadata written beside every sweep CSV: what ran, where, when, with which software, and whether
// the weights were real or synthetic.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "kernels/model/model.hpp"

namespace bs {

nlohmann::json host_info();                 // CPU model, cores, memory, OS
std::string git_commit();                   // the binaries' own commit, compiled in (app/build_info.hpp), "+dirty" marked
// Every variable of the environment that changes what runs or what is measured: BATCHSCOPE_* (the profiler's and
// scheduler's experiment knobs, fault injection, data and tuning folders, the tensor size cap), OMP_NUM_THREADS and
// CUDA_VISIBLE_DEVICES, as set for this run; every results JSON records them under "environment".
nlohmann::json environment_info();
std::string utc_now();                      // ISO 8601
nlohmann::json weights_info(const Model& m);  // {"kind": "real"|"synthetic", "note", "provenance"}

// This process's device for a rank's record: gpu_info() on a GPU backend, else {"cpu": model name}.
nlohmann::json rank_device(bool gpu_backend);
// "NVIDIA H200 00000000:1B:00.0" (name and PCI bus id) from rank_device()'s record, or "CPU".
std::string device_label(const nlohmann::json& device);
// The keys every results JSON starts with: tool, command, date, git_commit, version, environment, model, weights,
// inputs, backend, conv_variant, fc_variant.
nlohmann::json run_metadata(const std::string& tool, const std::string& command, const Model& m, const std::string& inputs,
                            const std::string& backend, const std::string& conv_variant, const std::string& fc_variant);

}  // namespace bs
