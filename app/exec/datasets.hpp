// The shipped test sets (data/datasets.json) and loading images + labels from IDX files.
#pragma once
#include <string>
#include <vector>

#include "kernels/model/model.hpp"

namespace bs {

std::string data_dir();  // $BATCHSCOPE_DATA, else an installed PREFIX/share/batchscope/data, else the source tree's data/ (install_paths.hpp)

// --model's argument as a model folder: the folder itself, its model.json, or the name of a shipped model ("ece408",
// "alexnet": data_dir()/models/NAME, from any directory). Fails naming --model, with the shipped names, otherwise.
std::string resolve_model_dir(const std::string& arg);
// resolve_model_dir, then load_model.
Model load_model_arg(const std::string& arg);

struct LabelledImages {
  std::string images_path, labels_path;
  int count = 0;
  Shape shape;                // per image (C, H, W)
  std::vector<float> images;  // (N, C, H, W), raw pixel values 0..255
  std::vector<int> labels;    // (N,)
};

// Finds the shipped test set whose image shape equals `input`; throws naming the shapes on offer.
void pick_shipped_dataset(const Shape& input, std::string& images, std::string& labels);
// Loads the first `count` images and labels (count 0 = all); `count_flag` names the flag in errors.
LabelledImages load_labelled(const std::string& images, const std::string& labels, int count,
                             const std::string& count_flag);

// Images to draw batches from: the shipped test set matching the model's input (with its labels), else
// deterministic random 8-bit images (uniform whole numbers 0..255, seed 42), at least `min_count` of them.
struct ImagePool {
  std::vector<float> images;  // (count, C, H, W)
  std::vector<int> labels;    // empty for synthetic images
  int count = 0;
  std::string source;
};
ImagePool make_image_pool(const Model& m, int min_count);
// Copies n images starting at `offset` (wrapping around the pool) to dst.
void fill_from_pool(const ImagePool& pool, const Model& m, int n, int offset, float* dst);

}  // namespace bs
