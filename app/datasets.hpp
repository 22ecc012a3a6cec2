// The shipped test sets (data/datasets.json) and loading images + labels from IDX files.
#pragma once
#include <string>
#include <vector>

#include "kernels/model.hpp"

namespace bs {

std::string data_dir();  // $BATCHSCOPE_DATA, else the source tree's data/

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

}  // namespace bs
