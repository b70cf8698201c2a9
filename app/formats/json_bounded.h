// json_bounded.h — JSON text parsed with a nesting limit. nlohmann::json copies and walks nested values
// recursively, so a hostile file of 100,000 nested objects overflows the stack (a sidecar given to --config or
// --restore crashed with SIGSEGV); every file we read is at most a few levels deep.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace diffscope {

constexpr int kMaxJsonDepth = 64;  // deeper than any file diffscope writes or reads (sidecars: 3 levels)

// Parses `text`; throws nlohmann::json::exception for invalid JSON and std::runtime_error("nested deeper
// than 64 levels") past the limit, before the deep value is built.
nlohmann::json parse_json_bounded(const std::string& text, int max_depth = kMaxJsonDepth);

}  // namespace diffscope
