// png_text.cpp — libpng's reader from a file, errors through setjmp/longjmp as libpng expects.
#include "core/png_text.h"

#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>

#include "core/errors.h"

namespace diffscope {

namespace {

// Reads every chunk up to IEND; fills `out` from the chunk `keyword`. No object with a destructor in this
// frame, so longjmp skips none.
bool read_text(png_structp png, png_infop info, png_infop end, FILE* f, const char* keyword, std::string* out,
               bool* found) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_init_io(png, f);
  png_read_png(png, info, PNG_TRANSFORM_IDENTITY, nullptr);
  for (png_infop i : {info, end}) {
    png_textp t = nullptr;
    const int n = png_get_text(png, i, &t, nullptr);
    for (int k = 0; k < n && !*found; ++k) {
      if (std::strcmp(t[k].key, keyword) != 0) continue;
      const size_t len = t[k].compression >= PNG_ITXT_COMPRESSION_NONE ? t[k].itxt_length : t[k].text_length;
      out->assign(t[k].text, len);
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
  bool found = false;
  const bool ok = info && end && read_text(png, info, end, f, keyword.c_str(), &text, &found);
  png_destroy_read_struct(&png, info ? &info : nullptr, end ? &end : nullptr);
  std::fclose(f);
  if (!ok) throw InvalidInput(arg + " " + path + ": a damaged PNG (libpng could not read it)");
  if (!found) return std::nullopt;
  return text;
}

}  // namespace diffscope
