#include "weights_tools/json_read.hpp"

#include "weights_tools/error.hpp"
#include "weights_tools/limits.hpp"

namespace bs {

nlohmann::json parse_json(const std::string& text, const std::string& where) {
  using json = nlohmann::json;
  const json::parser_callback_t depth_limit = [&](int depth, json::parse_event_t event, json&) {
    if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) && depth >= kMaxJsonDepth)
      fail(where, "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    return true;
  };
  try {
    return json::parse(text, depth_limit);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for numbers such as 1e309
    fail(where, "invalid JSON (" + json_error_text(e) + ")");
  }
}

std::string json_error_text(const nlohmann::json::exception& e) {
  const std::string what = e.what();
  const auto at = what.find("] ");
  return at == std::string::npos ? what : what.substr(at + 2);
}

std::string json_excerpt(const nlohmann::json& v, size_t max_chars) {
  // dump() of a large value is large: cut it. Depth is bounded by parse_json, so dump() cannot recurse far.
  std::string s = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (s.size() <= max_chars) return s;
  const size_t total = s.size();
  s.resize(max_chars);
  return s + "... (" + std::to_string(total) + " characters)";
}

}  // namespace bs
