// `batchscope classify`: photos through an ImageNet model, top-5 classes with names and probabilities.
// Decoding and resizing use OpenCV (core, imgproc, imgcodecs), optional at build time.
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "app/cli/run_flags.hpp"
#include "kernels/model/model.hpp"

namespace bs {

struct ClassifyOptions {
  std::string model_dir, labels;
  RunFlags run;
  std::vector<std::string> images;
  int top = 5;
  const CLI::App* cmd = nullptr;
  void add_to(CLI::App& app);
};

// The model's input (C, H, W) for one photo, following model.preprocess; throws naming the file when it
// cannot be read as an image. Throws when built without OpenCV.
std::vector<float> load_photo(const std::string& path, const Model& m);
bool have_opencv();

int run_classify(const ClassifyOptions& o);

}  // namespace bs
