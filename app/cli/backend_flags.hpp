// The flags that choose kernels inside a backend, shared by infer, sweep, profile, classify and tune. Each
// belongs to one backend; giving one that the chosen backend does not use is an error naming the flag and the
// backend (it would otherwise run and silently change nothing).
#pragma once
#include <CLI/CLI.hpp>
#include <string>

#include "kernels/exec/backend.hpp"

namespace bs {

struct BackendFlags {
  std::string conv_variant;  // cuda
  std::string fc_variant;    // cuda
  std::string tuning;        // cuda: tuning table for auto
  std::string cudnn_algos;   // cudnn; empty = fastest
  int threads = 0;           // cpu, cpu-ref: 0 = all cores
  std::string precision = "fp32";  // cuda, cudnn: fp32 | tf32 (the cpu backends are the fp32 reference)
  std::string input_precision = "fp32";  // cuda, cudnn: fp32 | the run's 16-bit precision (app/exec/input_precision.hpp)

  void add_to(CLI::App& app, bool with_fc = true);
  // `backend` resolved (not "auto"): fails on the first flag it does not use, and on a variant that is not on
  // its menu.
  void validate(const std::string& backend) const;
  BackendOptions options() const;
  // What the results' variant and fc_variant columns say for `backend` (resolved): the cuda version or
  // "auto", "cudnn-fastest|exact", or empty where the backend has no menu.
  std::string conv_label(const std::string& backend) const;
  std::string fc_label(const std::string& backend) const;
};

}  // namespace bs
