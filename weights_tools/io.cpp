#include "weights_tools/io.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "weights_tools/error.hpp"

namespace bs {

std::vector<uint8_t> read_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail(path, "is a directory, expected a file");
  // A device or a pipe (/dev/zero, /dev/stdin) would block or never end: only regular files are read.
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    fail(path, "is not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, std::string("cannot open (") + std::strerror(errno) + ")");
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  in.seekg(0, std::ios::beg);
  if (size < 0) fail(path, "cannot tell its size");
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  if (size > 0 && !in.read(reinterpret_cast<char*>(bytes.data()), size)) fail(path, "read error");
  return bytes;
}

void atomic_write(const std::string& path, const std::function<void(const std::string&)>& write) {
  namespace fs = std::filesystem;
  fs::path target(path);
  fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) fail(path, "folder " + dir.string() + " does not exist");
  std::random_device rd;
  fs::path tmp = dir / ("." + target.filename().string() + ".tmp" + std::to_string(rd() % 1000000));
  try {
    write(tmp.string());
    fs::rename(tmp, target, ec);
    if (ec) fail(path, "cannot rename temporary file into place (" + ec.message() + ")");
  } catch (...) {
    fs::remove(tmp, ec);
    throw;
  }
}

void atomic_write_bytes(const std::string& path, const void* data, size_t size) {
  atomic_write(path, [&](const std::string& tmp) {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) fail(path, std::string("cannot write (") + std::strerror(errno) + ")");
    out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
    out.flush();
    if (!out) fail(path, "write error (disk full?)");
  });
}

}  // namespace bs
