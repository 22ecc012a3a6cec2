// `batchscope infer`: run a model over a labelled test set (printing the course's Op Time and Correctness lines) or
// over any (N, C, H, W) tensor from a .npy file (writing its logits or probabilities).
#pragma once
#include <CLI/CLI.hpp>
#include <string>

#include "app/cli/run_flags.hpp"

namespace bs {

struct InferOptions {
  std::string model_dir;
  int images = 0;  // 0 = all
  int batch = 0;   // 0 = all at once (as the course's scripts did)
  RunFlags run;
  std::string data, labels;
  std::string input, output;
  bool probabilities = false;
  bool layer_times = false;
  int reps = 1, warmup = 0;
  const CLI::App* cmd = nullptr;

  void add_to(CLI::App& app);
  void validate(BackendKind backend) const;
};

int run_infer(const InferOptions& o);

}  // namespace bs
