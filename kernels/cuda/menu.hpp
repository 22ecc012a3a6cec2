// Parsing a kernel menu's version from a flag: "6", "v6", or the version's name; "auto" (or "0") for the
// per-layer choice. Anything else is an error naming the flag and listing the menu.
#pragma once
#include <string>
#include <vector>

#include "weights_tools/error.hpp"

namespace bs::cuda {

template <class Version>  // has .number and .name
int parse_version(const std::string& text, const std::vector<Version>& menu, const std::string& flag, int auto_value) {
  if (text == "auto" || text == "0") return auto_value;
  const std::string t = !text.empty() && (text[0] == 'v' || text[0] == 'V') ? text.substr(1) : text;
  std::string all;
  for (const Version& v : menu) {
    if (t == std::to_string(v.number) || text == v.name) return v.number;
    all += ", " + std::to_string(v.number) + " " + v.name;
  }
  fail(flag, "unknown variant '" + text + "' (choose auto or one of:" + all.substr(1) + ")");
}

}  // namespace bs::cuda
