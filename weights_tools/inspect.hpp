// `batchscope-weights inspect`: one line per tensor with name, shape, dtype, min, max and mean.
#pragma once
#include <ostream>
#include <string>

namespace bs {

// Accepts .npy, .npz and MXNet .params (chosen by content, not by name). Throws on unreadable files.
void inspect_file(const std::string& path, std::ostream& out);

}  // namespace bs
