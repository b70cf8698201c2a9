// png_text.cpp — libpng's reader from a file (png_get_text: tEXt, zTXt and iTXt, compressed or not, before or
// after IDAT), errors through setjmp/longjmp as libpng expects.
#include "formats/png_text.h"

#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>

#include "base/errors.h"

namespace diffscope {

std::string latin1_to_utf8(const std::string& latin1) {
  std::string u;
  u.reserve(latin1.size());
  for (const char ch : latin1) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c < 0x80) {
      u += ch;
    } else {  // U+0080..U+00FF: two bytes, 110000xx 10xxxxxx
      u += static_cast<char>(0xC0 | (c >> 6));
      u += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  return u;
}

namespace {

// Reads every chunk up to IEND; fills `out` from the chunk `keyword`. No object with a destructor in this
// frame, so longjmp skips none.
bool read_text(png_structp png, png_infop info, png_infop end, FILE* f, const char* keyword, std::string* out,
               bool* found, bool* latin1) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_init_io(png, f);
  png_read_png(png, info, PNG_TRANSFORM_IDENTITY, nullptr);
  for (png_infop i : {info, end}) {
    png_textp t = nullptr;
    const int n = png_get_text(png, i, &t, nullptr);
    for (int k = 0; k < n && !*found; ++k) {
      if (std::strcmp(t[k].key, keyword) != 0) continue;
      *latin1 = t[k].compression < PNG_ITXT_COMPRESSION_NONE;  // tEXt, zTXt: ISO 8859-1; iTXt: UTF-8
      out->assign(t[k].text, *latin1 ? t[k].text_length : t[k].itxt_length);
      *found = true;
    }
  }
  return true;
}

}  // namespace

std::optional<std::string> read_png_text(const std::string& path, const std::string& keyword, const std::string& arg) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw InvalidInput(arg + " " + path + ": cannot read (" + std::strerror(errno) + ")");
  unsigned char sig[8] = {};
  const bool is_png = std::fread(sig, 1, 8, f) == 8 && png_sig_cmp(sig, 0, 8) == 0;
  std::rewind(f);
  if (!is_png) {
    std::fclose(f);
    throw InvalidInput(arg + " " + path + ": not a PNG file");
  }
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  png_infop end = png ? png_create_info_struct(png) : nullptr;
  std::string text;
  bool found = false, latin1 = false;
  const bool ok = info && end && read_text(png, info, end, f, keyword.c_str(), &text, &found, &latin1);
  png_destroy_read_struct(&png, info ? &info : nullptr, end ? &end : nullptr);
  std::fclose(f);
  if (!ok) throw InvalidInput(arg + " " + path + ": a damaged PNG (libpng could not read it)");
  if (!found) return std::nullopt;
  return latin1 ? latin1_to_utf8(text) : text;
}

}  // namespace diffscope
