// The zoo: AlexNet-scale networks in their published shapes, written as model folders with seeded He-initialised
// weights (synthetic: they measure speed, not accuracy), so that sweep, tune, plan and report run on each.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "weights_tools/model_writer.hpp"

namespace bs {

struct ZooEntry {
  const char* name;
  const char* source;  // where the shapes come from
};
const std::vector<ZooEntry>& zoo();           // every network synthesize knows, in a fixed order
std::string zoo_names();                      // "alexnet, alexnet-torchvision, ..."

// The folder of network `name` (a zoo() name; anything else a usage error naming --model). With weights = false the
// tensors are left out (model.json alone, for counting); parameters() is then still exact.
struct ZooModel {
  ModelFolder folder;
  int64_t parameters = 0;  // weights and biases
};
ZooModel synthesize_zoo(const std::string& name, uint64_t seed, bool weights = true);

}  // namespace bs
