// The flags that say how a model runs, shared by infer, classify, sweep, profile, throughput and plan: the backend, the
// kernel choices (each belongs to one backend), the precisions, and for the GPU backends the transfers, host memory,
// chunks, graph capture and copy mode. Parsed once into typed values (app/cli/flags.hpp); validate() refuses, naming the flag,
// every flag the resolved backend or mode does not use (it would otherwise run and silently change nothing).
#pragma once
#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "kernels/exec/backend.hpp"

namespace bs {

struct RunFlags {
  // What a subcommand offers (set before add_to).
  struct Scope {
    std::optional<BackendKind> default_backend;  // nullopt: auto (cuda where a GPU exists, else cpu)
    bool transfers = false;                      // --transfers, --host-memory, --chunk, --cuda-graph, --copies
    bool per_layer = true;                       // --transfers per-layer allowed
    HostMemory default_host_memory = HostMemory::pageable;
  };

  std::optional<BackendKind> backend;  // nullopt: auto
  int conv_variant = 0, fc_variant = 0;  // cuda: versions, 0 = auto
  std::string tuning;                    // cuda: the tuning table auto reads
  CudnnAlgos cudnn_algos = CudnnAlgos::fastest;
  int threads = 0;  // cpu, cpu-ref: 0 = all cores
  Precision precision = Precision::fp32;
  InputPrecision input_precision = InputPrecision::fp32;
  WeightFormat weights = WeightFormat::native;  // cuda: int8, weight-only quantisation at load
  Transfers transfers = Transfers::resident;
  HostMemory host_memory = HostMemory::pageable;
  int chunk = 0;
  bool cuda_graph = false;
  Copies copies = Copies::engine;

  void add_to(CLI::App& app, const Scope& scope);
  // auto resolved: cuda where a GPU exists, else cpu.
  BackendKind resolve_backend() const;
  // Fails (UsageError naming the flag) on the first flag that `backend` (resolved) or the mode does not use, on a
  // version of another precision, and on combinations that exclude each other.
  void validate(BackendKind backend) const;
  BackendOptions options(BackendKind backend) const;
  // What the results' variant and fc_variant columns say for `backend`: the cuda version or "auto",
  // "cudnn-fastest|exact", or empty where the backend has no menu.
  std::string conv_label(BackendKind backend) const;
  std::string fc_label(BackendKind backend) const;
  // Whether a flag was given on the command line (rather than left at its default).
  bool given(const std::string& flag) const;

 private:
  const CLI::App* app_ = nullptr;
  Scope scope_;
};

}  // namespace bs
