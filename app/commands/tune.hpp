// `batchscope tune`: times every convolution and fully connected version that supports each layer of a model
// at each batch size, on this GPU, and writes the tuning table that the cuda backend's auto reads
// (kernels/plan/tuning.hpp).
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "kernels/plan/options.hpp"

namespace bs {

struct TuneOptions {
  std::string model_dir;
  Precision precision = Precision::fp32;  // which versions are timed, and the signatures' " @tf32"
  WeightFormat weights = WeightFormat::native;  // int8: the quantised weights, their versions too, signatures " w8"
  std::vector<int> batches = {1, 4, 16, 64, 256, 1024};
  int reps = 5, warmup = 2;
  std::string out;  // default: default_tuning_path(device)
  std::vector<int> conv_variants, fc_variants;  // default: every version on the menu that runs in the precision
  double error_budget = 0;  // 0: layer_error_budget(precision)
  double cut = 20.0;  // a version slower than cut x the best so far after its first run is not repeated
  std::string command_line;
  const CLI::App* cmd = nullptr;

  void add_to(CLI::App& app);
  void validate() const;
};

int run_tune(const TuneOptions& o);

}  // namespace bs
