// bvlc_alexnet.npy: the TensorFlow port of the BVLC Caffe AlexNet weights that circulates as a pickled
// dict {layer: [weights, biases]} saved with np.save. Conv weights are (H, W, I/groups, O), FC weights
// (in, out); fc6's 9216 inputs are reported to be in TensorFlow's (H, W, C) flatten order.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "weights_tools/array.hpp"
#include "weights_tools/model_writer.hpp"

namespace bs {

// What an AlexNet model folder says when its .npy files are missing (model.json "missing_weights").
inline constexpr const char* kAlexnetMissingWeights =
    "make synthetic ones with scripts/alexnet_weights.sh (seed 1, from any directory), or import the real ones with "
    "scripts/alexnet_weights.sh path/to/bvlc_alexnet.npy";

struct BvlcFile {
  std::vector<std::pair<std::string, std::vector<Array>>> layers;  // in file order
  std::string synthetic_note;  // non-empty for files written by synthesize_alexnet
};

// Reads the .npy (header with dtype '|O', then a pickle; a bare pickle is accepted too).
BvlcFile read_bvlc(const std::string& path);
BvlcFile parse_bvlc(const std::vector<uint8_t>& bytes, const std::string& path);  // the same from memory
void write_bvlc(const std::string& path, const BvlcFile& f);  // atomic; .npy header + protocol-2 pickle

struct BvlcImportOptions {
  std::string path, out_dir, name = "alexnet";
  int input_size = 227;
  bool fc6_hwc = true;        // the order fc6's inputs are in, in the file: (H, W, C) as TensorFlow flattens (--fc6-flatten hwc), else chw
  bool conv1_same = false;    // conv1 padded as TensorFlow's 'SAME' (57x57, --conv1-padding same), else Caffe's deploy (55x55, valid)
  double lrn_alpha = 1e-4;
  bool lrn_caffe = true;      // --lrn-convention caffe: alpha is divided by local_size in the formula; tensorflow: it is not
  int lrn_size = 5;
  double lrn_beta = 0.75, lrn_k = 1.0;
};

// Rearranges every tensor to batchscope's layouts (OIHW, (out, in), fc6 inputs in (C, H, W) order) and
// builds the model.json document: Caffe's AlexNet structure, channel counts and groups read off the shapes.
ModelFolder convert_bvlc(const BvlcImportOptions& o);
ModelFolder convert_bvlc(const BvlcFile& f, const BvlcImportOptions& o);  // o.path only names the file in errors

// Deterministic He-initialised AlexNet weights in the bvlc_alexnet.npy format (HWIO, (in, out), fc6 in
// (H, W, C) input order), with a "__batchscope__" entry marking them synthetic.
BvlcFile synthesize_alexnet(uint64_t seed);

}  // namespace bs
