#include "app/exec/install_paths.hpp"

#include <cstdlib>
#include <filesystem>

namespace bs {

std::string source_dir() {
  const char* s = std::getenv("BATCHSCOPE_SOURCE_DIR");
  return s && *s ? s : BATCHSCOPE_SOURCE_DIR;
}

std::string installed_share_dir() {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path exe = fs::canonical("/proc/self/exe", ec);
  if (ec || exe.parent_path().filename() != "bin") return "";
  const fs::path share = exe.parent_path().parent_path() / "share" / "batchscope";
  return fs::is_directory(share, ec) ? share.string() : "";
}

std::string plots_dir() {
  const char* s = std::getenv("BATCHSCOPE_SOURCE_DIR");
  const std::string share = s && *s ? "" : installed_share_dir();
  return share.empty() ? source_dir() + "/plots" : share + "/plots";
}

}  // namespace bs
