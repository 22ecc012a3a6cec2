#include "app/install_paths.hpp"

#include <cstdlib>
#include <filesystem>

namespace bs {

std::string installed_share_dir() {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path exe = fs::canonical("/proc/self/exe", ec);
  if (ec || exe.parent_path().filename() != "bin") return "";
  const fs::path share = exe.parent_path().parent_path() / "share" / "batchscope";
  return fs::is_directory(share, ec) ? share.string() : "";
}

std::string plots_dir() {
  if (const char* s = std::getenv("BATCHSCOPE_SOURCE_DIR"); s && *s) return std::string(s) + "/plots";
  if (const std::string share = installed_share_dir(); !share.empty()) return share + "/plots";
  return std::string(BATCHSCOPE_SOURCE_DIR) + "/plots";
}

}  // namespace bs
