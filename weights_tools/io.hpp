// Whole-file reads and all-or-nothing writes (temporary name in the same folder, then rename).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace bs {

// Reads the whole file; throws "<path>: cannot open (...)" when it can't.
std::vector<uint8_t> read_file(const std::string& path);

// Writes via a temporary file beside `path`, renamed into place only after `write` succeeded and the
// stream was flushed; on any failure the temporary is removed and `path` is left untouched.
void atomic_write(const std::string& path, const std::function<void(const std::string& tmp_path)>& write);
void atomic_write_bytes(const std::string& path, const void* data, size_t size);

}  // namespace bs
