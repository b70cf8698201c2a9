// png_write.cpp — libpng into memory (png_set_write_fn), errors through setjmp/longjmp as libpng expects.
#include "formats/png_write.h"

#include <png.h>

#include <csetjmp>

#include "base/errors.h"

namespace diffscope {

namespace {

void append_bytes(png_structp png, png_bytep data, png_size_t n) {
  static_cast<std::string*>(png_get_io_ptr(png))->append(reinterpret_cast<const char*>(data), n);
}
void no_flush(png_structp) {}

// Every object with a destructor lives in encode_png's frame, before setjmp, so longjmp skips none.
bool encode(png_structp png, png_infop info, std::string* out, int w, int h, int channels,
            std::vector<png_text>& texts, std::vector<png_bytep>& rows) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_set_write_fn(png, out, append_bytes, no_flush);
  png_set_IHDR(png, info, png_uint_32(w), png_uint_32(h), 8, channels == 4 ? PNG_COLOR_TYPE_RGBA : PNG_COLOR_TYPE_RGB,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  if (!texts.empty()) png_set_text(png, info, texts.data(), int(texts.size()));
  png_write_info(png, info);
  png_write_image(png, rows.data());
  png_write_end(png, info);
  return true;
}

}  // namespace

std::string encode_png(const uint8_t* px, int w, int h, int channels,
                       const std::vector<std::pair<std::string, std::string>>& itxt, const std::string& what) {
  if (w < 1 || h < 1 || (channels != 3 && channels != 4) || !px)
    throw InvalidInput(what + ": cannot encode a " + std::to_string(w) + "x" + std::to_string(h) + "x" +
                       std::to_string(channels) + " PNG");
  for (const auto& t : itxt)
    if (t.first.empty() || t.first.size() > 79) throw InvalidInput(what + ": PNG text keyword '" + t.first + "' is not 1-79 characters");
  std::string out;
  std::vector<png_bytep> rows(static_cast<size_t>(h));
  for (int y = 0; y < h; ++y) rows[size_t(y)] = const_cast<png_bytep>(px + size_t(y) * w * channels);
  std::vector<png_text> texts(itxt.size());
  for (size_t i = 0; i < itxt.size(); ++i) {
    texts[i] = {};
    texts[i].compression = PNG_ITXT_COMPRESSION_NONE;
    texts[i].key = const_cast<char*>(itxt[i].first.c_str());
    texts[i].text = const_cast<char*>(itxt[i].second.c_str());
    texts[i].itxt_length = itxt[i].second.size();
    texts[i].lang = nullptr;
    texts[i].lang_key = nullptr;
  }
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  const bool ok = info && encode(png, info, &out, w, h, channels, texts, rows);
  png_destroy_write_struct(&png, info ? &info : nullptr);
  if (!ok) throw InvalidInput(what + ": PNG encoding failed (libpng)");
  return out;
}

}  // namespace diffscope
