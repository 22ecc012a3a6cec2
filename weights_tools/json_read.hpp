// JSON documents read from files (model.json, MXNet symbols, tuning tables, datasets.json): parsed with a
// nesting limit, so that a hostile file cannot exhaust the stack of code that walks or prints it, and quoted
// in error messages by a short excerpt, never whole.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace bs {

// Parses `text`; invalid JSON or nesting deeper than kMaxJsonDepth is an Error "<where>: ...".
nlohmann::json parse_json(const std::string& text, const std::string& where);

// A nlohmann exception's message without its "[json.exception.type_error.302] " prefix.
std::string json_error_text(const nlohmann::json::exception& e);

// v.dump(), cut to at most `max_chars` characters ("[1, 2, 3, ... (1200 characters)]").
std::string json_excerpt(const nlohmann::json& v, size_t max_chars = 80);

}  // namespace bs
