// sha256.h — SHA-256 (FIPS 180-4) of a file, for the export sidecar's model checksum (SEMANTICS §6).
#pragma once
#include <string>

namespace diffscope {
// Lowercase hex digest of `data`.
std::string sha256_hex(const std::string& data);
// Digest of a file's bytes; "" if it cannot be read.
std::string sha256_file(const std::string& path);
}  // namespace diffscope
