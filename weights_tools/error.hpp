// One exception type for every user-facing failure in batchscope: a message that names the file, flag or
// layer, what was expected and what was found. main() catches it, prints one line and exits non-zero.
#pragma once
#include <stdexcept>
#include <string>

namespace bs {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws Error("<where>: <what>").
[[noreturn]] inline void fail(const std::string& where, const std::string& what) {
  throw Error(where + ": " + what);
}

}  // namespace bs
