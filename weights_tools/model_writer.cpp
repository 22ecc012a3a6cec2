#include "weights_tools/model_writer.hpp"

#include <filesystem>
#include <fstream>
#include <random>

#include "weights_tools/error.hpp"
#include "weights_tools/npy.hpp"

namespace bs {

void check_model_folder_target(const std::string& out) {
  namespace fs = std::filesystem;
  const fs::path target(out);
  std::error_code ec;
  if (fs::exists(target, ec)) {
    if (!fs::is_directory(target, ec)) fail(out, "exists and is not a folder");
    if (!fs::exists(target / "model.json", ec) && !fs::is_empty(target, ec))
      fail(out, "exists, is not empty and holds no model.json: refusing to replace it");
  }
  const fs::path parent = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  if (!fs::is_directory(parent, ec)) fail(out, "parent folder " + parent.string() + " does not exist");
}

void write_model_folder(const std::string& out, const ModelFolder& folder,
                        const std::function<void(const std::string&)>& validate) {
  namespace fs = std::filesystem;
  check_model_folder_target(out);
  const fs::path target(out);
  std::error_code ec;
  const fs::path parent = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  fs::path tmp = parent / ("." + target.filename().string() + ".tmp" + std::to_string(std::random_device{}() % 1000000));
  try {
    fs::create_directory(tmp, ec);
    if (ec) fail(out, "cannot create " + tmp.string() + " (" + ec.message() + ")");
    for (const NamedArray& t : folder.tensors) write_npy((tmp / (t.name + ".npy")).string(), t.array);
    {
      std::ofstream js(tmp / "model.json");
      js << folder.model.dump(2) << "\n";
      if (!js) fail(out, "cannot write model.json");
    }
    try {
      validate(tmp.string());
    } catch (const Error& e) {  // report the folder the user named, not the temporary one
      std::string msg = e.what();
      for (size_t at; (at = msg.find(tmp.string())) != std::string::npos;) msg.replace(at, tmp.string().size(), out);
      throw Error(msg);
    }
    if (fs::exists(target, ec)) fs::remove_all(target, ec);
    fs::rename(tmp, target, ec);
    if (ec) fail(out, "cannot move the new model folder into place (" + ec.message() + ")");
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
}

}  // namespace bs
