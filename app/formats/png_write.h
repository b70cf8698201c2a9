// png_write.h — the product's one PNG encoder (libpng, Debian's libpng-dev): 8-bit RGB or RGBA rows, with
// optional iTXt text chunks (PNG 1.2 spec §4.2.3.3: international text, UTF-8, uncompressed here so any reader
// sees it), e.g. the sidecar JSON under the keyword `diffscope` (SEMANTICS §6).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace diffscope {

// Encodes `h` rows of `w` pixels, top row first, `channels` (3 RGB or 4 RGBA) bytes each, as a PNG file's
// bytes; each (keyword, text) pair becomes one iTXt chunk (keyword: 1-79 Latin-1 characters).
// Throws InvalidInput naming `what` if libpng refuses (bad size, channels or keyword).
std::string encode_png(const uint8_t* px, int w, int h, int channels,
                       const std::vector<std::pair<std::string, std::string>>& itxt, const std::string& what);

}  // namespace diffscope
