// Writes a model folder (model.json plus one .npy per tensor) all-or-nothing: everything goes to a
// temporary sibling folder, which is validated by loading it back and only then renamed into place.
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "weights_tools/npz.hpp"  // NamedArray

namespace bs {

struct ModelFolder {
  nlohmann::ordered_json model;     // the model.json document
  std::vector<NamedArray> tensors;  // written as <name>.npy
};

// Fails (naming `out`) where write_model_folder would refuse `out`: to call before the expensive part of a command.
void check_model_folder_target(const std::string& out);

// `validate` gets the temporary folder's path and throws if the model does not load.
// An existing `out` folder is replaced only if it holds a model.json (is a model folder) or is empty.
void write_model_folder(const std::string& out, const ModelFolder& folder,
                        const std::function<void(const std::string&)>& validate);

}  // namespace bs
