// json_path.h — file paths in JSON, losslessly (SEMANTICS §6 "Paths in JSON"). A Linux file name is any
// byte string; JSON strings must be UTF-8. A path that is valid UTF-8 is written as the plain string under
// `key`. Otherwise `key` holds a readable form (each byte that is not part of valid UTF-8 written as the
// four characters \xHH) and `key + "_base64"` holds the raw bytes in base64 (RFC 4648 §4), which is what a
// reader uses to find the file again.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace diffscope {

// True when `s` is well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, at most U+10FFFF).
bool is_valid_utf8(const std::string& s);
// `s` with every byte that is not part of well-formed UTF-8 replaced by the text \xHH (upper-case hex).
std::string escape_invalid_utf8(const std::string& s);

// RFC 4648 §4 base64 with padding. decode throws InvalidInput for characters outside the alphabet or a bad
// length.
std::string base64_encode(const std::string& bytes);
std::string base64_decode(const std::string& text);

// Writes `path` into object `obj` under `key` as described above (removes a stale `key_base64`).
void put_path(nlohmann::json& obj, const std::string& key, const std::string& path);
// Reads a path written by put_path: the bytes of `key_base64` when present and decodable, else the string
// under `key`. Returns false (and leaves `out`) when neither is a string.
bool get_path(const nlohmann::json& obj, const std::string& key, std::string* out);
// A JSON object {key: path} (plus key_base64 when needed), for building sidecars inline.
nlohmann::json path_object(const std::string& key, const std::string& path);

}  // namespace diffscope
