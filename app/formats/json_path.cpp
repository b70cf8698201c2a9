// json_path.cpp — lossless paths in JSON: UTF-8 validation, \xHH escaping, base64 (RFC 4648).
#include "formats/json_path.h"

#include <cstdint>
#include <cstdio>

#include "base/errors.h"

namespace diffscope {
namespace {

constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Length of the well-formed UTF-8 sequence starting at s[i] (RFC 3629 table 3.7), or 0 if there is none.
size_t utf8_sequence_length(const std::string& s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const size_t n = s.size() - i;
  const unsigned char c = b(i);
  auto cont = [&](size_t k, unsigned char lo = 0x80, unsigned char hi = 0xBF) {
    return k < s.size() && b(k) >= lo && b(k) <= hi;
  };
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return n >= 2 && cont(i + 1) ? 2 : 0;
  if (c == 0xE0) return cont(i + 1, 0xA0) && cont(i + 2) ? 3 : 0;
  if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) return cont(i + 1) && cont(i + 2) ? 3 : 0;
  if (c == 0xED) return cont(i + 1, 0x80, 0x9F) && cont(i + 2) ? 3 : 0;  // no surrogates
  if (c == 0xF0) return cont(i + 1, 0x90) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  if (c >= 0xF1 && c <= 0xF3) return cont(i + 1) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  if (c == 0xF4) return cont(i + 1, 0x80, 0x8F) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  return 0;
}

}  // namespace

bool is_valid_utf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_sequence_length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string escape_invalid_utf8(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_sequence_length(s, i);
    if (n == 0) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", static_cast<unsigned char>(s[i]));
      out += buf;
      ++i;
    } else {
      out.append(s, i, n);
      i += n;
    }
  }
  return out;
}

std::string base64_encode(const std::string& bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t v = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) v |= static_cast<unsigned char>(bytes[i + 2]);
    out += kB64[(v >> 18) & 63];
    out += kB64[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? kB64[(v >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kB64[v & 63] : '=';
  }
  return out;
}

std::string base64_decode(const std::string& text) {
  auto value = [&](char c) -> int {
    for (int k = 0; k < 64; ++k)
      if (kB64[k] == c) return k;
    throw InvalidInput("base64 text '" + text.substr(0, 40) + "' holds the character '" + std::string(1, c) +
                       "' (valid: A-Z a-z 0-9 + / and = padding)");
  };
  if (text.size() % 4 != 0)
    throw InvalidInput("base64 text of " + std::to_string(text.size()) + " characters (valid: a multiple of 4)");
  std::string out;
  for (size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    const int pad = last ? (text[i + 3] == '=') + (text[i + 2] == '=') : 0;
    if (pad == 1 && text[i + 2] == '=') throw InvalidInput("base64 text has '=' before its end");
    uint32_t v = (value(text[i]) << 18) | (value(text[i + 1]) << 12);
    if (pad < 2) v |= value(text[i + 2]) << 6;
    if (pad < 1) v |= value(text[i + 3]);
    out += static_cast<char>((v >> 16) & 0xff);
    if (pad < 2) out += static_cast<char>((v >> 8) & 0xff);
    if (pad < 1) out += static_cast<char>(v & 0xff);
  }
  return out;
}

void put_path(nlohmann::json& obj, const std::string& key, const std::string& path) {
  if (is_valid_utf8(path)) {
    obj[key] = path;
    if (obj.is_object()) obj.erase(key + "_base64");
    return;
  }
  obj[key] = escape_invalid_utf8(path);
  obj[key + "_base64"] = base64_encode(path);
}

bool get_path(const nlohmann::json& obj, const std::string& key, std::string* out) {
  if (!obj.is_object()) return false;
  const auto b = obj.find(key + "_base64");
  if (b != obj.end() && b->is_string()) {
    try {
      *out = base64_decode(b->get<std::string>());
      return true;
    } catch (const InvalidInput&) {
    }
  }
  const auto p = obj.find(key);
  if (p == obj.end() || !p->is_string()) return false;
  *out = p->get<std::string>();
  return true;
}

nlohmann::json path_object(const std::string& key, const std::string& path) {
  nlohmann::json j = nlohmann::json::object();
  put_path(j, key, path);
  return j;
}

}  // namespace diffscope
