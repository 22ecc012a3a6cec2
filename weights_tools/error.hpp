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

// A mistake in how a command was called (a flag's value, a combination of flags, a flag the command does not take),
// as opposed to a file or a device that failed: the commands exit with status 2 for these, 1 for the rest.
class UsageError : public Error {
 public:
  using Error::Error;
};

// Throws Error("<where>: <what>"). A message that quotes a hostile file at length (a 5000-character layer name,
// a number of 2000 digits) is cut in the middle to 500 characters: one line that still names both ends.
inline std::string one_line(const std::string& where, const std::string& what) {
  std::string msg = where + ": " + what;
  constexpr size_t kMax = 500;
  if (msg.size() > kMax) msg = msg.substr(0, kMax - 160) + " [...] " + msg.substr(msg.size() - 153);
  for (char& c : msg)
    if (c == '\n' || c == '\r') c = ' ';  // one line, whatever the file held
  return msg;
}
[[noreturn]] inline void fail(const std::string& where, const std::string& what) { throw Error(one_line(where, what)); }
// The same for a mistake in the command line (UsageError): `where` is the flag.
[[noreturn]] inline void usage_fail(const std::string& flag, const std::string& what) { throw UsageError(one_line(flag, what)); }

}  // namespace bs
